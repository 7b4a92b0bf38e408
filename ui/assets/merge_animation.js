// The Learn BPE animation, played in the browser (mounted by ui/animation.py).
//
// Python sends, once per play, the window's tokens after `start` merges, the merges still to come
// and how each token that can appear is drawn (escaped HTML built by ui/render.py). Here the merges
// are applied one by one, left to right without overlap inside a chunk (as core.bpe.explain does),
// the pair about to merge is highlighted, and the text is redrawn with the same markup as
// ui.render.token_spans_html. The step shown follows the clock (start + rate x elapsed) but never
// skips a merge: at most one per animation frame, so every merge is on screen for a frame at least.
// Pause (the page's own Streamlit button, caught before Streamlit sees the click) and the last
// merge stop the clock at once; the step on screen is then sent to Python as the "report" trigger.

const plays = new Map();  // play id -> progress: survives the component being drawn again
const SMOOTH_MS = 50, SETTLE_MAX_MS = 3000;

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => (
  {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}[c]));

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

function initialSequence(d) {
  return d.ids.map((id, i) => ({id, chunk: d.chunks[i], gap: d.gaps[i] || ""}));
}

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
    if (at.has(i)) { out.push({id: m[2], chunk: seq[i].chunk, gap: seq[i].gap, parts: [seq[i], seq[i + 1]]}); i++; }
    else out.push(seq[i]);
  }
  return out;
}

// runs of tokens that spell whole characters: [first, stop) (byte tokens split a character)
function characterRuns(d, seq) {
  const runs = [];
  let first = 0;
  for (let i = 1; i <= seq.length; i++) {
    if (i === seq.length || !d.grouping || !d.cont[seq[i].id]) { runs.push([first, i]); first = i; }
  }
  return runs;
}

// classes, not inline styles: a step redraws thousands of tokens (the rules: ui/animation.py)
function tokenHtml(d, t, n, hits, inGroup) {
  const [face, partial, br] = d.faces[t.id];
  const hit = hits.has(n) || hits.has(n - 1);
  const cls = (hit ? "tok tok-hit" : `tok c${n % 2}`) + (inGroup ? " in-group" : partial ? " partial" : "");
  return `<span class="${cls}" data-id="${t.id}">${inGroup ? esc(d.hex[t.id]) : face}</span>${br ? "<br>" : ""}`;
}

function titleOnHover(d, event) {  // what hovering shows, made when first hovered
  const t = event.target.closest && event.target.closest(".tok[data-id]");
  if (t && !t.title) t.title = `id ${t.dataset.id}: ${d.names[t.dataset.id]}, bytes ${d.hex[t.dataset.id]}`;
}

function textHtml(d, seq, hitList) {
  const hits = new Set(hitList), runs = characterRuns(d, seq), st = d.styles;
  const single = new Set(runs.filter(([a, b]) => b - a === 1).map(([a]) => a));
  const sameRun = (n) => runs.some(([a, b]) => a <= n && n + 1 < b);
  const wrapped = new Set(hitList.filter((n) => (single.has(n) && single.has(n + 1)) || sameRun(n)));
  const out = [];
  for (const [first, stop] of runs) {
    out.push(seq[first].gap);
    const group = stop - first > 1;
    if (group) {
      const hex = seq.slice(first, stop).map((t) => d.hex[t.id]).join(" "), chars = decodeHex(hex);
      const title = `${chars}: ${stop - first} byte tokens, bytes ${hex}`;
      out.push(`<span class="bpe-char" title="${esc(title)}"><span class="bpe-glyph">${visibleHtml(d, chars)}` +
        `</span><span style="display:inline-flex;gap:1px">`);
    }
    for (let n = first; n < stop; n++) {
      if (wrapped.has(n)) out.push(`<span class="bpe-hit">`);
      out.push(tokenHtml(d, seq[n], n, hits, group));
      if (wrapped.has(n - 1)) out.push("</span>");
    }
    if (group) out.push("</span></span>");
  }
  out.push(d.tail);
  const legend = [d.legend, runs.length < seq.length ? d.group_legend : ""].filter(Boolean).join(" ");
  return `<div class="bpe-text" data-view="${esc(d.view)}" style="${st.container}">${out.join("")}</div>` +
    (legend ? `<div class="bpe-legend" style="${st.legend}">${legend}</div>` : "");
}

