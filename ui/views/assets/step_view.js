// Learn BPE's step view, run in the browser (mounted by ui/views/step_view.py).
//
// Python sends, once per tokenizer and window, the window's tokens before the first merge, every
// merge with its competing pairs, how each token is drawn (escaped HTML built by ui/plumbing/render.py) and
// the charts' Vega-Lite specs (ui/plumbing/charts.py). Every step is computed here: merges are applied
// left to right without overlap inside a chunk, or undone, with the rule of core.bpe.explain
// (segment, occurrence_indices; tests/app/test_browser_step_view.py checks the two agree at every
// step), the pair about to merge is highlighted, and the sentence, the counts, the pairs chart,
// the merge table and the curves' cursor follow. Nothing crosses the websocket while a person
// steps or plays; the step goes into the page's URL (?step=) for a reload or a bookmark.

const parsed = new Map();  // payload key -> payload: each payload is parsed once per page load
let memory = {epoch: null, step: 0};  // the step shown: kept across reruns and pages
let current = null;  // the view on screen
let vegaLoading = null;
const SMOOTH_MS = 50, SETTLE_MAX_MS = 3000, URL_EVERY_MS = 300, TABLE_CHUNK = 500, THEME_CHECK_MS = 1000;
const fmt = (x) => x.toLocaleString("en");
const LINE = `<div class="ln">`, NEXT_LINE = `</div>${LINE}`;

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => (
  {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}[c]));

// -- the payload ------------------------------------------------------------------------------
// "<epoch> <step>\n<key>\n<json>": the session's opening step, then the shared payload
function readPayload(bytes) {
  const first = bytes.indexOf(10), second = bytes.indexOf(10, first + 1);
  const decoder = new TextDecoder("utf-8");
  const [epoch, step] = decoder.decode(bytes.subarray(0, first)).split(" ").map(Number);
  const key = decoder.decode(bytes.subarray(first + 1, second));
  if (!parsed.has(key)) {
    parsed.clear();  // only the newest payload is kept
    parsed.set(key, JSON.parse(decoder.decode(bytes.subarray(second + 1))));
  }
  return {epoch, step, d: parsed.get(key)};
}

// -- the rule: merges applied and undone (core.bpe.explain is the reference) -------------------
// indices i where seq[i], seq[i + 1] are merge `m`'s pair: left to right, never overlapping
function pairIndices(seq, m) {
  const found = [];
  for (let i = 0; i < seq.length - 1; i++) {
    const a = seq[i], b = seq[i + 1];
    if (a.id === m[0] && b.id === m[1] && a.chunk === b.chunk) { found.push(i); i++; }
  }
  return found;
}

// the sequence after merge `m`; each new token keeps the two it replaces in `parts` until drawn
function applyMerge(seq, m) {
  const at = new Set(pairIndices(seq, m)), out = [];
  for (let i = 0; i < seq.length; i++) {
    if (at.has(i)) {
      out.push({id: m[2], chunk: seq[i].chunk, gap: seq[i].gap, parts: [seq[i], seq[i + 1]]});
      i++;
    } else out.push(seq[i]);
  }
  return out;
}

// the sequence before merge `m`: right after it, every token with its new id came from it
function undoMerge(seq, m) {
  const out = [];
  for (const t of seq) {
    if (t.id === m[2]) out.push({id: m[0], chunk: t.chunk, gap: t.gap}, {id: m[1], chunk: t.chunk, gap: null});
    else out.push(t);
  }
  return out;
}

function initialSequence(d) {
  return d.ids.map((id, i) => ({id, chunk: d.chunks[i], gap: d.gaps[i] || null}));
}

// -- the text -----------------------------------------------------------------------------------
function visibleHtml(d, s) {
  const chars = Array.from(s);
  return chars.map((ch, i) => {
    const joiner = ch === "\u200d" && i > 0 && i < chars.length - 1 && !/\s/.test(chars[i - 1])
      && !/\s/.test(chars[i + 1]);
    const symbol = joiner ? undefined : d.symbols[ch];
    return symbol === undefined ? esc(ch) : `<span class="ws" style="${d.styles.faint}">${esc(symbol)}</span>`;
  }).join("");
}

function decodeHex(hex) {
  const bytes = hex.split(" ").filter(Boolean).map((h) => parseInt(h, 16));
  return new TextDecoder("utf-8").decode(new Uint8Array(bytes));
}

// runs of tokens that spell whole characters: [first, stop) (byte tokens split a character)
function characterRuns(d, seq) {
  const runs = [];
  let first = 0;
  for (let i = 1; i <= seq.length; i++) {
    if (i === seq.length || !d.byte_level || !d.cont[seq[i].id]) { runs.push([first, i]); first = i; }
  }
  return runs;
}

function hasGroups(d, seq) {
  return d.byte_level && characterRuns(d, seq).length < seq.length;
}

