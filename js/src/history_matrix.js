// @ts-check
// ragtt HistoryMatrix: a question set evaluated at many index versions, as a heatmap drawn on
// one canvas (one image pixel per cell, scaled; never one DOM node per cell). Rows are
// questions, columns evaluated versions, labelled as the Timeline's version axis labels them
// (js/src/labels.js). A metric picker; hover shows a cell's value, question, version and run;
// a click opens, in the widget, the ChunkDiff between the cell's run and the question's run at
// the previous evaluated column (the ChunkDiff's own view, js/src/chunk_diff.js), and a click
// on a question opens its Timeline (js/src/timeline.js). Below the heatmap, the picked metric's
// "got worse" list: each question that fell below the got-worse threshold, since when and why;
// a click on one opens its cell. What they show comes from the state
// (ragtt/views/history_matrix.py), or, where the state's bounds left it out, from the
// kernel (or ragtt's server) over model.send; with neither (an offline report), the view says so.
// Untrusted text (questions, labels, chunk text, reasons) reaches the DOM only as text nodes.
//
// Test hooks on the root: `data-painted` (set after the first paint), `data-metric`,
// `data-axis-labels` (the column labels drawn, JSON), `data-panel` ("diff", "same", "first",
// "none", "timeline", "waiting", "missing" or "error"), `data-worse` (the list: "list", "none",
// "waiting", "missing" or "error") and `data-worse-metric`; on the canvas, `data-cell-w`/`data-cell-h`,
// `data-left`/`data-top` (the heatmap's origin in CSS px).

import { button, el, themeColors } from "./dom.js";
import { joinBuffers, strings, typed } from "./wire.js";
import { counted, distinguishing, isoTimeText, placeLabels, slotText, versionLabel } from "./labels.js";
import { createModel } from "./model_shim.js";
import chunkDiff from "./chunk_diff.js";
import timelineView from "./timeline.js";

/** @typedef {import("./types.js").Model} Model */

const CELL = { NO_RUN: 0, FIRST: 1, SAME: 2, CHANGED: 3, UNKNOWN: 4 };
const QUANT = 65534, ABSENT = 65535;  // values travel as uint16 steps of 1 / QUANT (ragtt/views/history_matrix.py)
const GUTTER = 200;       // the question column, CSS px
const AXIS_H = 22;        // the version labels above the cells, CSS px
const PAD = 8;            // right padding, CSS px
const MAX_ROW = 22;       // tallest row, CSS px
const MAX_PLOT_H = 560;   // rows shrink (to 1 px) to keep the plot about this tall
const LABEL_ROW = 11;     // rows at least this tall get their question written in the gutter
const FETCH_WAIT_MS = 4000;
const WORSE_WAIT_MS = 60000;  // a got-worse list: the server works out every regression's reason first
// viridis at five stops: dark (0) to bright (1), readable by colour-blind readers and in print
const STOPS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];

/** 256 RGB colours along STOPS. */
const LUT = (() => {
  const lut = new Uint8Array(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (STOPS.length - 1), k = Math.min(STOPS.length - 2, Math.floor(t)), f = t - k;
    for (let ch = 0; ch < 3; ch++) lut[i * 3 + ch] = Math.round(STOPS[k][ch] + f * (STOPS[k + 1][ch] - STOPS[k][ch]));
  }
  return lut;
})();

/** @param {number} v a value in [0, 1] @returns {string} */
const cssColor = (v) => {
  const i = Math.max(0, Math.min(255, Math.round(v * 255))) * 3;
  return `rgb(${LUT[i]}, ${LUT[i + 1]}, ${LUT[i + 2]})`;
};