function hasGroups(d, seq) {
  return d.grouping && characterRuns(d, seq).length < seq.length;
}

// the whole text drawn anew; each token remembers its element (and the line break after it)
function redraw(p, hitList) {
  const box = p.root.querySelector(".bpe-anim-text"), scroll = box.firstElementChild?.scrollTop || 0;
  box.innerHTML = textHtml(p.data, p.seq, hitList);
  if (box.firstElementChild) box.firstElementChild.scrollTop = scroll;
  const els = box.querySelectorAll(".tok");
  p.seq.forEach((t, i) => {
    const after = els[i].nextSibling;
    Object.assign(t, {el: els[i], br: after && after.nodeName === "BR" ? after : null, parts: null});
  });
}

function nodesOf(html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  return [...template.content.childNodes];
}

// one merge drawn in place (text without byte groups): each merged pair, drawn in its yellow
// outline, becomes one new token; the next pair is outlined; colours follow the new positions.
// Laying out thousands of new boxes a step is what a full redraw would cost.
function patch(p, hitList) {
  const d = p.data, hits = new Set(hitList);
  for (const t of p.seq) {
    if (!t.parts) continue;
    const [a, b] = t.parts, wrapper = a.el.parentNode;
    const nodes = nodesOf(tokenHtml(d, t, 0, hits, false));
    [t.el, t.br, t.parts] = [nodes[0], nodes[1] || null, null];
    if (wrapper.classList.contains("bpe-hit")) wrapper.replaceWith(...nodes);
    else { a.el.before(...nodes); [a.el, a.br, b.el, b.br].forEach((n) => n && n.remove()); }
  }
  for (const i of hitList) {
    const outline = document.createElement("span"), [a, b] = [p.seq[i], p.seq[i + 1]];
    outline.className = "bpe-hit";
    a.el.before(outline);
    outline.append(...[a.el, a.br, b.el, b.br].filter(Boolean));
  }
  p.seq.forEach((t, n) => {
    const cls = (hits.has(n) || hits.has(n - 1) ? "tok tok-hit" : `tok c${n % 2}`) + (d.faces[t.id][1] ? " partial" : "");
    if (t.el.className !== cls) t.el.className = cls;
  });
}

function headText(d, k) {
  if (k >= d.n) return `The last merge is done: ${d.n.toLocaleString("en")} of ${d.n.toLocaleString("en")}`;
  const [l, r, nw, count] = d.merges[k - d.start];
  return `Merge ${k + 1} of ${d.n.toLocaleString("en")}: ${d.names[l]} + ${d.names[r]} → ${d.names[nw]} ` +
    `(count ${count.toLocaleString("en")})`;
}

// the step's heading, counter and statistics; the text redrawn (`full`) or patched
function draw(p, full) {
  const d = p.data, k = p.k, el = p.root;
  if (!el) return;
  const m = k < d.n ? d.merges[k - d.start] : null;
  const corpus = k === d.start ? d.length0 : d.merges[k - 1 - d.start][4];
  const rate = p.shownRate === null ? "" : ` · playing at ${p.shownRate.toFixed(1)} merges/s`;
  el.querySelector(".bpe-anim-head").textContent = headText(d, k);
  const counter = el.querySelector(".bpe-anim-step");
  counter.textContent = k.toLocaleString("en");
  counter.dataset.step = String(k);
  el.querySelector(".bpe-anim-bar").value = k;
  el.querySelector(".bpe-anim-stats").textContent =
    `Vocabulary size ${(d.base_vocab + k).toLocaleString("en")} · corpus tokens ` +
    `${corpus.toLocaleString("en")} · tokens in the text shown ${p.seq.length.toLocaleString("en")}` + rate;
  el.dataset.rate = p.shownRate === null ? "" : p.shownRate.toFixed(3);
  el.dataset.playing = p.stopped ? "false" : "true";
  const began = performance.now(), hitList = m ? pairIndices(p.seq, m) : [];
  if (full || hasGroups(d, p.seq)) redraw(p, hitList);
  else patch(p, hitList);
  el.dataset.drawMs = (performance.now() - began).toFixed(1);  // the page's own cost of a step
}

function stop(p) {
  if (!p.stopped) {
    p.stopped = true;
    if (p.frame) cancelAnimationFrame(p.frame);
    p.frame = null;
    if (p.root) p.root.dataset.playing = "false";
  }
  p.report({play: p.data.play, step: p.k});  // again on a second Pause: a report may be lost
}

