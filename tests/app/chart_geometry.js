// Run in a test tab (page.evaluate): where every Vega chart of the page put its axis labels, its
// legends and its bands, read from Vega's own scene graph, not from the pixels, so a test can tell
// a chart a person can read from one whose labels sit on each other.
//
// Each chart's view: Streamlit's charts are SVG, whose elements carry their scene items
// (``__data__``), the root one holding the view's runtime (``context.dataflow`` is the View); the
// step view's canvas charts keep their vega-embed view on their element (``vegaView``).
//
// Returns [{chart, box, labels: [{axis, text, box}], legends: [box], bands: [{scale, size}], plot}]:
// boxes in page pixels ({x1, y1, x2, y2}); ``box`` is the chart's element as the page clips it;
// ``labels`` are the axis labels Vega draws (not those it hid for overlapping); ``bands`` the
// heights of the vertical band scales' bands (one row of bars, or one bar of a row); ``plot`` the
// data rectangle's height.
(() => {
  function viewOf(chart) {
    if (chart.vegaView) return chart.vegaView;
    const item = [...chart.querySelectorAll("svg.marks g")].find((g) => g.__data__?.context?.dataflow);
    return item?.__data__.context.dataflow ?? null;
  }

  // every item of the scene, its bounds moved by the groups it is in
  function walk(mark, dx, dy, axis, out) {
    for (const item of mark.items || []) {
      const b = item.bounds, box = {x1: b.x1 + dx, y1: b.y1 + dy, x2: b.x2 + dx, y2: b.y2 + dy};
      if (mark.role === "axis-label" && item.opacity !== 0 && String(item.text ?? "").trim()) {
        out.labels.push({axis, text: String(item.text), box});
      }
      if (mark.role === "legend") out.legends.push(box);
      if (mark.marktype === "group") {
        const inner = mark.role === "axis" ? `${mark.name || "axis"}#${out.axes++}` : axis;
        for (const child of item.items || []) walk(child, dx + (item.x || 0), dy + (item.y || 0), inner, out);
      }
    }
  }

  function geometry(chart, name) {
    const view = viewOf(chart), marks = chart.querySelector("svg.marks, canvas.marks");
    if (!view || !marks) return {chart: name, missing: true};
    const m = marks.getBoundingClientRect(), c = chart.getBoundingClientRect(), [ox, oy] = view.origin();
    const out = {labels: [], legends: [], axes: 0};
    walk(view.scenegraph().root, m.left + ox, m.top + oy, null, out);
    const scales = Object.keys(view._runtime.scales);
    const bands = scales.filter((s) => /(^|_)y(Offset)?$/i.test(s) && view.scale(s).type === "band")
      .map((s) => ({scale: s, size: view.scale(s).bandwidth()}));
    const box = {x1: Math.max(m.left, c.left), y1: Math.max(m.top, c.top),
                 x2: Math.min(m.right, c.right), y2: Math.min(m.bottom, c.bottom)};
    return {chart: name, box, labels: out.labels, legends: out.legends, bands, plot: view.height()};
  }

  window.__chartGeometry = () => {
    const charts = [...document.querySelectorAll('[data-testid="stVegaLiteChart"], .bpe-pairs-chart, .bpe-curve')];
    return charts.map((chart, i) => geometry(chart, `${chart.dataset.testid || chart.className} #${i}`));
  };
})();