// classes, not inline styles: a step redraws thousands of tokens (the rules: ui/views/step_view.py).
// Colours alternate along each line (`col`: the token's place on its line), so a merge recolours
// the rest of its own line only, and the lines it does not touch are not painted again.
function tokenClass(d, t, n, col, hits) {
  const base = hits.has(n) || hits.has(n - 1) ? "tok tok-hit" : `tok c${col % 2}`;
  return base + (d.faces[t.id][1] ? " partial" : "");
}

function tokenHtml(d, t, n, col, hits, inGroup) {
  const cls = tokenClass(d, t, n, col, hits);
  const shown = inGroup ? esc(d.hex[t.id]) : d.faces[t.id][0];
  return `<span class="${inGroup ? cls.replace(" partial", "") + " in-group" : cls}" data-id="${t.id}">${shown}</span>`;
}

const endsLine = (d, t) => d.faces[t.id][2] === 1;  // the token ends with a line break

// each token's place on its line: a line starts after a token that ends one, or a line break
// in the text before the token
function columns(d, seq) {
  let col = 0;
  return seq.map((t, n) => (col = n && !endsLine(d, seq[n - 1]) && !(t.gap && t.gap.length > 1) ? col + 1 : 0));
}

function titleOnHover(d, event) {  // what hovering shows, made when first hovered
  const t = event.target.closest && event.target.closest(".tok[data-id]");
  if (t && !t.title) t.title = `id ${t.dataset.id}: ${d.names[t.dataset.id]}, bytes ${d.hex[t.dataset.id]}`;
}

// The text as lines (a <div class="ln"> each), each its own layout and paint boundary
// (content-visibility, which also skips the lines far from the box's view in a long window): with
// colours alternating along each line, a step repaints the lines its merges touch, where one flow
// of 1,700 tokens was painted anew whole (Chromium here: 25 ms of an 80 ms step; now 13 ms, and
// the lines far from the box's view wait for the browser's idle time: below).
// A pair across a line break is outlined on each of its two lines.
function textHtml(d, seq, hitList) {
  const hits = new Set(hitList), runs = characterRuns(d, seq);
  const single = new Set(runs.filter(([a, b]) => b - a === 1).map(([a]) => a));
  const sameRun = (n) => runs.some(([a, b]) => a <= n && n + 1 < b);
  const wrapped = new Set(hitList.filter((n) => (single.has(n) && single.has(n + 1)) || sameRun(n)));
  const out = [LINE], cols = columns(d, seq);
  let empty = true;  // nothing on the line yet: a <br> gives it its height
  const put = (html) => { if (html) { out.push(html); empty = false; } };
  const breakLine = () => { out.push(empty ? "<br>" + NEXT_LINE : NEXT_LINE); empty = true; };
  // text between tokens, its lines drawn each on its own line
  const gap = (lines) => (lines || []).forEach((html, i) => { if (i) breakLine(); put(html); });
  for (const [first, stop] of runs) {
    gap(seq[first].gap);
    const group = stop - first > 1;
    if (group) {
      const hex = seq.slice(first, stop).map((t) => d.hex[t.id]).join(" "), chars = decodeHex(hex);
      const title = `${chars}: ${stop - first} byte tokens, bytes ${hex}`;
      out.push(`<span class="bpe-char" title="${esc(title)}"><span class="bpe-glyph">${visibleHtml(d, chars)}` +
        `</span><span style="display:inline-flex;gap:1px">`);
    }
    for (let n = first; n < stop; n++) {
      const split = (i) => wrapped.has(i) && endsLine(d, seq[i]);  // pair i's two halves on two lines
      if (wrapped.has(n) || split(n - 1)) out.push(`<span class="bpe-hit">`);
      put(tokenHtml(d, seq[n], n, cols[n], hits, group));
      if (wrapped.has(n - 1) || split(n)) out.push("</span>");
      if (endsLine(d, seq[n])) breakLine();  // never inside a group: a line break is a whole character
    }
    if (group) out.push("</span></span>");
  }
  gap(d.tail);
  out.push(empty ? "<br></div>" : "</div>");
  const legend = [d.legend, runs.length < seq.length ? d.group_legend : ""].filter(Boolean).join(" ");
  return `<div class="bpe-text" data-view="${esc(d.view)}" ${d.styles.attrs} style="${d.styles.container}">` +
    `${out.join("")}</div>` +
    (legend ? `<div class="bpe-legend" style="${d.styles.legend}">${legend}</div>` : "");
}

// the whole text drawn anew; each token remembers its element (changes left for far lines are moot)
function redraw(v, hitList) {
  const box = v.el.text, scroll = box.firstElementChild?.scrollTop || 0;
  box.innerHTML = textHtml(v.d, v.seq, hitList);
  if (box.firstElementChild) box.firstElementChild.scrollTop = scroll;
  const els = box.querySelectorAll(".tok");
  v.seq.forEach((t, i) => Object.assign(t, {el: els[i], parts: null}));
  v.later = [];
  v.root.dataset.later = "0";
  watchLines(v);
}