/** @param {any} d the `_data` trait */
function decode(d) {
  const versions = typed(d.columns.version);
  const nQ = d.questions.ids.length, nC = versions.length;
  const labels = /** @type {(string | null)[]} */ (d.columns.labels);
  const named = [...new Set(labels.filter((l) => l))];
  const short = distinguishing(/** @type {string[]} */ (named));
  /** @type {Record<string, string>} */
  const names = { ...(d.names || {}) };
  labels.forEach((l, i) => { if (l && !names[String(versions[i])]) names[String(versions[i])] = l; });
  const un = d.unparseable;
  const unCell = typed(un.cell), unMetric = typed(un.metric);
  /** @type {Map<string, Map<number, string>>} metric -> cell -> raw verdict */
  const unparseable = new Map();
  for (let k = 0; k < unCell.length; k++) {
    const m = d.metrics[unMetric[k]];
    if (!unparseable.has(m)) unparseable.set(m, new Map());
    unparseable.get(m)?.set(unCell[k], un.raw[k]);
  }
  const diffCells = typed(d.diffs.cell);
  const tl = d.timeline;
  const tlQuestions = typed(tl.question);
  const chunks = { ids: strings(d.chunks.ids), sources: d.chunks.sources, texts: strings(d.chunks.texts) };
  return {
    raw: d, nQ, nC, versions, labels, names, shortOf: new Map(named.map((l, i) => [/** @type {string} */ (l), short[i]])),
    questions: d.questions, metrics: /** @type {string[]} */ (d.metrics),
    /** @type {Map<string, Float32Array>} */ values: new Map(),
    cell: typed(d.cell), runs: d.runs ? strings(d.runs) : null, unparseable, chunks,
    diffOf: new Map(Array.from(diffCells, (c, k) => [c, k])),
    timelineOf: new Map(Array.from(tlQuestions, (q, k) => [q, k])),
    embed: d.embed,
    worse: { threshold: d.worse?.threshold ?? null, lists: new Map(Object.entries(d.worse?.metrics ?? {})) },
  };
}

/** @typedef {ReturnType<typeof decode>} Data */

/** A metric's values, decoded on first use. @param {Data} d @param {string} metric */
function valuesOf(d, metric) {
  let v = d.values.get(metric);
  if (!v) {
    v = new Float32Array(d.nQ * d.nC).fill(NaN);
    if (d.raw.values[metric]) {
      const q = typed(d.raw.values[metric]);
      for (let i = 0; i < q.length; i++) if (q[i] !== ABSENT) v[i] = q[i] / QUANT;
    }
    d.values.set(metric, v);
  }
  return /** @type {Float32Array} */ (v);
}

/** The column of the question's run before column `c` (-1: none). @param {Data} d @param {number} q @param {number} c */
function previousRun(d, q, c) {
  for (let k = c - 1; k >= 0; k--) if (d.cell[q * d.nC + k] !== CELL.NO_RUN) return k;
  return -1;
}

/** The column of the question's last run (-1: none): the run its Timeline shows. @param {Data} d @param {number} q */
function lastRun(d, q) {
  let c = d.nC - 1;
  while (c >= 0 && d.cell[q * d.nC + c] === CELL.NO_RUN) c--;
  return c;
}

/** @param {Data} d @param {number} c */
const columnLabel = (d, c) => versionLabel(d.versions[c], d.names);

/** The DOM of the view and its mutable state. @param {Model} model */
function createView(model) {
  const root = el("div", "ragtt-history-matrix tex2jax_ignore mathjax_ignore");
  const head = el("div", "ragtt-hm-head");
  const picker = el("select", "ragtt-hm-metric");
  picker.setAttribute("aria-label", "metric");
  const legend = el("span", "ragtt-hm-legend");
  const counts = el("span", "ragtt-hm-counts");
  head.append(el("span", "ragtt-hm-title", "History matrix"), picker, legend, counts);
  const plot = el("div", "ragtt-hm-plot");
  const canvas = el("canvas", "ragtt-hm-canvas");
  canvas.tabIndex = 0;
  canvas.setAttribute("role", "grid");
  canvas.setAttribute("aria-label", "questions by index versions: arrow keys move, Enter opens the cell's diff, "
    + "T the question's timeline");
  const tip = el("div", "ragtt-hm-tip");
  tip.hidden = true;
  plot.append(canvas, tip);
  const readout = el("div", "ragtt-hm-readout");
  readout.setAttribute("aria-live", "polite");
  const panel = el("div", "ragtt-hm-panel");
  const panelHead = el("div", "ragtt-hm-panel-head");
  const panelBody = el("div", "ragtt-hm-panel-body");
  panel.append(panelHead, panelBody);
  panel.hidden = true;
  const worse = el("section", "ragtt-hm-worse");
  const worseHead = el("div", "ragtt-hm-worse-head");
  const worseList = el("ol", "ragtt-hm-worse-list");
  worseList.setAttribute("aria-label", "questions that got worse: a click opens the cell");
  worse.append(worseHead, worseList);
  root.append(head, plot, readout, worse, panel);
  return {
    model, root, picker, legend, counts, plot, canvas, tip, readout, panel, panelHead, panelBody, worse, worseHead, worseList,
    d: decode(model.get("_data")),
    /** @type {HTMLCanvasElement | null} */ image: null, imageMetric: "",
    geo: { left: GUTTER, top: AXIS_H, cellW: 1, cellH: 1, w: 0, h: 0 },
    focus: { q: 0, c: 0 },
    /** @type {(() => void) | null} */ cleanup: null,
    /** @type {Map<string, any>} replies from the kernel, by request key */ replies: new Map(),
    /** @type {Map<string, ReturnType<typeof setTimeout>>} */ waiting: new Map(),
    /** @type {Set<string>} the got-worse lists asked for */ worseAsked: new Set(),
    /** @type {string} the request the panel waits for */ want: "",
    /** @type {{key: string, title: string, onReply: (reply: any) => void} | null} */ pending: null,
  };
}

