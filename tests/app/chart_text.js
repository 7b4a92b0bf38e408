// Put in a test tab before the app loads (Playwright's add_init_script): every piece of text a Vega
// chart draws, with the colour it is drawn in and the colour under it, so a test can check the
// contrast a person sees.  axe-core reads the DOM's text only; a chart's labels are SVG (Streamlit's
// charts) or pixels on a canvas (the step view's), which it never checks.
//
// window.__chartTexts() returns [{chart, text, fg, bg, ratio}], one entry per label, where fg and bg
// are "r,g,b" after alpha is blended in and ratio is WCAG's contrast ratio between them:
// - SVG: the text's fill (with its opacity) over the shapes drawn before it in the same SVG whose box
//   holds a point of the text (a bar under a word on it), over the page's background behind the chart;
// - canvas: CanvasRenderingContext2D.fillText is wrapped: before each label is drawn, the pixels
//   under it (what the chart drew there before: a bar, or nothing) are read, and blended over the
//   page's background behind the canvas.
// Each label is sampled at three points along its middle line, and the worst of them kept.
(() => {
  const probe = document.createElement("canvas").getContext("2d", {willReadFrequently: true});

  function rgba(css) {  // any CSS colour as [r, g, b, a (0-1)]
    probe.clearRect(0, 0, 1, 1);
    probe.fillStyle = "#000";
    probe.fillStyle = css;
    probe.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = probe.getImageData(0, 0, 1, 1).data;
    return [r, g, b, a / 255];
  }

  const over = ([r, g, b, a], [R, G, B]) => [r * a + R * (1 - a), g * a + G * (1 - a), b * a + B * (1 - a)];

  function luminance(rgb) {
    const [r, g, b] = rgb.map((c) => { c /= 255; return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }

  function ratio(a, b) {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  }

  function pageBackground(el) {  // the first opaque background behind el, or the page's
    const layers = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    return layers.reverse().reduce((bg, c) => over(c, bg), [255, 255, 255]);
  }

  function opacity(el, stop) {
    let o = 1;
    for (let e = el; e && e !== stop; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity || "1");
    return o;
  }

  function paint(el, stop) {  // an SVG shape's or text's fill, its opacities folded into alpha
    const s = getComputedStyle(el);
    if (!s.fill || s.fill === "none" || s.fill.startsWith("url(")) return null;
    const c = rgba(s.fill);
    return [c[0], c[1], c[2], c[3] * parseFloat(s.fillOpacity || "1") * opacity(el, stop)];
  }

  const inside = (r, [x, y]) => x >= r.left && x <= r.right && y >= r.top && y <= r.bottom;
  const text = (c) => c.map(Math.round).join(",");

  function svgTexts(chart, name) {
    const out = [];
    for (const svg of chart.querySelectorAll("svg")) {
      const behind = pageBackground(svg.parentElement);
      const shapes = [...svg.querySelectorAll("path, rect, circle, ellipse, polygon")];
      for (const label of svg.querySelectorAll("text")) {
        const box = label.getBoundingClientRect();
        if (!label.textContent.trim() || box.width === 0) continue;
        const fill = paint(label, svg);
        if (!fill || fill[3] === 0) continue;  // not drawn (Vega hides an overlapping axis label so)
        let worst = null;
        for (const f of [0.2, 0.5, 0.8]) {
          const point = [box.left + f * box.width, box.top + box.height / 2];
          let bg = behind;
          for (const shape of shapes) {  // painted before the label, under this point of it
            if (!(shape.compareDocumentPosition(label) & Node.DOCUMENT_POSITION_FOLLOWING)) continue;
            const c = paint(shape, svg);
            if (c && c[3] > 0 && inside(shape.getBoundingClientRect(), point)) bg = over(c, bg);
          }
          const fg = over(fill, bg), r = ratio(fg, bg);
          if (!worst || r < worst.ratio) worst = {chart: name, text: label.textContent, fg: text(fg), bg: text(bg), ratio: r};
        }
        out.push(worst);
      }
    }
    return out;
  }

  // canvas: what each label was drawn over, recorded as it is drawn
  const drawn = new WeakMap();  // canvas -> Map(label and place -> record)
  const canvases = new Set();
  const fillText = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (label, x, y, ...rest) {
    const canvas = this.canvas;
    if (canvas instanceof HTMLCanvasElement && canvas !== probe.canvas && String(label).trim()) {
      try { record(this, canvas, String(label), x, y); } catch (e) { /* never break the chart */ }
    }
    return fillText.call(this, label, x, y, ...rest);
  };

  function record(ctx, canvas, label, x, y) {
    const w = ctx.measureText(label).width, size = parseFloat((ctx.font.match(/([\d.]+)px/) || [0, 10])[1]);
    const align = ctx.textAlign, base = ctx.textBaseline;
    const left = align === "center" ? x - w / 2 : (align === "right" || align === "end") ? x - w : x;
    const mid = base === "middle" ? y : base === "top" || base === "hanging" ? y + size / 2
      : base === "bottom" || base === "ideographic" ? y - size / 2 : y - size * 0.35;
    const m = ctx.getTransform(), fill = rgba(ctx.fillStyle);
    fill[3] *= ctx.globalAlpha;
    const samples = [0.2, 0.5, 0.8].map((f) => {
      const ux = left + f * w, px = Math.round(m.a * ux + m.c * mid + m.e), py = Math.round(m.b * ux + m.d * mid + m.f);
      const inCanvas = px >= 0 && py >= 0 && px < canvas.width && py < canvas.height;
      const [r, g, b, a] = inCanvas ? ctx.getImageData(px, py, 1, 1).data : [0, 0, 0, 0];
      return [r, g, b, a / 255];
    });
    if (!drawn.has(canvas)) drawn.set(canvas, new Map());
    canvases.add(new WeakRef(canvas));
    drawn.get(canvas).set(`${label}|${x}|${y}`, {label, fill, samples});
  }

  function canvasTexts(chart, name) {
    const out = [];
    for (const ref of canvases) {
      const canvas = ref.deref();
      if (!canvas || !chart.contains(canvas) || !drawn.has(canvas)) continue;
      const behind = pageBackground(canvas.parentElement);
      for (const {label, fill, samples} of drawn.get(canvas).values()) {
        if (fill[3] === 0) continue;
        let worst = null;
        for (const s of samples) {
          const bg = over(s, behind), fg = over(fill, bg), r = ratio(fg, bg);
          if (!worst || r < worst.ratio) worst = {chart: name, text: label, fg: text(fg), bg: text(bg), ratio: r};
        }
        out.push(worst);
      }
    }
    return out;
  }

  window.__chartTexts = () => {
    const charts = [...document.querySelectorAll('[data-testid="stVegaLiteChart"], .bpe-pairs-chart, .bpe-curve')];
    return charts.flatMap((chart, i) => {
      const name = `${chart.dataset.testid || chart.className} #${i}`;
      return [...svgTexts(chart, name), ...canvasTexts(chart, name)];
    });
  };
})();