// -- the lines far from the box's view: changed once the browser is idle ------------------------
// The box shows about 10 of the window's 54 lines, yet Chromium lays out and paints every line of a
// scrolled box that changes (content-visibility counts them all as near), so a step paid for each
// line its merges touched (about 22): a third of its time.  The view watches which lines lie
// within half a box's height of what the box shows; a step changes those at once and leaves its
// changes to the others (the same DOM changes, in the same order) until the browser is idle, a
// far line comes near, or the next step begins.  Hiding the far lines instead (content-visibility:
// hidden) cost more when they were shown again than drawing them had.
const idleCall = window.requestIdleCallback || ((f) => setTimeout(f, 50));
const cancelIdle = window.cancelIdleCallback || clearTimeout;
const LATER_MS = 500;  // at most this long before the far lines change, even on a busy page

function watchLines(v) {
  v.lines?.disconnect();
  const box = v.el.text.firstElementChild;
  v.far = new WeakSet();
  if (!box || !window.IntersectionObserver) return;
  v.lines = new IntersectionObserver((entries) => {
    for (const {target, isIntersecting} of entries) {
      if (isIntersecting) v.far.delete(target);
      else v.far.add(target);
    }
    if (entries.some((e) => e.isIntersecting)) changeFarLines(v);  // scrolled near: no stale line shown
  }, {root: box, rootMargin: "50% 0px"});
  box.querySelectorAll(".ln").forEach((line) => v.lines.observe(line));
}

// Each change, in order, with the lines it touches: now if its lines are near, else later.  Lines a
// change joins (a merge across a line break, a pair outlined across one) go together, so a far
// line is changed later whole, in order, and never by a change made now.
function changeLines(v, changes) {
  const group = new Map();  // line -> a line of its group
  const find = (line) => { while (group.get(line) !== line) line = group.get(line); return line; };
  for (const {lines} of changes) {
    lines.forEach((line) => { if (!group.has(line)) group.set(line, line); });
    const [first, ...rest] = lines.map(find);
    rest.forEach((other) => group.set(other, first));
  }
  const near = new Set([...group.keys()].filter((line) => !v.far.has(line)).map(find));
  for (const {lines, run} of changes) {
    if (near.has(find(lines[0]))) run();
    else v.later.push(run);
  }
  if (!v.later.length) return;
  v.root.dataset.later = "1";  // for tests: the far lines wait
  if (!v.laterCall) v.laterCall = idleCall(() => changeFarLines(v), {timeout: LATER_MS});
}

function changeFarLines(v) {
  if (v.laterCall) cancelIdle(v.laterCall);
  v.laterCall = null;
  const later = v.later;
  v.later = [];
  later.forEach((change) => change());
  v.root.dataset.later = "0";
}

function nodesOf(html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  return [...template.content.childNodes];
}

// one merge drawn in place (text without byte groups): each merged pair, drawn in its yellow
// outline, becomes one new token (a pair across a line break joins the two lines); the next pair
// is outlined; colours follow the new positions.  Laying out thousands of new boxes a step is what
// a full redraw would cost.
function patch(v, hitList) {
  changeFarLines(v);  // the last step's, first: every token stands where the DOM says
  const d = v.d, hits = new Set(hitList), changes = [];
  const home = new Map();  // a new token's line, until it is in the DOM
  const lineOf = (el) => home.get(el) || el.closest(".ln");
  const change = (els, run) => changes.push({lines: els.map(lineOf), run});
  const unwrapped = (el) => (el.parentNode.classList.contains("bpe-hit") ? el.parentNode : el);
  for (const t of v.seq) {
    if (!t.parts) continue;
    const [a, b] = t.parts, [first, second] = [unwrapped(a.el), unwrapped(b.el)];
    const [node] = nodesOf(tokenHtml(d, t, 0, 0, hits, false));
    [t.el, t.parts] = [node, null];
    change([first, second], () => {
      const line = first.closest(".ln"), next = second.closest(".ln");
      first.replaceWith(node);
      if (second !== first) second.remove();
      if (next !== line) { line.append(...next.childNodes); next.remove(); v.lines?.unobserve(next); }
    });
    home.set(node, lineOf(first));
  }
  for (const i of hitList) {
    const [a, b] = [v.seq[i].el, v.seq[i + 1].el];
    const halves = endsLine(d, v.seq[i]) ? [[a], [b]] : [[a, b]];
    change([a, b], () => {
      for (const els of halves) {
        const outline = document.createElement("span");
        outline.className = "bpe-hit";
        els[0].before(outline);
        outline.append(...els);
      }
    });
  }
  const cols = columns(d, v.seq);
  v.seq.forEach((t, n) => {
    const cls = tokenClass(d, t, n, cols[n], hits), el = t.el;
    if (el.className !== cls) change([el], () => { el.className = cls; });
  });
  changeLines(v, changes);
}