/** @typedef {ReturnType<typeof createView>} View */

/** @param {View} V */
function colors(V) {
  return themeColors(V.root, {
    fg: ["--jp-ui-font-color1", "#333"], dim: ["--jp-ui-font-color2", "#777"], bg: ["--jp-layout-color1", "#fff"],
    hatch: ["--jp-border-color1", "#bbb"], bad: ["--jp-error-color1", "#d32f2f"],
    focus: ["--jp-brand-color1", "#1976d2"], font: ["--jp-ui-font-family", "system-ui, sans-serif"],
  });
}

/** The cells of `metric` as an image, one pixel per cell; absent cells transparent (the hatch
 *  under them shows). @param {View} V @param {string} metric */
function cellImage(V, metric) {
  const d = V.d, values = valuesOf(d, metric);
  const img = document.createElement("canvas");
  img.width = Math.max(1, d.nC);
  img.height = Math.max(1, d.nQ);
  const g = /** @type {CanvasRenderingContext2D} */ (img.getContext("2d"));
  const data = g.createImageData(img.width, img.height);
  const px = data.data;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== v) continue;  // NaN: absent
    const k = Math.max(0, Math.min(255, Math.round(v * 255))) * 3, o = i * 4;
    px[o] = LUT[k]; px[o + 1] = LUT[k + 1]; px[o + 2] = LUT[k + 2]; px[o + 3] = 255;
  }
  g.putImageData(data, 0, 0);
  return img;
}

/** A diagonal hatch for absent cells. @param {CanvasRenderingContext2D} g @param {Record<string, string>} c */
function hatch(g, c) {
  const tile = document.createElement("canvas");
  tile.width = tile.height = 6;
  const t = /** @type {CanvasRenderingContext2D} */ (tile.getContext("2d"));
  t.fillStyle = c.bg;
  t.fillRect(0, 0, 6, 6);
  t.strokeStyle = c.hatch;
  t.beginPath();
  t.moveTo(0, 6); t.lineTo(6, 0);
  t.stroke();
  return /** @type {CanvasPattern} */ (g.createPattern(tile, "repeat"));
}

/** Redraw the heatmap, the question column and the version axis. @param {View} V */
function draw(V) {
  const d = V.d, c = colors(V), metric = V.model.get("metric");
  const w = V.plot.clientWidth || 800;
  const cellH = Math.max(1, Math.min(MAX_ROW, Math.floor(MAX_PLOT_H / Math.max(1, d.nQ))));
  const plotW = Math.max(40, w - GUTTER - PAD), cellW = plotW / Math.max(1, d.nC);
  const h = AXIS_H + d.nQ * cellH + 4;
  const dpr = window.devicePixelRatio || 1;
  V.canvas.width = Math.round(w * dpr);
  V.canvas.height = Math.round(h * dpr);
  V.canvas.style.width = `${w}px`;
  V.canvas.style.height = `${h}px`;
  V.geo = { left: GUTTER, top: AXIS_H, cellW, cellH, w, h };
  Object.assign(V.canvas.dataset, { cellW: String(cellW), cellH: String(cellH), left: String(GUTTER), top: String(AXIS_H) });
  const g = /** @type {CanvasRenderingContext2D} */ (V.canvas.getContext("2d"));
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  g.font = `11px ${c.font}`;
  g.textBaseline = "middle";
  const H = d.nQ * cellH;
  g.fillStyle = hatch(g, c);
  g.fillRect(GUTTER, AXIS_H, plotW, H);
  if (V.imageMetric !== metric || !V.image) { V.image = cellImage(V, metric); V.imageMetric = metric; }
  g.imageSmoothingEnabled = false;
  g.drawImage(V.image, 0, 0, V.image.width, V.image.height, GUTTER, AXIS_H, plotW, H);
  drawUnparseable(V, g, c, metric);
  drawQuestions(V, g, c);
  drawAxis(V, g, c);
  // the focused cell
  const f = V.focus;
  g.strokeStyle = c.focus;
  g.lineWidth = 2;
  g.strokeRect(GUTTER + f.c * cellW - 1, AXIS_H + f.q * cellH - 1, Math.max(2, cellW) + 2, Math.max(2, cellH) + 2);
  V.root.dataset.metric = metric;
}

