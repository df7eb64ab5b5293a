// The timeline: an SVG drawn from the embedded report. Time runs left to
// right from process start to exit; each watched thread has a row; each hang
// is a bar coloured by severity that links to its call tree.

import HangWatchModel

enum HTMLTimelineScript {
    static let source = #"""
    const ROLE_LABELS = { 'main-thread': 'main thread', 'main-queue': 'main queue', 'loop': 'event loop',
                          'job': 'pool thread: its long jobs', 'cooperative-pool': 'every pool thread taken' };

    /// One row per thread that hung, the main thread first; the launch bar goes on the main thread's row.
    function timelineRows(report) {
      const rows = new Map();
      const pid = report.process.pid;
      const rowFor = thread => {
        // A lane per thread and role: a pool thread's jobs never share one with anything else.
        const key = thread.role === 'job' || thread.role === 'cooperative-pool' ? `${thread.role}:${thread.tid}` : thread.tid;
        if (!rows.has(key)) rows.set(key, { tid: thread.tid, name: thread.name, role: thread.role, hangs: [], launch: null });
        return rows.get(key);
      };
      const mainThread = { tid: pid, name: basename(report.process.executable), role: 'main-thread' };
      for (const hang of report.hangs) rowFor(hang.thread).hangs.push(hang);
      if (report.launch) rowFor(mainThread).launch = report.launch;
      if (rows.size === 0) rowFor(mainThread);
      return [...rows.values()].sort((a, b) => (b.tid === pid) - (a.tid === pid) || a.tid - b.tid);
    }

    /// A round tick spacing (1, 2 or 5 times a power of ten) giving labels about 110 px apart.
    function tickStep(endMs, pixels) {
      const target = endMs / Math.max(2, Math.floor(pixels / 110));
      const power = Math.pow(10, Math.floor(Math.log10(target)));
      for (const factor of [1, 2, 5]) if (factor * power >= target) return factor * power;
      return 10 * power;
    }

    function tickLabel(t, step) {
      if (t === 0) return '0';
      if (step >= 1000) return fixed(t / 1000, 0) + ' s';
      if (step >= 100) return fixed(t / 1000, 1) + ' s';
      return fixed(t, 0) + ' ms';
    }

    function drawTimeline(report) {
      const host = document.getElementById('timeline');
      const LABEL_W = 190, RIGHT_PAD = 84, AXIS_H = 24, ROW_H = 42, BAR_H = 24;
      const width = Math.max(640, Math.floor(host.clientWidth));
      const rows = timelineRows(report);
      const wallMs = Number(report.process.wallMs) || 0;
      const ends = report.hangs.map(hang => hang.startMs + hang.durationMs);
      const endMs = Math.max(1, wallMs, report.launch ? report.launch.durationMs : 0, ...ends);
      const plotW = width - LABEL_W - RIGHT_PAD;
      const x = t => LABEL_W + Math.max(0, Math.min(1, t / endMs)) * plotW;
      const height = AXIS_H + rows.length * ROW_H + 2;

      const svg = svgEl('svg', { width: width, height: height, viewBox: `0 0 ${width} ${height}`, class: 'timeline-svg',
                                 role: 'img', 'aria-label': 'timeline of hangs from process start to exit' });
      svg.appendChild(stripePattern());
      rows.forEach((row, index) => {
        const top = AXIS_H + index * ROW_H;
        svg.appendChild(svgEl('rect', { x: 0, y: top, width: width, height: ROW_H, class: index % 2 ? 'row-bg odd' : 'row-bg' }));
        const name = svgEl('text', { x: 10, y: top + 18, class: 'row-name' }, truncate(row.name, 24));
        name.appendChild(svgEl('title', {}, row.name));
        svg.appendChild(name);
        svg.appendChild(svgEl('text', { x: 10, y: top + 33, class: 'row-detail' }, `tid ${row.tid} · ${ROLE_LABELS[row.role] || row.role}`));
      });

      const step = tickStep(endMs, plotW);
      for (let t = 0; t <= endMs + 1e-6; t += step) {
        svg.appendChild(svgEl('line', { x1: x(t), x2: x(t), y1: AXIS_H - 4, y2: height, class: 'grid' }));
        svg.appendChild(svgEl('text', { x: x(t), y: 14, class: 'tick', 'text-anchor': t === 0 ? 'start' : 'middle' }, tickLabel(t, step)));
      }
      if (wallMs > 0) {
        svg.appendChild(svgEl('line', { x1: x(wallMs), x2: x(wallMs), y1: AXIS_H, y2: height, class: 'exit-line' }));
        svg.appendChild(svgEl('text', { x: x(wallMs) + 5, y: AXIS_H + 14, class: 'exit-label' }, 'exit ' + fixed(wallMs / 1000, 2) + ' s'));
      }

      rows.forEach((row, index) => {
        const barY = AXIS_H + index * ROW_H + (ROW_H - BAR_H) / 2;
        svg.appendChild(svgEl('line', { x1: x(0), x2: x(wallMs), y1: barY + BAR_H / 2, y2: barY + BAR_H / 2, class: 'alive' }));
        if (row.launch) svg.appendChild(launchBar(row.launch, x, barY, BAR_H));
        for (const hang of row.hangs) svg.appendChild(hangBar(hang, x, barY, BAR_H));
      });
      host.replaceChildren(svg);
    }