// -- the words around the text (core.bpe.explain.explain_step is the reference) -----------------
function sentence(d, k) {
  if (k >= d.n) {
    const last = d.n ? d.merges[d.n - 1][4] : d.length0;
    return `<b>All ${d.n} merges done</b>: the vocabulary has ${d.base_vocab + d.n} tokens and the corpus ` +
      `is ${fmt(last)} tokens long (from ${fmt(d.length0)}).`;
  }
  const [l, r, nw, count, , ties] = d.merges[k];
  const times = count === 1 ? "time" : "times", pair = `${named(d, l)} + ${named(d, r)}`;
  const made = `so it becomes token ${nw}, ${named(d, nw)}.`;
  if (!ties) return `<b>Merge ${k + 1}: ${pair} occurs ${fmt(count)} ${times} — more than any other pair — ${made}</b>`;
  const others = ties === 1 ? "pair has" : "pairs have";
  return `<b>Merge ${k + 1}: ${pair} occurs ${fmt(count)} ${times}; ${ties} other ${others} the same count, ` +
    `and the tie goes to the pair that occurs first in the text — ${made}</b>`;
}

// a token's name isolated: right-to-left names keep their places in a left-to-right sentence
function named(d, id) {
  return `<bdi>${esc(d.names[id])}</bdi>`;
}

function caption(d, k, hits) {
  const hover = "Hover a token for its id; click it to see how it was built.";
  if (k >= d.n) return `Each coloured box is one final token. ${hover}`;
  const where = d.whole ? "in the text below" : "in the window below";
  return `${fmt(hits)} occurrence(s) ${where} are highlighted: yellow, bold, underlined, in a thick outline; ` +
    `each coloured box is one token after ${k} merge(s). ${overlaps(d, k)}${hover}`;
}

// why the sentence's count can exceed what merges (core.bpe.trainer counts overlapping pairs;
// a merge replaces them left to right without overlap): the corpus got shorter by the merged ones
function overlaps(d, k) {
  const [l, r, , count, after] = d.merges[k], merged = (k ? d.merges[k - 1][4] : d.length0) - after;
  if (merged >= count) return "";
  // only a pair of one token twice can overlap itself (the caption is text: no escaping)
  const aaa = `${d.names[l]} ${d.names[r]} ${d.names[r]}`;
  const why = l === r ? `: in ${aaa} the pair occurs twice, but once the first two merge the third stands alone` : "";
  return `The pair occurs ${fmt(count)} times in the corpus counting overlapping occurrences, but only ` +
    `${fmt(merged)} of them do not overlap, and only those merge${why}. `;
}

function pairRows(d, k) {  // ui.plumbing.charts.pair_rows is the reference
  const flat = d.pairs[k], count = d.merges[k][3], rows = [];
  for (let j = 0; j < flat.length; j += 3) {
    const rank = j / 3, c = flat[j + 2];
    const status = d.status[rank === 0 ? 0 : c === count ? 1 : 2];
    rows.push({pair: `${d.names[flat[j]]} + ${d.names[flat[j + 1]]}`, count: c, status, rank});
  }
  return rows;
}

// -- the merge table: rows made once, as far as the step has gone; those past it hidden ----------
function tableRow(d, j) {
  const [l, r, nw, count] = d.merges[j];
  return `<tr data-step="${j + 1}"><td>${j + 1}</td><td>${named(d, l)} + ${named(d, r)}</td>` +
    `<td>${named(d, nw)}</td><td>${nw}</td><td>${fmt(count)}</td></tr>`;
}

function showTable(v) {
  const body = v.el.tbody, k = v.k;
  while (v.rowsMade < k) {
    const stop = Math.min(v.d.n, Math.max(k, v.rowsMade + TABLE_CHUNK));
    const rows = [];
    for (let j = v.rowsMade; j < stop; j++) rows.push(tableRow(v.d, j));
    body.insertAdjacentHTML("beforeend", rows.join(""));
    for (let j = v.rowsMade; j < stop; j++) body.rows[j].hidden = true;
    v.rowsMade = stop;
  }
  for (let j = Math.min(k, v.rowsShown); j < Math.max(k, v.rowsShown); j++) body.rows[j].hidden = j >= k;
  v.rowsShown = k;
  body.querySelector("tr.current")?.classList.remove("current");
  v.el.tableNote.textContent = k ? "" : "No merge yet.";
  if (!k) return;
  body.rows[k - 1].classList.add("current");
  if (!v.scrolling) v.scrolling = requestAnimationFrame(() => scrollTable(v));
}

// the current row brought into the table's view, in the frame's own layout (read in the middle of
// a step, the row's position would force a layout of the whole page: 15 ms a step)
function scrollTable(v) {
  v.scrolling = null;
  const row = v.el.tbody.querySelector("tr.current"), scroll = v.el.tableScroll;
  if (!row) return;
  const below = row.offsetTop + row.offsetHeight - scroll.clientHeight;
  if (scroll.scrollTop < below || scroll.scrollTop > row.offsetTop) scroll.scrollTop = Math.max(0, below);
}

