// The flame graphs (icicle layout: root at the top). Each frame's width is
// its share of the view's weight, callees sit below their caller heaviest
// first, hovering shows the numbers, clicking zooms, and a search box
// highlights frames whose symbol contains the text.

import HangWatchAnalysis
import HangWatchModel

enum HTMLFlameScript {
    static let source = #"""
    const FRAME_H = 18;
    // Frames narrower than this share of the view (well under a pixel) are not drawn.
    const MIN_FRAME_SHARE = 0.0005;
    const PROGRAM_COLOUR = '#7cc6b6';
    const LIBRARY_COLOURS = ['#c4cff0', '#e4d6c6', '#d8cdef', '#cde4c7', '#d5dce5', '#e8d0e1', '#c6def3', '#e6e0b8'];
    const libraryColours = new Map();

    /// The program's own code stands out; each library keeps one colour across every graph.
    function imageColour(image, program) {
      if (image === program) return PROGRAM_COLOUR;
      if (!libraryColours.has(image)) libraryColours.set(image, LIBRARY_COLOURS[libraryColours.size % LIBRARY_COLOURS.length]);
      return libraryColours.get(image);
    }

    /// Entries with parent links and children sorted heaviest first; iterative, so deep trees cannot overflow.
    function indexTree(tree) {
      const root = { node: tree, parent: null, depth: 0, index: 0, children: [] };
      const all = [root], pending = [root];
      while (pending.length) {
        const entry = pending.pop();
        const callees = (entry.node.children || []).slice().sort((a, b) => b.weightMs - a.weightMs);
        entry.children = callees.map(node => ({ node: node, parent: entry, depth: entry.depth + 1, index: 0, children: [] }));
        for (const child of entry.children) { child.index = all.length; all.push(child); pending.push(child); }
      }
      return { root: root, all: all };
    }

    function setUpFlameGraph(section, tree, program) {
      const graph = section.querySelector('.flame');
      const input = section.querySelector('.flame-search');
      const reset = section.querySelector('.flame-reset');
      const status = section.querySelector('.flame-status');
      const { root, all } = indexTree(tree);
      const total = root.node.weightMs;
      let view = root;
      let query = '';

      const matches = entry => query !== '' && String(entry.node.symbol).toLowerCase().includes(query);

      function frame(entry, left, share, extraClass) {
        const node = el('div', 'frame' + extraClass, entry.node.symbol);
        node.style.left = (left * 100) + '%';
        node.style.width = (share * 100) + '%';
        node.style.top = (entry.depth * FRAME_H) + 'px';
        node.style.setProperty('--frame-colour', imageColour(entry.node.image, program));
        if (query) node.classList.add(matches(entry) ? 'match' : 'dim');
        node.setAttribute('data-index', entry.index);
        return node;
      }

      function draw() {
        const frames = document.createDocumentFragment();
        for (let above = view.parent; above; above = above.parent) frames.appendChild(frame(above, 0, 1, ' ancestor'));
        const viewWeight = view.node.weightMs;
        let depth = view.depth + 1;
        const walk = (entry, left, share) => {
          frames.appendChild(frame(entry, left, share, ''));
          depth = Math.max(depth, entry.depth + 1);
          let next = left;
          for (const child of entry.children) {
            const childShare = viewWeight > 0 ? child.node.weightMs / viewWeight : 0;
            if (childShare >= MIN_FRAME_SHARE) walk(child, next, childShare);
            next += childShare;
          }
        };
        walk(view, 0, 1);
        graph.style.height = (depth * FRAME_H) + 'px';
        graph.replaceChildren(frames);
        reset.disabled = view === root;
        showStatus();
      }

      function showStatus() {
        if (query) {
          const matched = all.filter(matches);
          // A match inside a matching caller is already counted in the caller's weight.
          const outermost = matched.filter(entry => { for (let p = entry.parent; p; p = p.parent) if (matches(p)) return false; return true; });
          const weight = outermost.reduce((sum, entry) => sum + entry.node.weightMs, 0);
          status.textContent = matched.length
            ? `${plural(matched.length, 'frame')} match · ${percent(weight, total)} of the sampled time`
            : 'no frame matches';
        } else if (view !== root) {
          status.textContent = `zoomed into ${truncate(String(view.node.symbol), 70)} · ${percent(view.node.weightMs, total)} of the sampled time`;
        } else {
          status.textContent = `${plural(all.length, 'frame')} · ${ms(total)} sampled`;
        }
      }

      function entryAt(target) {
        const node = target.closest ? target.closest('.frame') : null;
        return node ? all[Number(node.getAttribute('data-index'))] : null;
      }

      graph.addEventListener('mousemove', event => {
        const entry = entryAt(event.target);
        if (!entry) return hideTooltip();
        const n = entry.node;
        const lines = [`image: ${n.image || 'unknown'}`,
                       `weight: ${ms(n.weightMs)} · ${percent(n.weightMs, total)} of the sampled time`,
                       `self: ${ms(n.selfMs)}`,
                       `samples: ${n.sampleCount}`];
        if (view !== root) lines.push(`${percent(n.weightMs, view.node.weightMs)} of the zoomed frame`);
        showTooltip(event, String(n.symbol), lines);
      });
      graph.addEventListener('mouseleave', hideTooltip);
      graph.addEventListener('click', event => {
        const entry = entryAt(event.target);
        if (entry && entry !== view) { view = entry; draw(); }
      });
      reset.addEventListener('click', () => { view = root; draw(); });
      input.addEventListener('input', () => { query = input.value.trim().toLowerCase(); draw(); });

      drawLegend(section.querySelector('.flame-legend'), all, program);
      draw();
      return { search: text => { input.value = text; query = text.trim().toLowerCase(); draw(); } };
    }

    /// The images in this tree with their colours, heaviest self time first.
    function drawLegend(holder, all, program) {
      const selfByImage = new Map();
      for (const entry of all) selfByImage.set(entry.node.image, (selfByImage.get(entry.node.image) || 0) + entry.node.selfMs);
      const images = [...selfByImage.keys()].sort((a, b) => (b === program) - (a === program) || selfByImage.get(b) - selfByImage.get(a));
      const shown = images.slice(0, 8);
      holder.replaceChildren(...shown.map(image => {
        const item = el('span', 'legend-item');
        const swatch = el('span', 'swatch');
        swatch.style.background = imageColour(image, program);
        item.append(swatch, image || 'unknown image');
        return item;
      }));
      if (images.length > shown.length) holder.appendChild(el('span', 'legend-item', `+${images.length - shown.length} more`));
    }
    """#
}