/** Crossed cells: the judge's verdict did not parse (its raw text is on hover).
 * @param {View} V @param {CanvasRenderingContext2D} g @param {Record<string, string>} c @param {string} metric */
function drawUnparseable(V, g, c, metric) {
  const cells = V.d.unparseable.get(metric);
  if (!cells) return;
  const { cellW, cellH } = V.geo;
  g.strokeStyle = c.bad;
  g.fillStyle = c.bad;
  g.lineWidth = 1.5;
  for (const cell of cells.keys()) {
    const x = GUTTER + (cell % V.d.nC) * cellW, y = AXIS_H + Math.floor(cell / V.d.nC) * cellH;
    if (cellW < 5 || cellH < 5) { g.fillRect(x, y, Math.max(2, cellW), Math.max(2, cellH)); continue; }
    g.beginPath();
    g.moveTo(x + 2, y + 2); g.lineTo(x + cellW - 2, y + cellH - 2);
    g.moveTo(x + cellW - 2, y + 2); g.lineTo(x + 2, y + cellH - 2);
    g.stroke();
  }
}

/** The questions in the gutter where rows are tall enough (canvas text: never parsed as HTML).
 * @param {View} V @param {CanvasRenderingContext2D} g @param {Record<string, string>} c */
function drawQuestions(V, g, c) {
  const d = V.d, { cellH } = V.geo;
  g.fillStyle = c.dim;
  if (cellH < LABEL_ROW) {
    g.fillText(counted(d.nQ, "question"), 4, AXIS_H / 2);
    return;
  }
  g.fillStyle = c.fg;
  for (let q = 0; q < d.nQ; q++) {
    let text = d.questions.texts[q];
    if (g.measureText(text).width > GUTTER - 10) {
      let n = text.length;
      while (n > 1 && g.measureText(`${text.slice(0, n)}…`).width > GUTTER - 10) n--;
      text = `${text.slice(0, n)}…`;
    }
    g.fillText(text, 4, AXIS_H + q * cellH + cellH / 2);
  }
}

/** Above the cells: each column's version, by its snapshot label's distinguishing part (as
 *  the Timeline's version axis), the focused column's label in full.
 * @param {View} V @param {CanvasRenderingContext2D} g @param {Record<string, string>} c */
function drawAxis(V, g, c) {
  const d = V.d, { cellW } = V.geo;
  const marks = Array.from(d.versions, (/** @type {number} */ v, i) => ({
    x: GUTTER + i * cellW + Math.min(cellW / 2, 4), text: slotText(v, d.names, d.shortOf), column: i,
  }));
  const f = marks[V.focus.c];
  const first = f ? { ...f, text: columnLabel(d, f.column) } : null;
  const boxes = placeLabels(g, marks.filter((m) => m !== f), GUTTER, V.geo.w - PAD, first);
  g.fillStyle = c.dim;
  for (const b of boxes) {
    g.fillStyle = b.mark === first ? c.focus : c.dim;
    g.fillText(b.text, b.x0, AXIS_H / 2);
    g.fillRect(Math.round(b.mark.x), AXIS_H - 4, 1, 4);
  }
  V.root.dataset.axisLabels = JSON.stringify(boxes.map((b) => b.text));
}

/** The cell (or the question, in the gutter) under a point. @param {View} V @param {MouseEvent} e */
function hit(V, e) {
  const r = V.canvas.getBoundingClientRect();
  const x = e.clientX - r.left, y = e.clientY - r.top, { cellW, cellH } = V.geo;
  const q = Math.floor((y - AXIS_H) / cellH);
  if (q < 0 || q >= V.d.nQ) return null;
  if (x < GUTTER) return { q, c: -1 };
  const c = Math.floor((x - GUTTER) / cellW);
  return c >= 0 && c < V.d.nC ? { q, c } : null;
}