// -- the charts: Vega draws them; a step refills the pairs chart's data set and moves the curves'
// cursors, lines laid over the curves (a refill made Vega draw each curve anew: 8 ms a step) -----
function loadVega(src) {
  if (window.vegaEmbed) return Promise.resolve();
  if (!vegaLoading) {
    vegaLoading = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      const base = window.location.pathname.replace(/[^/]*$/, "");
      script.src = base + src;
      script.onload = resolve;
      script.onerror = () => { vegaLoading = null; reject(new Error(`could not load ${script.src}`)); };
      document.head.appendChild(script);
    });
  }
  return vegaLoading;
}

function chartConfig(root) {
  const css = getComputedStyle(root), text = css.getPropertyValue("--st-text-color").trim() || "#31333f";
  const axis = {labelColor: text, titleColor: text, gridColor: "rgba(128,128,128,.25)", domainColor: text};
  return {background: null, axis, legend: {labelColor: text}, title: {color: text}, view: {stroke: null}};
}

async function drawCharts(v) {
  try {
    await loadVega(v.d.vega);
  } catch (error) {
    v.el.pairsChart.textContent = `The charts could not be drawn: ${error.message}.`;
    return;
  }
  if (current !== v) return;  // left, or another payload came, while Vega loaded
  const options = {actions: false, renderer: "canvas", config: chartConfig(v.root)};
  const curves = Object.values(v.d.charts.curves);
  const specs = [[v.el.pairsChart, v.d.charts.pairs], ...v.el.curves.map((el, i) => [el, curves[i]])];
  specs.forEach(([el]) => { el.textContent = ""; });  // the "Drawing…" notes
  const results = await Promise.all(specs.map(([el, spec]) => window.vegaEmbed(el, spec, options)));
  if (current !== v) { results.forEach((r) => r.finalize()); return; }
  v.charts = results.map((r) => r.view);
  // each chart's element holds its view, as an SVG chart's elements hold their scene items: where a
  // test reads what Vega laid out (tests/app/chart_geometry.js)
  specs.forEach(([el], i) => { el.vegaView = results[i].view; });
  v.cursors = v.el.curves.map((el, i) => {
    const line = document.createElement("div");
    line.className = "bpe-cursor";
    el.append(line);
    v.charts[i + 1].addResizeListener(() => { measureCursors(v); placeCursors(v); });
    return line;
  });
  measureCursors(v);
  updateCharts(v);
  watchTheme(v, options.config.axis.labelColor);
}

// Vega paints its canvas with the colours it was given: when the theme changes under an open page
// (Streamlit's settings menu, no rerun), the charts are drawn again in the new theme's text colour;
// a computed style read once a second, while this payload is the one shown
function watchTheme(v, drawnWith) {
  clearInterval(v.themeWatch);
  v.themeWatch = setInterval(() => {
    if (current !== v) { clearInterval(v.themeWatch); return; }
    if (chartConfig(v.root).axis.labelColor === drawnWith) return;
    clearInterval(v.themeWatch);
    v.charts.forEach((view) => view.finalize());
    v.charts = null;
    drawCharts(v);
  }, THEME_CHECK_MS);
}

// where each curve's canvas stands in its box, read once a layout (a read in a step would force the
// page's layout there)
function measureCursors(v) {
  v.canvases = v.el.curves.map((el) => {
    const box = el.getBoundingClientRect(), canvas = el.querySelector("canvas")?.getBoundingClientRect() || box;
    return [canvas.left - box.left, canvas.top - box.top];
  });
}

// each cursor at the step's x in its plot (no layout read: Vega's scale, and where it draws the plot,
// its origin inside the padding the specs' autosize keeps)
function placeCursors(v) {
  v.cursors.forEach((line, i) => {
    const view = v.charts[i + 1], [left, top] = v.canvases[i], padding = view.padding();
    const [x, y] = [view.origin()[0] + padding.left, view.origin()[1] + padding.top];
    line.style.transform = `translate(${(left + x + view.scale("x")(v.k) - 1).toFixed(1)}px, ${top + y}px)`;
    line.style.height = `${view.height()}px`;
  });
}

function refill(view, name, rows) {
  view.data(name, rows).runAsync();  // the data set replaced: Vega redraws what depends on it
}

function updateCharts(v) {
  const k = v.k, d = v.d;
  v.el.pairsTitle.textContent = k < d.n ? `Top pairs before merge ${k + 1}` : "No more merges to choose.";
  v.el.pairsBox.hidden = k >= d.n;
  if (!v.charts) return;
  const [pairs] = v.charts;
  if (k < d.n) {
    const rows = pairRows(d, k);
    refill(pairs, "pairs", rows);
    v.el.pairsChart.dataset.rows = JSON.stringify(rows);  // what the chart shows, for tests
  } else delete v.el.pairsChart.dataset.rows;
  placeCursors(v);
}

