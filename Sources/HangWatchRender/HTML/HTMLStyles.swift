// The page's style sheet: system fonts, a light palette, and the colours
// that carry meaning (hang severity, frame-loop band, flame-graph images).

enum HTMLStyles {
    static let css = #"""
    :root {
      --fg: #1f2933; --muted: #627080; --line: #e2e6eb; --panel: #f6f7f9; --accent: #2f6fb0;
      --severe: #d64545; --reported: #ee8a2d; --micro: #f1c84b; --launch: #8aa0bb;
      --good: #2e9d6b; --warning: #e3a21a; --critical: #d64545;
      --match: #e05fa8;
      --mono: ui-monospace, "SF Mono", SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
    }
    * { box-sizing: border-box; }
    html { scroll-behavior: smooth; }
    body { margin: 0; color: var(--fg); background: #fff;
      font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
    main { max-width: 1200px; margin: 0 auto; padding: 28px 24px 56px; }
    a { color: var(--accent); text-decoration: none; }
    a:hover { text-decoration: underline; }
    .muted { color: var(--muted); }
    .eyebrow { color: var(--muted); font-size: 12px; letter-spacing: .08em; text-transform: uppercase; }
    h1 { font-size: 26px; margin: 2px 0 2px; }
    .command { font-family: var(--mono); font-size: 12px; color: var(--muted); overflow-wrap: anywhere; }
    .facts, .thresholds { display: flex; flex-wrap: wrap; gap: 4px 22px; margin: 12px 0; color: var(--muted); }
    .fact b { color: var(--fg); font-weight: 600; }
    .thresholds { font-size: 13px; margin-top: 10px; }
    .cards { display: grid; grid-template-columns: repeat(4, 1fr); gap: 12px; }
    .card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; }
    .card-label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .05em; }
    .card-value { font-size: 24px; font-weight: 650; margin: 2px 0; font-variant-numeric: tabular-nums; }
    .card-detail { color: var(--muted); font-size: 12px; }
    .notes { background: #fff8e5; border: 1px solid #f0dca0; border-radius: 8px; padding: 8px 14px; margin-top: 12px; }
    .notes-title { font-weight: 600; }
    .notes ul { margin: 4px 0 0; padding-left: 20px; }
    section { margin-top: 30px; }
    h2 { font-size: 17px; margin: 0 0 10px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
    .h2-detail { font-size: 12px; font-weight: 400; color: var(--muted); margin-left: 8px; }
    h3 { font-size: 15px; margin: 0 0 2px; }
    .empty { color: var(--muted); }
    footer { margin-top: 40px; color: var(--muted); font-size: 12px; text-align: center; }

    .chip { display: inline-block; padding: 0 8px; border-radius: 999px; font-size: 12px; font-weight: 600;
      line-height: 20px; vertical-align: 1px; }
    .chip.sev-severe { background: #fbe2e2; color: #982020; }
    .chip.sev-reported { background: #fde9d6; color: #94470b; }
    .chip.sev-micro { background: #fcf3d2; color: #6f5600; }
    .chip.in-progress-chip { background: #e8eaf0; color: #3b4656; }
    .chip.launch-chip { background: #e6ebf2; color: #3d5270; }

    .timeline { min-height: 60px; }
    .timeline-svg { display: block; font-family: inherit; }
    .timeline-svg .row-bg { fill: #fff; }
    .timeline-svg .row-bg.odd { fill: #f8f9fb; }
    .timeline-svg .row-name { font-size: 13px; font-weight: 600; fill: var(--fg); }
    .timeline-svg .row-detail { font-size: 11px; fill: var(--muted); }
    .timeline-svg .grid { stroke: #e9ecf0; stroke-width: 1; }
    .timeline-svg .tick { font-size: 11px; fill: var(--muted); }
    .timeline-svg .alive { stroke: #c5ccd6; stroke-width: 2; }
    .timeline-svg .exit-line { stroke: #9aa5b4; stroke-width: 1; stroke-dasharray: 3 3; }
    .timeline-svg .exit-label { font-size: 11px; fill: var(--muted); }
    .timeline-svg .hang-link { cursor: pointer; }
    .timeline-svg .hang-link:hover .hang-bar { stroke: #1f2933; stroke-width: 1.5; }
    .timeline-svg .bar-label { font-size: 11px; font-weight: 600; fill: #fff; pointer-events: none; }
    .timeline-svg .bar-label.sev-micro { fill: #4d3c00; }
    .timeline-svg .launch-label { font-size: 11px; fill: #3d5270; pointer-events: none; }
    .timeline-svg .progress-label { font-size: 11px; font-weight: 600; fill: #3b4656; }
    .hang-bar.sev-severe { fill: var(--severe); }
    .hang-bar.sev-reported { fill: var(--reported); }
    .hang-bar.sev-micro { fill: var(--micro); }
    .launch-bar { fill: var(--launch); }
    .hang-bar.cause-deadlock, .swatch.cause-deadlock { fill: #6b2fa3; background: #6b2fa3; }
    .hang-bar.cause-throttled, .swatch.cause-throttled { fill: #2f6fa3; background: #2f6fa3; }
    .hang-bar.cause-stopped, .swatch.cause-stopped { fill: #6f7782; background: #6f7782; }
    .hang-bar.cause-starved-of-cpu, .swatch.cause-starved-of-cpu { fill: #2f8f83; background: #2f8f83; }
    .legend { display: flex; flex-wrap: wrap; gap: 4px 18px; margin-top: 8px; font-size: 12px; color: var(--muted); }
    .legend-item { display: inline-flex; align-items: center; gap: 6px; }
    .swatch { display: inline-block; width: 14px; height: 12px; border-radius: 3px; background: #ccc; }
    .swatch.sev-severe { background: var(--severe); }
    .swatch.sev-reported { background: var(--reported); }
    .swatch.sev-micro { background: var(--micro); }
    .swatch.launch { background: var(--launch); }
    .swatch.in-progress { background: repeating-linear-gradient(45deg, #8d97a5 0 3px, #d7dce3 3px 6px); }

    .frame-panel { border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin-bottom: 12px; }
    .frame-panel-title { margin-bottom: 8px; }
    .frame-panel-body { display: flex; align-items: flex-end; gap: 28px; flex-wrap: wrap; }
    .hitch-ratio { border-left: 6px solid #aab4c0; padding: 2px 0 2px 12px; min-width: 150px; }
    .hitch-value { font-size: 26px; font-weight: 650; font-variant-numeric: tabular-nums; }
    .hitch-value small { font-size: 13px; font-weight: 500; color: var(--muted); }
    .hitch-band { font-size: 12px; font-weight: 700; text-transform: uppercase; letter-spacing: .06em; }
    .band-good { border-color: var(--good); } .band-good .hitch-band { color: var(--good); }
    .band-warning { border-color: var(--warning); } .band-warning .hitch-band { color: #a87400; }
    .band-critical { border-color: var(--critical); } .band-critical .hitch-band { color: var(--critical); }
    .frame-counts { display: grid; grid-template-columns: repeat(4, auto); gap: 2px 22px; margin: 0; }
    .frame-counts dt { font-size: 11px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
    .frame-counts dd { margin: 0; font-weight: 600; font-variant-numeric: tabular-nums; }
    .histogram-title { font-size: 11px; color: var(--muted); margin-bottom: 2px; }
    .histogram-bars { display: flex; align-items: flex-end; gap: 4px; }
    .bucket { display: flex; flex-direction: column; align-items: center; justify-content: flex-end; width: 46px; }
    .bucket-count { font-size: 11px; color: var(--muted); }
    .bucket-bar { display: block; width: 30px; background: #9fb3c8; border-radius: 2px 2px 0 0; }
    .bucket.late .bucket-bar { background: var(--critical); }
    .bucket-bound { font-size: 10px; color: var(--muted); border-top: 1px solid #c5ccd6; width: 100%; text-align: center; }

    .hang-table { width: 100%; border-collapse: collapse; font-size: 13px; }
    .hang-table th { text-align: left; font-weight: 600; color: var(--muted); font-size: 12px; border-bottom: 1px solid var(--line); padding: 4px 8px; }
    .hang-table td { border-bottom: 1px solid #f0f2f5; padding: 5px 8px; }
    .hang-table .num { text-align: right; font-variant-numeric: tabular-nums; }
    .hang-table tr:target td { background: #fff4e0; }

    .flame-section { margin-top: 22px; scroll-margin-top: 12px; border-radius: 8px; }
    .flame-section:target { box-shadow: 0 0 0 2px var(--reported), 0 0 0 8px #fff; }
    .flame-facts { color: var(--muted); font-size: 13px; margin-bottom: 6px; }
    .flame-toolbar { display: flex; align-items: center; gap: 8px; margin-bottom: 6px; }
    .flame-search { width: 260px; padding: 4px 8px; border: 1px solid #c9d0d9; border-radius: 6px; font: inherit; font-size: 13px; }
    .flame-reset { padding: 4px 10px; border: 1px solid #c9d0d9; border-radius: 6px; background: #fff; font: inherit; font-size: 13px; cursor: pointer; }
    .flame-reset:disabled { color: #a9b2bd; cursor: default; }
    .flame-status { font-size: 12px; color: var(--muted); }
    .flame { position: relative; overflow: hidden; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
    .frame { position: absolute; height: 18px; padding: 0 4px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis;
      font-family: var(--mono); font-size: 11px; line-height: 17px; color: #17212b; cursor: pointer;
      background: var(--frame-colour, #dde3ea); border-right: 1px solid #fff; border-bottom: 1px solid #fff; }
    .frame:hover { filter: brightness(0.92); }
    .frame.ancestor { opacity: .5; }
    .frame.dim { opacity: .32; }
    .frame.match { background: var(--match); color: #fff; }
    .flame-legend { display: flex; flex-wrap: wrap; gap: 2px 14px; margin-top: 6px; font-size: 12px; color: var(--muted); }

    #tooltip { position: fixed; display: none; z-index: 10; max-width: 560px; pointer-events: none;
      background: #1f2933; color: #fff; border-radius: 6px; padding: 8px 10px; font-size: 12px;
      box-shadow: 0 4px 14px rgba(0,0,0,.18); }
    #tooltip .tip-title { font-family: var(--mono); font-weight: 600; margin-bottom: 4px; overflow-wrap: anywhere; }
    #tooltip .tip-line { color: #d5dbe3; }
    """#
}
