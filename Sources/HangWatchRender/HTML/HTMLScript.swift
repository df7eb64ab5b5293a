// The page script, assembled from its parts. Plain ES2017 with no library:
// the page must work from a file with no network, in any current browser.
// Every string from the report reaches the page through textContent or an
// attribute set with setAttribute, never through innerHTML.

enum HTMLScript {
    static var source: String {
        ["(function () {", "'use strict';", common, HTMLTimelineScript.source, HTMLFlameScript.source, boot, "})();"]
            .joined(separator: "\n")
    }

    /// Helpers shared by the timeline and the flame graphs.
    static let common = #"""
    const SEVERE_MS = \#(HTMLSeverity.severeMs);
    const SVG_NS = 'http://www.w3.org/2000/svg';

    function el(tag, className, text) {
      const node = document.createElement(tag);
      if (className) node.className = className;
      if (text !== undefined && text !== null) node.textContent = String(text);
      return node;
    }

    function svgEl(tag, attributes, text) {
      const node = document.createElementNS(SVG_NS, tag);
      for (const name of Object.keys(attributes || {})) node.setAttribute(name, String(attributes[name]));
      if (text !== undefined && text !== null) node.textContent = String(text);
      return node;
    }

    function fixed(value, decimals) {
      return typeof value === 'number' && isFinite(value) ? value.toFixed(decimals) : String(value);
    }
    function ms(value) { return fixed(value, 1) + ' ms'; }
    function percent(part, whole) { return whole > 0 ? fixed(part / whole * 100, 1) + '%' : '–'; }
    function plural(count, noun) { return count + ' ' + noun + (count === 1 ? '' : 's'); }
    function basename(path) {
      const slash = String(path).lastIndexOf('/');
      return slash >= 0 && slash < path.length - 1 ? path.slice(slash + 1) : String(path);
    }
    function truncate(text, limit) { return text.length > limit ? text.slice(0, limit - 1) + '…' : text; }

    function severity(hang) {
      if (hang.durationMs >= SEVERE_MS) return 'severe';
      return hang.reported ? 'reported' : 'micro';
    }
    const SEVERITY_LABELS = { severe: 'severe', reported: 'reported', micro: 'micro-hang' };
    function hasFlameGraph(hang) { return Boolean(hang.reported && hang.callTree); }

    const tooltip = document.getElementById('tooltip');
    function showTooltip(event, title, lines) {
      tooltip.replaceChildren(el('div', 'tip-title', title), ...lines.map(line => el('div', 'tip-line', line)));
      tooltip.style.display = 'block';
      moveTooltip(event);
    }
    function moveTooltip(event) {
      const gap = 14, box = tooltip.getBoundingClientRect();
      let left = event.clientX + gap, top = event.clientY + gap;
      if (left + box.width > window.innerWidth - 8) left = Math.max(8, event.clientX - box.width - gap);
      if (top + box.height > window.innerHeight - 8) top = Math.max(8, event.clientY - box.height - gap);
      tooltip.style.left = left + 'px';
      tooltip.style.top = top + 'px';
    }
    function hideTooltip() { tooltip.style.display = 'none'; }
    """#

    /// Reads the embedded report, draws everything, and applies `#search=TEXT` from the address.
    static let boot = #"""
    function readReport() {
      const holder = document.getElementById('\#(HTMLReport.dataElementID)');
      try { return holder ? JSON.parse(holder.textContent) : null; } catch (error) { return null; }
    }

    function treeFor(report, source) {
      if (source === 'launch') return report.launch ? report.launch.callTree : null;
      const owner = source.startsWith('owner:');
      const id = source.startsWith('hang:') ? source.slice(5) : owner ? source.slice(6) : null;
      const hang = report.hangs.find(candidate => String(candidate.id) === id);
      if (!hang) return null;
      return owner ? (hang.lockOwner ? hang.lockOwner.callTree : null) : hang.callTree;
    }

    const report = readReport();
    if (!report) {
      document.getElementById('timeline').replaceChildren(
        el('p', 'empty', 'The report data embedded in this page is missing or unreadable, so the timeline and call trees are not drawn.'));
      return;
    }

    drawTimeline(report);
    let resizeTimer = 0;
    window.addEventListener('resize', () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => drawTimeline(report), 120);
    });

    const program = basename(report.process.executable);
    const graphs = [];
    for (const section of document.querySelectorAll('.flame-section')) {
      const holder = section.querySelector('.flame');
      const tree = treeFor(report, holder.getAttribute('data-tree') || '');
      if (tree) graphs.push(setUpFlameGraph(section, tree, program));
    }

    // A link such as report.html#search=parse opens with that search applied to every call tree.
    const initialSearch = new URLSearchParams(location.hash.slice(1)).get('search');
    if (initialSearch) graphs.forEach(graph => graph.search(initialSearch));
    """#
}