/** What a cell holds, in words (one line each). @param {View} V @param {number} q @param {number} c */
function describe(V, q, c) {
  const d = V.d, at = q * d.nC + c, metric = V.model.get("metric");
  const v = valuesOf(d, metric)[at], state = d.cell[at];
  const raw = d.unparseable.get(metric)?.get(at);
  const value = raw !== undefined ? `${metric}: unparseable verdict: ${raw}`
    : state === CELL.NO_RUN ? `${metric}: no run` : v !== v ? `${metric}: absent (nothing to score it against)`
      : `${metric}: ${v.toFixed(3)}`;
  // the column's time as the Timeline writes it (a release's date alone), not the wire's ISO text
  const when = isoTimeText(d.raw.columns.at[c]);
  const lines = [d.questions.texts[q], when ? `${columnLabel(d, c)} · ${when}` : columnLabel(d, c), value];
  if (state !== CELL.NO_RUN) lines.push(d.runs ? `query ${d.runs.get(at)}` : "query id: not in this view's state (too many cells)");
  const prev = previousRun(d, q, c);
  if (state === CELL.SAME) lines.push(`same chunks as at ${columnLabel(d, prev)}`);
  else if (state === CELL.CHANGED) lines.push(`chunks changed since ${columnLabel(d, prev)}: click for the diff`);
  else if (state === CELL.FIRST) lines.push("the question's first evaluated run");
  else if (state === CELL.UNKNOWN) lines.push(`not compared with ${columnLabel(d, prev)} here: a click asks the kernel`);
  return lines;
}

/** @param {View} V @param {MouseEvent} e */
function onHover(V, e) {
  const at = hit(V, e);
  if (!at) { V.tip.hidden = true; return; }
  const lines = at.c < 0 ? [V.d.questions.texts[at.q], `${V.d.questions.ids[at.q]} · click for its timeline`]
    : describe(V, at.q, at.c);
  V.tip.replaceChildren(...lines.map((l, i) => el("div", i ? "ragtt-hm-tip-line" : "ragtt-hm-tip-title", l)));
  const r = V.plot.getBoundingClientRect();
  const x = e.clientX - r.left, y = e.clientY - r.top;
  V.tip.style.left = `${Math.min(x + 14, Math.max(0, r.width - 320))}px`;
  V.tip.hidden = false;
  // below the pointer; above it when that would hang past the plot, over the readout and an
  // opened cell's diff (its header is just below the plot)
  const below = y + 16;
  V.tip.style.top = `${below + V.tip.offsetHeight <= r.height ? below : y - 8 - V.tip.offsetHeight}px`;
}

/** The readout under the plot: the focused cell in words. @param {View} V */
function showReadout(V) {
  const { q, c } = V.focus;
  V.readout.textContent = V.d.nQ && V.d.nC ? describe(V, q, c).join(" · ") : "This matrix has no cells.";
}

// -- the panel ------------------------------------------------------------------------------

/** @param {View} V @param {string} state @param {string} title @param {string} [text] */
function panelText(V, state, title, text) {
  if (V.cleanup) { V.cleanup(); V.cleanup = null; }
  V.panel.hidden = false;
  V.root.dataset.panel = state;
  panelTitle(V, title);
  V.panelBody.replaceChildren(...(text ? [el("p", "ragtt-hm-note", text)] : []));
}

/** @param {View} V @param {string} title */
function panelTitle(V, title) {
  V.panelHead.replaceChildren(el("span", "ragtt-hm-panel-title", title),
    button("ragtt-hm-close", "close", "close the panel", () => {
      closePanel(V);
      V.model.set("selected", {});
      V.model.save_changes();
    }));
}

/** @param {View} V */
function closePanel(V) {
  if (V.cleanup) { V.cleanup(); V.cleanup = null; }
  V.panel.hidden = true;
  V.want = "";
  delete V.root.dataset.panel;
}

/** Render another widget's view (ChunkDiff, Timeline) in the panel, on a local model.
 * @param {View} V @param {{render: (p: import("./types.js").RenderProps) => any}} view @param {Record<string, any>} state
 * @param {string} kind @param {string} title */
function mount(V, view, state, kind, title) {
  if (V.cleanup) { V.cleanup(); V.cleanup = null; }
  V.panel.hidden = false;
  V.root.dataset.panel = kind;
  panelTitle(V, title);
  const host = el("div", "ragtt-hm-sub");
  V.panelBody.replaceChildren(host);
  const model = createModel(state, { reply: async () => [] });
  const cleanup = view.render({ model, el: host });
  V.cleanup = typeof cleanup === "function" ? cleanup : null;
}

/** A diff in the state: its chunks' ids, sources and texts from the shared table. @param {Data} d @param {any} data */
function fullDiff(d, data) {
  const rows = typed(data.chunks.rows);
  const ch = { ...data.chunks };
  delete ch.rows;
  ch.ids = Array.from(rows, (r) => d.chunks.ids.get(r));
  ch.sources = Array.from(rows, (r) => d.chunks.sources[r]);
  ch.texts = Array.from(rows, (r) => d.chunks.texts.get(r));
  return { ...data, chunks: ch };
}