    function stripePattern() {
      const defs = svgEl('defs', {});
      const pattern = svgEl('pattern', { id: 'in-progress-stripes', width: 6, height: 6, patternUnits: 'userSpaceOnUse',
                                         patternTransform: 'rotate(45)' });
      pattern.appendChild(svgEl('rect', { width: 3, height: 6, fill: 'rgba(255,255,255,0.5)' }));
      defs.appendChild(pattern);
      return defs;
    }

    function launchBar(launch, x, y, h) {
      const group = svgEl('g', { class: 'launch' });
      const width = Math.max(2, x(launch.durationMs) - x(0));
      group.appendChild(svgEl('rect', { x: x(0), y: y + 3, width: width, height: h - 6, rx: 2, class: 'launch-bar' }));
      if (width > 70) group.appendChild(svgEl('text', { x: x(0) + 6, y: y + h / 2 + 4, class: 'launch-label' }, 'launch ' + ms(launch.durationMs)));
      const lines = [launch.parked ? 'process start until the main thread parked outside any loop'
                       : launch.reachedFirstWait ? 'process start to the loop\'s first wait' : 'the loop never waited: the whole run',
                     plural(launch.sampleCount, 'sample')];
      group.addEventListener('mousemove', event => showTooltip(event, 'Launch · ' + ms(launch.durationMs), lines));
      group.addEventListener('mouseleave', hideTooltip);
      return group;
    }

    function hangBar(hang, x, y, h) {
      const level = severity(hang);
      const target = hasFlameGraph(hang) ? 'hang-' + hang.id : 'hang-row-' + hang.id;
      const link = svgEl('a', { href: '#' + target, class: 'hang-link' });
      const left = x(hang.startMs);
      const width = Math.max(3, x(hang.startMs + hang.durationMs) - left);
      link.appendChild(svgEl('rect', { x: left, y: y, width: width, height: h, rx: 3,
                                       class: `hang-bar sev-${level}` + (hang.inProgress ? ' in-progress' : '')
                                         + (hang.cause ? ' cause-' + hang.cause.kind : ''),
                                       'data-hang-id': hang.id }));
      if (hang.inProgress) {
        link.appendChild(svgEl('rect', { x: left, y: y, width: width, height: h, rx: 3, fill: 'url(#in-progress-stripes)' }));
        link.appendChild(svgEl('text', { x: left + width + 5, y: y + h / 2 + 4, class: 'progress-label' }, '▸ at exit'));
      }
      const full = `#${hang.id} · ${fixed(hang.durationMs, 0)} ms`, short = `${fixed(hang.durationMs, 0)} ms`;
      const label = width > 86 ? full : width > 48 ? short : '';
      if (label) link.appendChild(svgEl('text', { x: left + 6, y: y + h / 2 + 4, class: `bar-label sev-${level}` }, label));

      const lines = [SEVERITY_LABELS[level] + (hang.inProgress ? ' · still running at exit' : ''),
                     `starts at +${fixed(hang.startMs / 1000, 3)} s`,
                     hang.kind + (hang.blockedIn ? ', waiting in ' + hang.blockedIn : ''),
                     ...(hang.cause ? ['cause: ' + hang.cause.kind] : []),
                     plural(hang.sampleCount, 'sample'),
                     hasFlameGraph(hang) ? 'click to see its call tree' : 'no call tree: shorter than the report threshold'];
      link.addEventListener('mousemove', event => showTooltip(event, `Hang #${hang.id} · ${ms(hang.durationMs)}`, lines));
      link.addEventListener('mouseleave', hideTooltip);
      return link;
    }
    """#
}