// -- one step on screen -------------------------------------------------------------------------
function draw(v, full) {
  const d = v.d, k = v.k, el = v.el;
  const hitList = k < d.n ? pairIndices(v.seq, d.merges[k]) : [];
  const began = performance.now();
  if (full || hasGroups(d, v.seq)) redraw(v, hitList);
  else patch(v, hitList);
  el.head.innerHTML = sentence(d, k);
  el.caption.textContent = caption(d, k, hitList.length);
  el.vocab.textContent = fmt(d.base_vocab + k);
  el.corpus.textContent = fmt(k ? d.merges[k - 1][4] : d.length0);
  el.shown.textContent = fmt(v.seq.length);
  el.count.textContent = fmt(k);
  el.slider.value = String(k);
  v.root.dataset.step = String(k);
  v.root.dataset.hits = hitList.join(",");  // the highlighted pairs' first tokens, for tests
  showTable(v);
  updateCharts(v);
  showButtons(v);
  v.root.dataset.drawMs = (performance.now() - began).toFixed(1);  // the page's own cost of a step
  memory.step = k;
  saveToUrl(v);
}

// to step `k`: merges applied or undone from the step shown; one step forward is drawn in place
function go(v, k) {
  k = Math.max(0, Math.min(v.d.n, k));
  if (k === v.k) return;
  const forwardOne = k === v.k + 1 && !hasGroups(v.d, v.seq);
  while (v.k < k) { v.seq = applyMerge(v.seq, v.d.merges[v.k]); v.k += 1; }
  while (v.k > k) { v.k -= 1; v.seq = undoMerge(v.seq, v.d.merges[v.k]); }
  draw(v, !forwardOne);
}

// The link holds the step.  A click or a key press writes it at once (a reload takes the URL as it
// was when the reload began, so a reload right after a click keeps the step); what follows a clock
// or a held key (a play, an arrow key's repeats, the slider dragged) is written a few times a second,
// not 20: Chromium ignores a page's URL changes past 200 in 10 s.
function saveToUrl(v, now = false) {
  clearTimeout(v.urlTimer);
  v.urlTimer = null;
  const write = () => {
    v.urlTimer = null;
    const url = new URL(window.location.href);
    if (v.k) url.searchParams.set(v.d.param, String(v.k));
    else url.searchParams.delete(v.d.param);
    if (url.href !== window.location.href) window.history.replaceState(window.history.state, "", url.href);
  };
  if (now) write();
  else v.urlTimer = setTimeout(write, URL_EVERY_MS);
}

// -- Play: the step follows the clock (start + rate x elapsed), at most one merge a frame ---------
function settled(v, now) {  // the clock starts once frames come smoothly
  const smooth = v.lastFrame !== null && now - v.lastFrame < SMOOTH_MS;
  v.smoothFrames = smooth ? v.smoothFrames + 1 : 0;
  v.lastFrame = now;
  if (v.smoothFrames < 2 && now - v.playStart < SETTLE_MAX_MS) return false;
  Object.assign(v, {started: true, anchorK: v.k, anchorTime: now, rateFrom: v.k, rateTime: now});
  return true;
}

function tick(v, now) {
  v.frame = null;
  if (!v.playing) return;
  if (!v.started && !settled(v, now)) { v.frame = requestAnimationFrame((t) => tick(v, t)); return; }
  const due = v.anchorK + Math.floor((now - v.anchorTime) * v.speed / 1000);
  if (due > v.k && v.k < v.d.n) {
    go(v, v.k + 1);
    v.shownRate = (v.k - v.rateFrom) / Math.max((now - v.rateTime) / 1000, 1e-3);
    v.root.dataset.rate = v.shownRate.toFixed(3);
  }
  if (v.k >= v.d.n) { pause(v); return; }
  v.frame = requestAnimationFrame((t) => tick(v, t));
}

function play(v) {
  if (v.k >= v.d.n) return;
  Object.assign(v, {playing: true, started: false, playStart: performance.now(), lastFrame: null,
                    smoothFrames: 0, shownRate: null});
  v.root.dataset.playing = "true";
  const focused = document.activeElement;  // read before Play hides: a hidden button loses it
  showButtons(v);
  handOver(v, focused === v.el.buttons.play, v.el.buttons.pause);
  v.frame = requestAnimationFrame((t) => tick(v, t));
}

function pause(v) {
  v.playing = false;
  if (v.frame) cancelAnimationFrame(v.frame);
  v.frame = null;
  v.root.dataset.playing = "false";
  const focused = document.activeElement;
  showButtons(v);
  handOver(v, focused === v.el.buttons.pause, v.el.buttons.play);
  saveToUrl(v, true);
}

// Play and Pause take each other's place: the keyboard's focus follows, never lost to the page
function handOver(v, had, to) {
  if (had) (to.disabled ? v.root : to).focus();
}