/** A timeline's `_data` from the shared base and a question's focal part. @param {Data} d @param {any} base @param {any} focal */
function fullTimeline(d, base, focal) {
  let chunks = focal.chunks;
  if (!chunks) {
    const rows = typed(focal.rows);
    chunks = Array.from(rows, (r) => ({ chunk_id: d.chunks.ids.get(r), source: d.chunks.sources[r], text: d.chunks.texts.get(r) }));
  }
  const f = { ...focal, chunks };
  delete f.rows;
  return { ...base, focal: f };
}

/** Open a cell: its diff from the previous evaluated column, or why there is none. @param {View} V @param {number} q @param {number} c */
function openCell(V, q, c) {
  const d = V.d, at = q * d.nC + c, state = d.cell[at], prev = previousRun(d, q, c);
  const where = `${d.questions.texts[q]} · ${columnLabel(d, c)}`;
  if (state === CELL.NO_RUN) return panelText(V, "none", where, "No run for this question at this version.");
  if (state === CELL.FIRST || prev < 0) {
    return panelText(V, "first", where, "The question's first evaluated run: there is no earlier column to diff it against.");
  }
  if (state === CELL.SAME) {
    return panelText(V, "same", where, `Same chunks, in the same order, as at ${columnLabel(d, prev)}: `
      + "nothing changed to diff (the scores may differ).");
  }
  const title = `Chunk diff · ${d.questions.texts[q]} · ${columnLabel(d, prev)} → ${columnLabel(d, c)}`;
  const k = d.diffOf.get(at);
  if (k !== undefined) {
    return mount(V, chunkDiff, { _data: fullDiff(d, d.raw.diffs.data[k]), selected: [] }, "diff", title);
  }
  const ids = d.runs ? { left: d.runs.get(q * d.nC + prev), right: d.runs.get(at) } : {};
  ask(V, { type: "diff", key: `diff ${q} ${c}`, ...ids, question: q, column: c, previous: prev }, title, (reply) => {
    if (reply.same) return panelText(V, "same", where, `Same chunks as at ${columnLabel(d, prev)}: nothing changed to diff.`);
    mount(V, chunkDiff, { _data: reply.data, selected: [] }, "diff", title);
  }, `This diff is not in the widget's state (the state holds ${d.diffOf.size} diffs; its bound left `
    + `${d.embed.diffs_left_out} out) and no kernel has answered yet: ${d.embed.advice.bound}`);
}

/** Open a question's Timeline (its run at the last evaluated column). @param {View} V @param {number} q */
function openQuestion(V, q) {
  const d = V.d, c = lastRun(d, q);
  const title = `Timeline · ${d.questions.texts[q]}`;
  if (c < 0) return panelText(V, "none", title, "This question has no run in the matrix, so no timeline.");
  const k = d.timelineOf.get(q), base = d.raw.timeline.base;
  const show = (/** @type {any} */ data) => mount(V, timelineView,
    { _data: data, version: data.focal.version, axis: "auto", selected: [] }, "timeline", title);
  if (k !== undefined && base) return show(fullTimeline(d, base, d.raw.timeline.focal[k]));
  const id = d.runs ? { query_id: d.runs.get(q * d.nC + c) } : {};
  ask(V, { type: "timeline", key: `timeline ${q}`, ...id, question: q, column: c }, title,
    (reply) => show(fullTimeline(d, reply.base, reply.focal)),
    (d.embed.timelines
      ? `This question's timeline is not in the widget's state (its bound left ${d.embed.timelines_left_out} out) `
        + `and no kernel has answered yet: ${d.embed.advice.bound}`
      : `This question's timeline is not in the widget's state (${d.embed.advice.timelines}) `
        + "and no kernel has answered yet."));
}

/** Ask the kernel; show the reply when it comes, or `missing` when none does.
 * @param {View} V @param {{key: string, [k: string]: any}} content @param {string} title
 * @param {(reply: any) => void} onReply @param {string} missing */
function ask(V, content, title, onReply, missing) {
  const key = content.key;
  V.want = key;
  const known = V.replies.get(key);
  if (known) return known.error ? panelText(V, "error", title, known.error) : onReply(known);
  panelText(V, "waiting", title, "Asking the kernel…");
  V.pending = { key, title, onReply };
  if (V.waiting.has(key)) return;
  try { V.model.send(content); } catch { /* no kernel (a report): the timer says so */ }
  V.waiting.set(key, setTimeout(() => {
    V.waiting.delete(key);
    if (V.want === key && !V.replies.has(key)) panelText(V, "missing", title, missing);
  }, FETCH_WAIT_MS));
}