// The clock starts once frames come smoothly: right after Play the page itself is busy redrawing
// (Streamlit replaces the step's charts), and a clock started then would begin behind.
function settled(p, now) {
  const smooth = p.lastFrame !== null && now - p.lastFrame < SMOOTH_MS;
  p.smoothFrames = smooth ? p.smoothFrames + 1 : 0;
  p.lastFrame = now;
  if (p.smoothFrames < 2 && now - p.mountTime < SETTLE_MAX_MS) return false;
  Object.assign(p, {started: true, anchorTime: now, startTime: now});
  return true;
}

function tick(p, now) {
  p.frame = null;
  if (p.stopped) return;
  if (!p.started && !settled(p, now)) { p.frame = requestAnimationFrame((t) => tick(p, t)); return; }
  const due = p.anchorK + Math.floor((now - p.anchorTime) * p.rate / 1000);
  if (due > p.k && p.k < p.data.n) {
    const grouped = hasGroups(p.data, p.seq);  // a merge inside a character's bytes: drawn anew
    p.seq = applyMerge(p.seq, p.data.merges[p.k - p.data.start]);
    p.k += 1;
    p.shownRate = (p.k - p.rateFrom) / Math.max((now - p.startTime) / 1000, 1e-3);
    draw(p, grouped);
  }
  if (p.k >= p.data.n) { stop(p); return; }
  p.frame = requestAnimationFrame((t) => tick(p, t));
}

function skeleton(d) {
  return `<div class="bpe-anim-top" style="font-size:15px"><b class="bpe-anim-head"></b></div>` +
    `<div style="display:flex;align-items:center;gap:8px;margin:4px 0;font-size:14px">` +
    `<span>Merges done: <b class="bpe-anim-step" data-step="${d.start}">${d.start}</b> of ${d.n}</span>` +
    `<progress class="bpe-anim-bar" max="${d.n}" value="${d.start}" style="flex:1"></progress></div>` +
    `<div class="bpe-anim-stats" style="font-size:13px;opacity:.8;margin-bottom:4px"></div>` +
    `<div class="bpe-anim-text"></div>`;
}

export default function (component) {
  const {data, parentElement, setTriggerValue} = component;
  const root = parentElement.querySelector(".bpe-anim");
  if (!root || !data || !Array.isArray(data.ids)) return;
  let p = plays.get(data.play);
  const now = performance.now();
  if (!p) {
    p = {data, seq: initialSequence(data), k: data.start, stopped: false, frame: null, shownRate: null,
         rate: data.rate, anchorK: data.start, anchorTime: now, startTime: now, rateFrom: data.start,
         started: false, mountTime: now, lastFrame: null, smoothFrames: 0};
    for (const old of plays.values()) { old.stopped = true; if (old.frame) cancelAnimationFrame(old.frame); }
    plays.clear();  // only the newest play is kept
    plays.set(data.play, p);
  } else if (p.rate !== data.rate && !p.stopped) {  // a new speed: from the merge shown, at once
    Object.assign(p, {rate: data.rate, anchorK: p.k, anchorTime: now, startTime: now, rateFrom: p.k});
  }
  p.report = (value) => setTriggerValue("report", value);
  if (p.root !== root || !root.firstChild) {  // drawn anew (the page was left and came back)
    root.innerHTML = skeleton(p.data);
    root.onmouseover = (event) => titleOnHover(p.data, event);
    if (p.root) Object.assign(p, {anchorK: p.k, anchorTime: now});  // on from here, not racing ahead
    p.root = root;
    draw(p, true);
  }
  const onClick = (event) => {
    const button = event.target && event.target.closest ? event.target.closest(`.st-key-${data.pause} button`) : null;
    if (!button) return;
    event.preventDefault();
    event.stopPropagation();  // capture phase on the document: Streamlit never sees this click
    stop(p);
  };
  if (p.onClick) document.removeEventListener("click", p.onClick, true);  // drawn again: one listener
  p.onClick = onClick;
  document.addEventListener("click", onClick, true);
  if (!p.stopped && !p.frame) p.frame = requestAnimationFrame((t) => tick(p, t));
  return () => {
    document.removeEventListener("click", onClick, true);
    if (p.frame) cancelAnimationFrame(p.frame);
    p.frame = null;
  };
}