function setSpeed(v, speed) {
  v.speed = speed;
  if (v.playing && v.started) Object.assign(v, {anchorK: v.k, anchorTime: performance.now(),
                                                rateFrom: v.k, rateTime: performance.now()});
}

function showButtons(v) {
  const {k, playing} = v, n = v.d.n, b = v.el.buttons, focused = document.activeElement;
  b.reset.disabled = playing || k === 0;
  b.previous.disabled = playing || k === 0;
  b.next.disabled = playing || k >= n;
  b.all.disabled = playing || k >= n;
  b.play.hidden = playing;
  b.play.disabled = k >= n;
  b.pause.hidden = !playing;
  v.el.slider.disabled = playing;
  // a control just disabled (Next at the last merge) keeps no focus: the view takes it, arrows and all
  if (focused && focused.disabled && v.root.contains(focused)) v.root.focus();
}

// -- the skeleton, made once a mount ------------------------------------------------------------
function skeleton(d) {
  const speeds = d.speeds.map((s) => `<option value="${s}"${s === d.speed ? " selected" : ""}>${s}</option>`).join("");
  const metric = (label, cls) => `<div class="bpe-metric"><div class="bpe-metric-label">${label}</div>` +
    `<div class="bpe-metric-value ${cls}"></div></div>`;
  return `<div class="bpe-controls">` +
    `<button type="button" data-do="reset">⏮ Reset</button>` +
    `<button type="button" data-do="previous">◀ Previous</button>` +
    `<button type="button" data-do="play" class="primary">▶ Play</button>` +
    `<button type="button" data-do="pause" class="primary" hidden>⏸ Pause</button>` +
    `<button type="button" data-do="next">Next ▶</button>` +
    `<button type="button" data-do="all">All merges ⏭</button>` +
    `<label class="bpe-speed">Play speed <select aria-label="Play speed (merges per second)">${speeds}</select> merges/s</label>` +
    `</div>` +
    `<label class="bpe-slider">Merges done <input type="range" min="0" max="${d.n}" step="1" aria-label="Merges done">` +
    `<span><b class="bpe-count"></b> of ${fmt(d.n)}</span></label>` +
    `<div class="bpe-note bpe-keys">Keys, anywhere on the page but in a text box: <kbd>→</kbd>, <kbd>n</kbd> ` +
    `or <kbd>j</kbd> next merge; <kbd>←</kbd>, <kbd>p</kbd> or <kbd>k</kbd> previous.</div>` +
    `<div class="bpe-head"></div><div class="bpe-caption"></div>` +
    `<div class="bpe-metrics">${metric("Vocabulary size", "vocab")}${metric("Corpus tokens", "corpus")}` +
    `${metric("Tokens in the text shown", "shown")}</div>` +
    `<div class="bpe-step-text"></div>` +
    `<div class="bpe-row"><div class="bpe-pairs"><div class="bpe-pairs-title"></div>` +
    `<div class="bpe-pairs-chart"><span class="bpe-note">Drawing the chart…</span></div>` +
    `<div class="bpe-note">Ties are orange and marked “= tie”: same count as the winner (marked “▲ merged”), ` +
    `but the winner occurs first in the text.</div></div>` +
    `<div class="bpe-table"><b>Merges so far</b><div class="bpe-table-scroll"><table><thead><tr><th>step</th>` +
    `<th>pair</th><th>new token</th><th>id</th><th>count</th></tr></thead><tbody></tbody></table>` +
    `<div class="bpe-note bpe-table-note"></div></div></div></div>` +
    `<div class="bpe-curves"><div class="bpe-curve"><span class="bpe-note">Drawing the curves…</span></div>` +
    `<div class="bpe-curve"></div></div>`;
}

function elements(root) {
  const q = (s) => root.querySelector(s), button = (name) => q(`button[data-do="${name}"]`);
  return {
    buttons: {reset: button("reset"), previous: button("previous"), play: button("play"), pause: button("pause"),
              next: button("next"), all: button("all")},
    speed: q(".bpe-speed select"), slider: q(".bpe-slider input"), count: q(".bpe-count"), head: q(".bpe-head"),
    caption: q(".bpe-caption"), vocab: q(".vocab"), corpus: q(".corpus"), shown: q(".shown"), text: q(".bpe-step-text"),
    pairsBox: q(".bpe-pairs"), pairsTitle: q(".bpe-pairs-title"), pairsChart: q(".bpe-pairs-chart"),
    tbody: q(".bpe-table tbody"), tableScroll: q(".bpe-table-scroll"), tableNote: q(".bpe-table-note"),
    curves: [...root.querySelectorAll(".bpe-curve")],
  };
}

// the keys that step the view from anywhere on the page (the page says which: skeleton's keys note)
// (not Home and End: they scroll the page)
const KEYS = {ArrowRight: 1, n: 1, j: 1, ArrowLeft: -1, p: -1, k: -1};
const TYPING = new Set(["INPUT", "TEXTAREA", "SELECT"]);
const OWN_KEYS = /^(slider|textbox|combobox|listbox|spinbutton|tab|menu|menuitem|option|radio)$/;
// the page's own scrolling containers, which take the focus on a click anywhere in them
const PAGE = '[data-testid="stApp"], [data-testid="stMain"], [data-testid="stSidebar"] *';