/** A reply from the kernel. @param {View} V @param {any} msg @param {any[]} buffers */
function onMessage(V, msg, buffers) {
  if (!msg || !["diff", "timeline", "worse"].includes(msg.type)) return;
  const reply = joinBuffers(msg, buffers || []);
  const key = String(msg.key);
  clearTimeout(V.waiting.get(key));
  V.waiting.delete(key);
  V.replies.set(key, reply);
  if (msg.type === "worse") { showWorse(V); return; }
  const p = V.pending;
  if (p && V.want === key) {
    if (reply.error) panelText(V, "error", p.title, reply.error);
    else p.onReply(reply);
  }
}

/** Focus a cell (keyboard or click) and redraw. @param {View} V @param {number} q @param {number} c */
function focusCell(V, q, c) {
  V.focus = { q: Math.max(0, Math.min(V.d.nQ - 1, q)), c: Math.max(0, Math.min(V.d.nC - 1, c)) };
  draw(V);
  showReadout(V);
}

/** @param {View} V @param {Record<string, number>} sel */
function select(V, sel) {
  V.model.set("selected", sel);
  V.model.save_changes();
}

/** @param {View} V */
function fromSelected(V) {
  const sel = V.model.get("selected") || {};
  if (typeof sel.question !== "number" || sel.question < 0 || sel.question >= V.d.nQ) {
    closePanel(V);
  } else if (typeof sel.column === "number" && sel.column >= 0 && sel.column < V.d.nC) {
    if (V.focus.q !== sel.question || V.focus.c !== sel.column) focusCell(V, sel.question, sel.column);
    openCell(V, sel.question, sel.column);
  } else {
    // the focus (its ring and the readout) on the cell whose run the Timeline shows
    const c = lastRun(V.d, sel.question);
    if (V.focus.q !== sel.question || (c >= 0 && V.focus.c !== c)) focusCell(V, sel.question, c >= 0 ? c : V.focus.c);
    openQuestion(V, sel.question);
  }
  markWorse(V);
}

/** @param {View} V */
function attach(V) {
  V.canvas.addEventListener("mousemove", (e) => onHover(V, e));
  V.canvas.addEventListener("mouseleave", () => { V.tip.hidden = true; });
  V.canvas.addEventListener("click", (e) => {
    const at = hit(V, e);
    if (!at) return;
    if (at.c < 0) { select(V, { question: at.q }); return; }
    V.tip.hidden = true; // the cell opens below: the pointer's next move shows the tip again
    focusCell(V, at.q, at.c);
    select(V, { question: at.q, column: at.c });
  });
  V.canvas.addEventListener("keydown", (e) => {
    const { q, c } = V.focus;
    /** @type {Record<string, () => void>} */
    const keys = {
      ArrowLeft: () => focusCell(V, q, c - 1), ArrowRight: () => focusCell(V, q, c + 1),
      ArrowUp: () => focusCell(V, q - 1, c), ArrowDown: () => focusCell(V, q + 1, c),
      Home: () => focusCell(V, q, 0), End: () => focusCell(V, q, V.d.nC - 1),
      Enter: () => select(V, { question: q, column: c }), t: () => select(V, { question: q }),
      Escape: () => select(V, {}),
    };
    const fn = keys[e.key];
    if (fn && V.d.nQ && V.d.nC) { e.preventDefault(); fn(); }
  });
  V.picker.addEventListener("change", () => {
    V.model.set("metric", V.picker.value);
    V.model.save_changes();
  });
}

/** The header: the picker, the legend and the counts. @param {View} V */
function showHead(V) {
  const d = V.d, metric = V.model.get("metric");
  V.picker.replaceChildren(...d.metrics.map((m) => { const o = el("option", "", m); o.value = m; return o; }));
  V.picker.value = metric;
  const ramp = el("span", "ragtt-hm-ramp");
  ramp.style.background = `linear-gradient(to right, ${[0, 0.25, 0.5, 0.75, 1].map(cssColor).join(", ")})`;
  const un = d.unparseable.get(metric)?.size || 0;
  V.legend.replaceChildren(el("span", "", "0"), ramp, el("span", "", "1"), el("span", "ragtt-hm-absent", ""),
    el("span", "", "absent"), ...(un ? [el("span", "ragtt-hm-bad", "×"), el("span", "", `unparseable (${un})`)] : []));
  V.counts.textContent = `${counted(d.nQ, "question")} × ${counted(d.nC, "version")}`;
}

// -- the got-worse list ---------------------------------------------------------------------

/** The picked metric's got-worse list: from the state, else from the kernel's (or the server's)
 *  reply, else asked for; each regression a button that opens its cell. @param {View} V */