// the document whose keys step the view: the page's own, or the page around a frame of the same
// origin (a frame of another origin may not listen there: its own document then)
function keysFrom(root) {
  try {
    if (window.parent !== window && window.parent.document) return window.parent.document;
  } catch (error) { /* another origin */ }
  return root.ownerDocument;
}

// a key meant for what has the focus: typed into a box, a widget's own (a slider's arrows), a
// region outside the view that took the focus to scroll by keys (a merge tree's box), or with a
// modifier (the browser's and the system's shortcuts)
function typing(v, event) {
  const t = event.target;
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return true;
  if (!t || t.nodeType !== 1) return false;
  if (!v.root.contains(t) && t.hasAttribute("tabindex") && t.tabIndex >= 0 && !t.matches(PAGE)) return true;
  return TYPING.has(t.tagName) || t.isContentEditable || OWN_KEYS.test(t.getAttribute("role") || "");
}

// the view's listeners, removed with it: a rerun with new data mounts a new view on the same root
function listen(v) {
  const actions = {reset: () => go(v, 0), previous: () => go(v, v.k - 1), next: () => go(v, v.k + 1),
                   all: () => go(v, v.d.n), play: () => play(v), pause: () => pause(v)};
  const on = (target, type, handler) => target.addEventListener(type, handler, {signal: v.listening.signal});
  on(v.root, "click", (event) => {
    const button = event.target.closest && event.target.closest("button[data-do]");
    if (!button || button.disabled) return;
    actions[button.dataset.do]();
    if (!v.playing) saveToUrl(v, true);
  });
  on(v.el.slider, "input", () => go(v, Number(v.el.slider.value)));
  on(v.el.slider, "change", () => saveToUrl(v, true));  // the slider let go of: its step at once
  on(v.el.speed, "change", () => setSpeed(v, Number(v.el.speed.value)));
  on(keysFrom(v.root), "keydown", (event) => {
    const move = KEYS[event.key];
    if (!move || v.playing || typing(v, event)) return;
    go(v, v.k + move);
    if (!event.repeat) saveToUrl(v, true);
    event.preventDefault();
  });
  on(v.root, "mouseover", (event) => titleOnHover(v.d, event));
}

// the view goes: its clock, listeners and Vega views (each holds a window listener and a canvas)
// with it; a step not yet in the URL is written only while the URL is still Learn BPE's
function unmount(v) {
  v.playing = false;
  cancelAnimationFrame(v.frame);
  cancelAnimationFrame(v.scrolling);
  if (v.urlTimer !== null && window.location.pathname === v.path) saveToUrl(v, true);
  clearTimeout(v.urlTimer);
  (v.charts || []).forEach((view) => view.finalize());
  v.charts = null;
  v.lines?.disconnect();
  if (v.laterCall) cancelIdle(v.laterCall);
  v.listening.abort();
  if (current === v) current = null;
}

function mount(root, d, step) {
  root.innerHTML = skeleton(d);
  root.tabIndex = 0;  // a stop for the keyboard: the view's own controls come next
  const v = {root, d, el: elements(root), seq: initialSequence(d), k: 0, playing: false, frame: null,
             speed: d.speed, rowsMade: 0, rowsShown: 0, charts: null, urlTimer: null, scrolling: null,
             lines: null, far: new WeakSet(), later: [], laterCall: null,
             listening: new AbortController(), path: window.location.pathname};
  listen(v);
  while (v.k < step) { v.seq = applyMerge(v.seq, d.merges[v.k]); v.k += 1; }
  draw(v, true);
  return v;
}

export default function (component) {
  const {data, parentElement} = component;
  const root = parentElement.querySelector(".bpe-step");
  if (!root || !(data instanceof Uint8Array)) return;
  const {epoch, step, d} = readPayload(data);
  const reset = memory.epoch !== epoch;  // a new corpus or new settings: the server's step
  if (reset) memory = {epoch, step};
  if (!current || current.d !== d || current.root !== root || !root.firstChild) {
    if (current) unmount(current);
    current = mount(root, d, Math.max(0, Math.min(d.n, memory.step)));
    drawCharts(current);
  } else if (reset) {
    go(current, step);  // the same tokenizer again (the same sample picked anew): back to its step
  }
  const v = current;
  // a rerun may bring an address without the step (the browser's Back restores an older one, and
  // Streamlit writes the query it knows, which never holds the step): the link holds it again
  if (v.urlTimer === null && window.location.pathname === v.path) saveToUrl(v, true);
  return () => {  // the page was left, or is about to draw the view again: only the first stops it
    setTimeout(() => { if (!root.isConnected && current === v) unmount(v); }, 0);
  };
}