function showWorse(V) {
  const d = V.d, metric = V.model.get("metric"), key = `worse ${metric}`;
  const reply = V.replies.get(key);
  const rows = d.worse.lists.get(metric) ?? (reply && !reply.error ? reply.rows : undefined);
  V.root.dataset.worseMetric = metric;
  V.worse.hidden = !d.metrics.length;
  const level = d.worse.threshold ?? "the got-worse threshold";
  /** @param {string} state @param {string} text */
  const say = (state, text) => {
    V.root.dataset.worse = state;
    V.worseHead.replaceChildren(el("span", "ragtt-hm-worse-title", "Got worse"), ` · ${text}`);
    V.worseList.replaceChildren();
  };
  if (rows === undefined) {
    if (reply?.error) return say("error", `${metric}'s list could not be worked out: ${reply.error}`);
    if (V.waiting.has(key)) return say("waiting", `asking for ${metric}'s list…`);
    if (V.worseAsked.has(key)) {
      return say("missing", `${metric}'s list is not in this view's state, and no kernel or server has answered yet.`);
    }
    V.worseAsked.add(key);
    try { V.model.send({ type: "worse", key, metric }); } catch { /* no kernel (a report): the timer says so */ }
    V.waiting.set(key, setTimeout(() => { V.waiting.delete(key); showWorse(V); }, WORSE_WAIT_MS));
    return say("waiting", `asking for ${metric}'s list…`);
  }
  if (!rows.length) return say("none", `no question's ${metric} fell below ${level} after being at or above it`);
  say("list", `${metric} fell below ${level} after being at or above it: ${counted(rows.length, "time")}; `
    + "a click opens the cell");
  V.worseList.replaceChildren(...rows.map((/** @type {any} */ r) => {
    const item = el("li", "ragtt-hm-worse-item");
    const go = button("ragtt-hm-worse-go", "", `open ${d.questions.texts[r.question]} at ${columnLabel(d, r.bad)}`, () => {
      focusCell(V, r.question, r.bad);
      select(V, { question: r.question, column: r.bad });
    });
    go.dataset.question = String(r.question);
    go.dataset.column = String(r.bad);
    go.append(el("span", "ragtt-hm-worse-q", d.questions.texts[r.question]),
      el("span", "ragtt-hm-worse-fall", ` · ${fmt(r.good_value)} at ${columnLabel(d, r.good)} → `
        + `${fmt(r.bad_value)} at ${columnLabel(d, r.bad)}`),
      el("span", "ragtt-hm-worse-why", r.reason ? `why: ${r.reason}` : "why: unknown (a run is no longer in the log)"));
    item.append(go);
    return item;
  }));
  markWorse(V);
}

/** @param {number | null} v */
const fmt = (v) => (typeof v === "number" ? v.toFixed(2) : "–");

/** The regression whose cell is selected, marked. @param {View} V */
function markWorse(V) {
  const sel = V.model.get("selected") || {};
  for (const b of V.worseList.querySelectorAll("button")) {
    const on = Number(b.dataset.question) === sel.question && Number(b.dataset.column) === sel.column;
    b.classList.toggle("ragtt-selected", on);
    if (on) b.setAttribute("aria-current", "true"); else b.removeAttribute("aria-current");
  }
}

/** @param {import("./types.js").RenderProps} props */
function render({ model, el: host }) {
  const V = createView(model);
  host.append(V.root);
  attach(V);
  const onData = () => {
    V.d = decode(model.get("_data")); V.image = null; V.replies.clear(); V.worseAsked.clear(); showHead(V); draw(V); showReadout(V); showWorse(V);
  };
  const onMetric = () => { showHead(V); draw(V); showReadout(V); showWorse(V); };
  const onSelected = () => fromSelected(V);
  const onMsg = (/** @type {any} */ msg, /** @type {any[]} */ buffers) => onMessage(V, msg, buffers);
  const events = /** @type {Array<[string, (...args: any[]) => void]>} */ ([["change:_data", onData],
    ["change:metric", onMetric], ["change:selected", onSelected], ["msg:custom", onMsg]]);
  for (const [name, fn] of events) model.on(name, fn);
  let lastW = -1;
  const resize = new ResizeObserver(() => {
    const now = V.plot.clientWidth;
    if (now && now !== lastW) { lastW = now; draw(V); }
  });
  resize.observe(V.plot);
  showHead(V);
  draw(V);
  showReadout(V);
  showWorse(V);
  V.root.dataset.painted = "1";
  fromSelected(V);
  return () => {
    resize.disconnect();
    if (V.cleanup) V.cleanup();
    for (const t of V.waiting.values()) clearTimeout(t);
    for (const [name, fn] of events) model.off(name, fn);
  };
}

export default { render };
