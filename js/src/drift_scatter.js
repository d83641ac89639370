// @ts-check
// ragtt DriftScatter: two index versions in one 2D projection; lasso and box selection, pan
// and zoom. Points are drawn straight into ImageData (no per-point canvas calls), so 200,000
// points paint in a few milliseconds; a grid index answers hover. Both axes share one scale
// (pixels per unit of the projection), so an axis with little variance is drawn flat, never
// stretched to the plot's height. Untrusted text (sources, chunk text, query) reaches the
// DOM only as text.
//
// Each source's centroid arrow (then → now) is labelled with the source and its centroid
// cosine; a source renamed with identical content gets one dashed arrow "old → new". Beside
// the plot, the per-source table the CLI prints (cosines, chunk counts, DRIFTED flags,
// renames). Coloured by source, the then version's points are hollow and the now's filled.
//
// Test hooks on the root: `data-painted` after the first paint; `data-arrow-labels` (JSON
// [{source, text, x0, y0, x1, y1}], CSS px in the plot); `data-view` as JSON
// {k, ux, uy, w, h}: a point at projection coordinates (x, y) is drawn at
// (w / 2 + (x - ux) * k, h / 2 - (y - uy) * k) CSS px from the plot's top-left corner.

import { appendBreakable, button, el, themeColors } from "./dom.js";
import { strings, typed } from "./wire.js";
import { counted, versionLabel } from "./labels.js";
import { chunkCard, queryTerms } from "./chunk_card.js";

/** @typedef {import("./types.js").Model} Model */

const Q = 32767;          // int16 quantization half-range (see ragtt_nb/drift_scatter.py)
const OTHER = 65535;      // source index of "one of the sources past the first 65535"
const HEIGHT = 460;       // plot height, CSS px
const PAD = 12;           // plot padding, CSS px
const CELL = 8;           // hover grid cell, CSS px
const HOVER_PX = 7;       // hover reach, CSS px
const LIST_MAX = 200;     // selected chunks listed below the plot
const RING_MAX = 5000;    // selected points beyond this get no ring (they are still drawn larger)
const DIM = 0.18;         // alpha of the unselected points while something is selected
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
  "#bcbd22", "#7f7f7f"];
/** What the points may be coloured by (the `color_by` trait; ragtt_nb.drift_scatter's Enum). */
export const COLOR_BY = ["version", "source"];

/** @param {any} data the `_data` trait */
function decode(data) {
  const p = data.points;
  const qx = typed(p.x), qy = typed(p.y), bounds = typed(data.bounds);
  const n = qx.length;
  // projection coordinates, dequantized once (the quantization is per axis; drawing is not)
  const x = new Float32Array(n), y = new Float32Array(n);
  const sx = (bounds[1] - bounds[0]) / (2 * Q), sy = (bounds[3] - bounds[2]) / (2 * Q);
  for (let i = 0; i < n; i++) { x[i] = bounds[0] + (qx[i] + Q) * sx; y[i] = bounds[2] + (qy[i] + Q) * sy; }
  return {
    ...data, n, x, y, bounds,
    side: typed(p.version), src: typed(p.source), explained: typed(data.explained),
    ids: strings(data.chunks.ids), texts: strings(data.chunks.text),
    centroids: typed(data.source_centroids),
    query: data.query && { text: data.query.text, xy: typed(data.query.xy), terms: queryTerms(data.query.text) },
    names: data.labels || {},
    /** @type {Array<{source: string, status: string, cosine: number | null, left: number, right: number, common: number, drifted: boolean, summary: string, renamed_from: string | null}>} */
    table: data.source_table || [],
  };
}

/** @typedef {ReturnType<typeof decode>} Data */

/** The chunk index of point i (common chunks first; see the Python module docstring).
 * @param {Data} d @param {number} i */
function chunkOf(d, i) {
  if (i < d.n_left) return i;
  const j = i - d.n_left;
  return j < d.n_common ? j : d.n_left + j - d.n_common;
}

/** A CSS colour as a little-endian RGBA Uint32 (resolved through a 1x1 canvas).
 * @param {string} color @param {number} alpha */
function rgba32(color, alpha) {
  const c = document.createElement("canvas");
  c.width = c.height = 1;
  const g = /** @type {CanvasRenderingContext2D} */ (c.getContext("2d"));
  g.fillStyle = color;
  g.fillRect(0, 0, 1, 1);
  const [r, gg, b] = g.getImageData(0, 0, 1, 1).data;
  return (Math.round(alpha * 255) << 24 | b << 16 | gg << 8 | r) >>> 0;
}

/** @param {Model} model */
function createView(model) {
  const root = el("div", "ragtt-drift-scatter tex2jax_ignore mathjax_ignore");
  root.tabIndex = 0;
  const head = el("div", "ragtt-ds-head");
  const title = el("span", "ragtt-ds-title");
  const sub = el("span", "ragtt-ds-sub");
  head.append(title, sub);
  const controls = el("div", "ragtt-ds-controls");
  const plot = el("div", "ragtt-ds-plot");
  const canvases = ["segments", "points", "overlay"].map((name) => {
    const c = el("canvas", `ragtt-ds-canvas ragtt-ds-${name}`);
    plot.append(c);
    return c;
  });
  const hover = el("div", "ragtt-ds-hover");
  hover.hidden = true;
  plot.append(hover);
  const warn = el("div", "ragtt-ds-warn");
  const legend = el("div", "ragtt-ds-legend");
  const listTitle = el("div", "ragtt-ds-list-title");
  const list = el("ol", "ragtt-ds-list");
  const main = el("div", "ragtt-ds-main");
  const table = el("div", "ragtt-ds-table");
  main.append(plot, table);
  root.append(head, warn, controls, main, legend, listTitle, list);
  const d = decode(model.get("_data"));
  return {
    model, d, root, title, sub, warn, controls, plot, hover, legend, listTitle, list, table,
    segCanvas: canvases[0], pointCanvas: canvases[1], overlay: canvases[2],
    colorSel: el("select", "ragtt-ds-color"), segBox: el("input"), status: el("span", "ragtt-ds-status"),
    /** @type {Record<string, HTMLButtonElement>} */ modeBtns: {},
    mode: "lasso", showSegments: d.segments_default,
    px: new Float32Array(0), py: new Float32Array(0),   // point positions, CSS px
    /** @type {{cols: number, rows: number, start: Int32Array, items: Int32Array} | null} */ grid: null,
    selectedPoints: new Uint8Array(d.n), nSelected: 0, hoverPoint: -1, w: 0, dpr: 1, painted: false,
    view: { k: 1, ux: 0, uy: 0 },   // pixels per projection unit, and the projection point at the centre
    frame: 0,                       // a pending redraw (pan, zoom)
  };
}

/** @typedef {ReturnType<typeof createView>} View */

/** The colour menu, the segments checkbox, the mode buttons and Clear. @param {View} V */
function buildControls(V) {
  V.colorSel.setAttribute("aria-label", "colour points by");
  for (const v of COLOR_BY) {
    const o = el("option", "", `colour: ${v}`);
    o.value = v;
    V.colorSel.append(o);
  }
  V.colorSel.addEventListener("change", () => { V.model.set("color_by", V.colorSel.value); V.model.save_changes(); });
  const segLabel = el("label", "ragtt-ds-seg");
  V.segBox.type = "checkbox";
  segLabel.append(V.segBox, document.createTextNode(" chunk segments"));
  V.segBox.addEventListener("change", () => { V.showSegments = V.segBox.checked; drawSegments(V); });
  V.controls.append(V.colorSel, segLabel);
  for (const [name, label, aria] of [["lasso", "Lasso", "lasso select"], ["box", "Box", "box select"],
    ["pan", "Pan", "pan (or alt-drag; wheel zooms, double-click resets)"]]) {
    const b = button("ragtt-ds-btn", label, aria, () => setMode(V, name));
    b.dataset.mode = name;
    V.modeBtns[name] = b;
    V.controls.append(b);
  }
  V.controls.append(button("ragtt-ds-btn", "Reset view", "reset zoom and pan", () => { fit(V); drawAll(V); }),
    button("ragtt-ds-btn", "Clear", "clear the selection", () => select(V, new Uint8Array(V.d.n))), V.status);
}

/** @param {View} V @param {string} name */
function setMode(V, name) {
  V.mode = name;
  for (const [m, b] of Object.entries(V.modeBtns)) b.classList.toggle("ragtt-active", m === name);
  V.overlay.style.cursor = name === "pan" ? "grab" : "crosshair";
}

/** @param {View} V */
function colors(V) {
  return themeColors(V.root, {
    left: ["--jp-brand-color1", "#1976d2"], right: ["--jp-warn-color1", "#f57c00"],
    fg: ["--jp-ui-font-color1", "#333"], dim: ["--jp-ui-font-color2", "#777"],
    sel: ["--jp-ui-font-color0", "#000"], bg: ["--jp-layout-color0", "#fff"],
    font: ["--jp-ui-font-family", "system-ui, sans-serif"],
  });
}

// -- geometry -------------------------------------------------------------------------------

/** The whole cloud in view, one scale for both axes (equal units). @param {View} V */
function fit(V) {
  const b = V.d.bounds;
  const w = Math.max(200, V.plot.clientWidth || 640);
  const k = Math.min((w - 2 * PAD) / ((b[1] - b[0]) || 1), (HEIGHT - 2 * PAD) / ((b[3] - b[2]) || 1));
  V.view = { k, ux: (b[0] + b[1]) / 2, uy: (b[2] + b[3]) / 2 };
}

/** Projection coordinates to CSS px. @param {View} V @param {number} x @param {number} y @returns {[number, number]} */
const toPx = (V, x, y) => [V.w / 2 + (x - V.view.ux) * V.view.k, HEIGHT / 2 - (y - V.view.uy) * V.view.k];

/** Size the canvases, place every point, rebuild the hover grid. @param {View} V */
function layout(V) {
  const d = V.d;
  V.w = Math.max(200, V.plot.clientWidth || 640);
  V.dpr = window.devicePixelRatio || 1;
  for (const c of [V.segCanvas, V.pointCanvas, V.overlay]) {
    c.width = Math.round(V.w * V.dpr);
    c.height = Math.round(HEIGHT * V.dpr);
    c.style.width = `${V.w}px`;
    c.style.height = `${HEIGHT}px`;
  }
  V.plot.style.height = `${HEIGHT}px`;
  const { k, ux, uy } = V.view, cx = V.w / 2, cy = HEIGHT / 2;
  const px = new Float32Array(d.n), py = new Float32Array(d.n);
  for (let i = 0; i < d.n; i++) { px[i] = cx + (d.x[i] - ux) * k; py[i] = cy - (d.y[i] - uy) * k; }
  V.px = px;
  V.py = py;
  V.root.dataset.view = JSON.stringify({ k, ux, uy, w: V.w, h: HEIGHT });
  // hover grid: counting sort of the points on screen into CELL x CELL cells
  const cols = Math.ceil(V.w / CELL) + 1, rows = Math.ceil(HEIGHT / CELL) + 1;
  const cellOf = new Int32Array(d.n).fill(-1);
  const start = new Int32Array(cols * rows + 1);
  for (let i = 0; i < d.n; i++) {
    if (!(px[i] >= 0 && px[i] < V.w && py[i] >= 0 && py[i] < HEIGHT)) continue;
    const c = ((py[i] / CELL) | 0) * cols + ((px[i] / CELL) | 0);
    cellOf[i] = c;
    start[c + 1]++;
  }
  for (let c = 0; c < cols * rows; c++) start[c + 1] += start[c];
  const fill = start.slice(0, cols * rows);
  const items = new Int32Array(start[cols * rows]);
  for (let i = 0; i < d.n; i++) if (cellOf[i] >= 0) items[fill[cellOf[i]]++] = i;
  V.grid = { cols, rows, start, items };
}

// -- drawing --------------------------------------------------------------------------------

/** Each point's colour as RGBA32, dimmed when something else is selected. @param {View} V @param {number} alpha */
function pointColors(V, alpha) {
  const d = V.d, c = colors(V);
  if (V.model.get("color_by") === "source") {
    const table = PALETTE.map((p) => rgba32(p, alpha));
    return (/** @type {number} */ i) => (d.src[i] === OTHER ? table[9] : table[d.src[i] % 9]);
  }
  const table = [rgba32(c.left, alpha), rgba32(c.right, alpha)];
  return (/** @type {number} */ i) => table[d.side[i]];
}

/** Every point as a square of pixels; selected ones larger and on top, the rest dimmed. @param {View} V */
function drawPoints(V) {
  const d = V.d, W = V.pointCanvas.width, H = V.pointCanvas.height;
  const g = /** @type {CanvasRenderingContext2D} */ (V.pointCanvas.getContext("2d"));
  const img = g.createImageData(W, H);
  const buf = new Uint32Array(img.data.buffer);
  const any = V.nSelected > 0;
  const plain = pointColors(V, any ? DIM : 0.85), strong = pointColors(V, 1);
  // few points: big enough to see and hover; many: small enough not to hide each other
  const css = d.n <= 2000 ? 6 : d.n <= 20000 ? 3 : 2;
  const square = (/** @type {number} */ i, /** @type {number} */ size, /** @type {number} */ col) => {
    const half = size >> 1;
    const x0 = Math.round(V.px[i] * V.dpr) - half, y0 = Math.round(V.py[i] * V.dpr) - half;
    for (let yy = Math.max(0, y0); yy < y0 + size && yy < H; yy++) {
      const row = yy * W;
      for (let xx = Math.max(0, x0); xx < x0 + size && xx < W; xx++) buf[row + xx] = col;
    }
  };
  const size = Math.max(1, Math.round(css * V.dpr)), big = Math.max(size + 2, Math.round((css + 3) * V.dpr));
  // coloured by source, "then" and "now" share a colour: then's points are hollow, now's filled
  const hollow = V.model.get("color_by") === "source" && size >= 4;
  const ring = (/** @type {number} */ i, /** @type {number} */ col) => {
    const half = size >> 1;
    const x0 = Math.round(V.px[i] * V.dpr) - half, y0 = Math.round(V.py[i] * V.dpr) - half;
    const t = Math.max(1, Math.round(V.dpr * 1.2));
    for (let yy = Math.max(0, y0); yy < y0 + size && yy < H; yy++) {
      const edgeRow = yy < y0 + t || yy >= y0 + size - t;
      for (let xx = Math.max(0, x0); xx < x0 + size && xx < W; xx++) {
        if (edgeRow || xx < x0 + t || xx >= x0 + size - t) buf[yy * W + xx] = col;
      }
    }
  };
  for (let i = 0; i < d.n; i++) {
    if (any && V.selectedPoints[i]) continue;
    if (hollow && d.side[i] === 0) ring(i, plain(i));
    else square(i, size, plain(i));
  }
  if (any) for (let i = 0; i < d.n; i++) if (V.selectedPoints[i]) square(i, big, strong(i));
  g.putImageData(img, 0, 0);
}

/** @param {View} V */
function drawSegments(V) {
  const d = V.d;
  const g = /** @type {CanvasRenderingContext2D} */ (V.segCanvas.getContext("2d"));
  g.setTransform(V.dpr, 0, 0, V.dpr, 0, 0);
  g.clearRect(0, 0, V.w, HEIGHT);
  if (!V.showSegments || !d.n_common) return;
  g.strokeStyle = colors(V).dim;
  g.globalAlpha = V.nSelected ? 0.12 : 0.35;
  g.lineWidth = 0.6;
  g.beginPath();
  for (let i = 0; i < d.n_common; i++) {
    g.moveTo(V.px[i], V.py[i]);
    g.lineTo(V.px[d.n_left + i], V.py[d.n_left + i]);
  }
  g.stroke();
  g.globalAlpha = 1;
}

/** Centroid moves, rings around the selection, the query, the hover ring and the lasso path.
 * @param {View} V @param {Array<[number, number]> | null} [path] */
function drawOverlay(V, path) {
  const d = V.d, c = colors(V);
  const g = /** @type {CanvasRenderingContext2D} */ (V.overlay.getContext("2d"));
  g.setTransform(V.dpr, 0, 0, V.dpr, 0, 0);
  g.clearRect(0, 0, V.w, HEIGHT);
  if (d.sources.length <= 200) drawMoves(V, g, c);
  if (V.nSelected && V.nSelected <= RING_MAX) {  // a ring around each selected point
    g.strokeStyle = c.sel;
    g.lineWidth = 1.5;
    g.beginPath();
    const r = d.n <= 2000 ? 6.5 : 4.5;
    for (let i = 0; i < d.n; i++) {
      if (!V.selectedPoints[i]) continue;
      g.moveTo(V.px[i] + r, V.py[i]);
      g.arc(V.px[i], V.py[i], r, 0, 2 * Math.PI);
    }
    g.stroke();
  }
  if (d.query) drawQuery(V, g, c);
  if (V.hoverPoint >= 0) {
    g.strokeStyle = c.sel;
    g.lineWidth = 2;
    g.beginPath();
    g.arc(V.px[V.hoverPoint], V.py[V.hoverPoint], 5, 0, 2 * Math.PI);
    g.stroke();
  }
  if (path && path.length > 1) {
    g.strokeStyle = c.sel;
    g.setLineDash([4, 3]);
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(path[0][0], path[0][1]);
    for (const [x, y] of path) g.lineTo(x, y);
    if (V.mode === "lasso") g.closePath();
    g.stroke();
    g.setLineDash([]);
  }
}

/** Each source's centroid move (then → now, ● at now) labelled with the source and its
 * centroid cosine; a rename, dashed from the old name's centroid to the new one's. Labels go
 * beside the head where they overlap no other label (canvas text: never parsed as HTML).
 * @param {View} V @param {CanvasRenderingContext2D} g @param {Record<string, string>} c */
function drawMoves(V, g, c) {
  const d = V.d;
  const row = new Map(d.table.map((r) => [r.source, r]));
  /** @type {Array<{from: number, to: number, text: string, source: string, dashed: boolean}>} */
  const moves = [];
  for (let s = 0; s < d.sources.length; s++) {
    const r = row.get(d.sources[s]);
    if (r && r.renamed_from) {
      const from = d.sources.indexOf(r.renamed_from);
      if (from >= 0) moves.push({ from, to: s, dashed: true, source: r.source, text: `${short(r.renamed_from)} → ${short(r.source)} (renamed)` });
    } else {
      const cos = r && r.cosine !== null ? ` · cos ${r.cosine.toFixed(3)}${r.drifted ? " DRIFTED" : ""}` : "";
      moves.push({ from: s, to: s, dashed: false, source: d.sources[s], text: `${short(d.sources[s])}${cos}` });
    }
  }
  g.font = `11px ${c.font}`;
  g.textBaseline = "middle";
  /** @type {Array<{source: string, text: string, x0: number, y0: number, x1: number, y1: number}>} */
  const boxes = [];
  for (const m of moves) {
    const [lx, ly] = d.centroids.subarray(4 * m.from, 4 * m.from + 2), [rx, ry] = d.centroids.subarray(4 * m.to + 2, 4 * m.to + 4);
    if ([lx, ly, rx, ry].some(Number.isNaN)) continue;
    const [ax, ay] = toPx(V, lx, ly), [bx, by] = toPx(V, rx, ry);
    g.strokeStyle = g.fillStyle = c.fg;
    g.lineWidth = 1.5;
    g.setLineDash(m.dashed ? [5, 3] : []);
    g.beginPath(); g.moveTo(ax, ay); g.lineTo(bx, by); g.stroke();
    g.setLineDash([]);
    g.beginPath(); g.arc(bx, by, 3, 0, 2 * Math.PI); g.fill();
    const w = g.measureText(m.text).width, h = 13;
    const spots = [[bx + 6, by - h], [bx + 6, by + 2], [bx - 6 - w, by - h], [bx - 6 - w, by + 2],
      [bx - w / 2, by - 8 - h], [bx - w / 2, by + 8]];
    const clamp = (/** @type {number[]} */ [x, y]) => [Math.min(Math.max(2, x), V.w - w - 2), Math.min(Math.max(2, y), HEIGHT - h - 2)];
    const free = spots.map(clamp).find(([x, y]) => boxes.every((b) => x + w < b.x0 || x > b.x1 || y + h < b.y0 || y > b.y1));
    const [x, y] = free || clamp(spots[0]);
    g.fillStyle = c.bg;
    g.globalAlpha = 0.85;
    g.fillRect(x - 2, y, w + 4, h);
    g.globalAlpha = 1;
    g.fillStyle = c.fg;
    g.fillText(m.text, x, y + h / 2);
    boxes.push({ source: m.source, text: m.text, x0: x, y0: y, x1: x + w, y1: y + h });
  }
  V.root.dataset.arrowLabels = JSON.stringify(boxes.map((b) => ({ ...b, x0: Math.round(b.x0), y0: Math.round(b.y0),
    x1: Math.round(b.x1), y1: Math.round(b.y1) })));
}

/** A source name short enough for a plot label: its last 28 characters. @param {string} name */
const short = (name) => (name.length > 28 ? `…${name.slice(-27)}` : name);

/** Beside the plot: the per-source table, as `ragtt drift` prints it. @param {View} V */
function showTable(V) {
  const d = V.d;
  V.table.replaceChildren();
  V.table.hidden = !d.table.length;
  if (!d.table.length) return;
  const table = el("table", "ragtt-ds-sources");
  const head = el("tr", "");
  for (const h of ["source", "centroid cosine", "chunks then → now (common)", ""]) head.append(el("th", "", h));
  table.append(el("thead", ""), el("tbody", ""));
  table.tHead?.append(head);
  const order = [...d.table].sort((a, b) => Number(b.drifted) - Number(a.drifted)
    || (a.cosine === null ? 2 : a.cosine) - (b.cosine === null ? 2 : b.cosine));
  for (const r of order) {
    const tr = el("tr", `ragtt-ds-row ragtt-ds-${r.status}${r.drifted ? " ragtt-ds-drifted" : ""}`);
    tr.dataset.source = r.source;
    const name = appendBreakable(el("td", "ragtt-ds-source"), r.source);
    if (r.renamed_from) name.append(el("div", "ragtt-ds-renamed-from", `renamed from ${r.renamed_from}`));
    tr.append(name,
      el("td", "ragtt-ds-num", r.cosine === null ? (r.status === "common" ? "n/a" : r.status) : r.cosine.toFixed(4)),
      el("td", "ragtt-ds-num", `${r.left} → ${r.right}${r.status === "common" ? ` (${r.common})` : ""}`),
      el("td", "ragtt-ds-flag", r.drifted ? "DRIFTED" : r.status === "renamed" ? "renamed" : ""));
    tr.title = r.summary;
    table.tBodies[0].append(tr);
  }
  V.table.append(el("div", "ragtt-ds-table-title", "Per source (as ragtt drift prints it)"), table);
}

/** The query's point in each version, a diamond. @param {View} V @param {CanvasRenderingContext2D} g
 * @param {Record<string, string>} c */
function drawQuery(V, g, c) {
  const q = V.d.query;
  for (let side = 0; side < 2; side++) {
    const qx = q.xy[2 * side], qy = q.xy[2 * side + 1];
    if (Number.isNaN(qx)) continue;
    const [x, y] = toPx(V, qx, qy);
    g.beginPath();
    g.moveTo(x, y - 8); g.lineTo(x + 8, y); g.lineTo(x, y + 8); g.lineTo(x - 8, y); g.closePath();
    g.fillStyle = side === 0 ? c.left : c.right;
    g.strokeStyle = c.sel;
    g.lineWidth = 1.5;
    g.fill();
    g.stroke();
  }
}

/** @param {View} V */
function drawAll(V) {
  layout(V);
  drawSegments(V);
  drawPoints(V);
  drawOverlay(V);
  if (!V.painted) {
    V.painted = true;
    V.root.dataset.painted = "1";
    if (window.performance && performance.mark) performance.mark("ragtt-drift-scatter-painted");
  }
}

// -- text -----------------------------------------------------------------------------------

/** @param {View} V */
function showHead(V) {
  const d = V.d, L = d.left, R = d.right;
  V.title.textContent = `Drift ${versionLabel(L.version, d.names)} → ${versionLabel(R.version, d.names)}`;
  const pct = (/** @type {number} */ v) => (Number.isNaN(v) ? "" : ` ${Math.round(v * 100)}%`);
  const axes = d.method === "pca" ? ` · PCA axes${pct(d.explained[0])},${pct(d.explained[1])} of variance, equal units`
    : " · UMAP";
  V.sub.textContent = `${d.n_left} → ${counted(d.n_right, "chunk")}, ${d.n_common} common${axes}`
    + (L.embedder !== R.embedder ? ` · embedder ${L.embedder} → ${R.embedder}` : (L.embedder ? ` · ${L.embedder}` : ""));
  V.warn.textContent = d.comparable ? "" : `The versions' vectors have different sizes (${L.dim} and ${R.dim}): `
    + "each is placed in its own coordinates, so the gap between them only says that everything changed.";
  V.warn.hidden = d.comparable;
  V.colorSel.value = V.model.get("color_by");
  V.segBox.checked = V.showSegments;
  showTable(V);
}

/** Swatches for the colours, the centroid moves, the selection and the query; text wraps, never clipped.
 * @param {View} V */
function showLegend(V) {
  const d = V.d, c = colors(V);
  V.legend.replaceChildren();
  const item = (/** @type {string} */ kind, /** @type {string} */ color, /** @type {string} */ label) => {
    const span = el("span", "ragtt-ds-legend-item");
    const sw = el("span", `ragtt-ds-swatch ragtt-ds-swatch-${kind}`);
    sw.style.setProperty("--ragtt-swatch", color);
    span.append(sw, el("span", "ragtt-ds-legend-text", label));
    V.legend.append(span);
  };
  if (V.model.get("color_by") === "source") {
    d.sources.slice(0, 9).forEach((/** @type {string} */ s, /** @type {number} */ i) => item("dot", PALETTE[i], s));
    if (d.sources.length > 9) item("dot", PALETTE[9], `… ${d.sources.length - 9} more sources (colours repeat)`);
    item("hollow", c.fg, `${versionLabel(d.left.version, d.names)}: hollow`);
    item("dot", c.fg, `${versionLabel(d.right.version, d.names)}: filled`);
  } else {
    item("dot", c.left, `${versionLabel(d.left.version, d.names)} (${d.n_left})`);
    item("dot", c.right, `${versionLabel(d.right.version, d.names)} (${d.n_right})`);
  }
  if (d.sources.length <= 200 && d.n_left && d.n_right) item("move", c.fg, "a source's centroid moving, then → now (●)");
  if (V.nSelected) item("ring", c.sel, "selected (larger, ringed; the rest dimmed)");
  if (d.query) item("diamond", c.sel, `query: ${d.query.text}`);
}

/** A point's chunk as the shared card. @param {View} V @param {number} i @param {"li" | "div"} tag */
function chunkItem(V, i, tag) {
  const d = V.d, chunk = chunkOf(d, i);
  const source = d.src[i] === OTHER ? "(other)" : d.sources[d.src[i]];
  return chunkCard({
    id: d.ids.get(chunk), text: d.texts.get(chunk), source, tag, terms: d.query ? d.query.terms : [],
    meta: [["ragtt-ds-ver", versionLabel(d.side[i] ? d.right.version : d.left.version, d.names)]],
  });
}

/** @param {View} V */
function showSelection(V) {
  const d = V.d, ids = V.model.get("selected");
  V.status.textContent = `${ids.length} selected`;
  V.list.replaceChildren();
  V.listTitle.textContent = ids.length ? `Selected chunks${ids.length > LIST_MAX ? ` (first ${LIST_MAX})` : ""}` : "";
  let shown = 0;
  const seen = new Set();
  for (let i = 0; i < d.n && shown < LIST_MAX; i++) {
    if (!V.selectedPoints[i]) continue;
    const chunk = chunkOf(d, i);
    if (seen.has(chunk)) continue;
    seen.add(chunk);
    V.list.append(chunkItem(V, i, "li"));
    shown++;
  }
  showLegend(V);
}

// -- selection ------------------------------------------------------------------------------

/** Mark the points of the model's selected chunk ids (after a change from Python). @param {View} V */
function fromModel(V) {
  const d = V.d, want = new Set(V.model.get("selected"));
  V.selectedPoints = new Uint8Array(d.n);
  if (want.size) for (let i = 0; i < d.n; i++) if (want.has(d.ids.get(chunkOf(d, i)))) V.selectedPoints[i] = 1;
  if (want.size || V.nSelected) afterSelect(V);
  else showSelection(V);  // nothing was or is selected: the points are drawn as they are
}

/** @param {View} V */
function afterSelect(V) {
  let n = 0;
  for (let i = 0; i < V.d.n; i++) n += V.selectedPoints[i];
  V.nSelected = n;
  drawSegments(V);
  drawPoints(V);
  drawOverlay(V);
  showSelection(V);
}

/** Select the chunks of `points` (a chunk is selected when any of its points is; both get marked).
 * @param {View} V @param {Uint8Array} points */
function select(V, points) {
  const d = V.d, chunks = new Set();
  for (let i = 0; i < d.n; i++) if (points[i]) chunks.add(chunkOf(d, i));
  const all = new Uint8Array(d.n);
  for (let i = 0; i < d.n; i++) if (chunks.has(chunkOf(d, i))) all[i] = 1;
  V.selectedPoints = all;
  V.model.set("selected", [...chunks].sort((a, b) => a - b).map((c) => d.ids.get(c)));
  V.model.save_changes();
  afterSelect(V);
}

/** Points inside a lasso polygon or box, in CSS px. @param {View} V @param {Array<[number, number]>} path */
function inside(V, path) {
  const d = V.d, hit = new Uint8Array(d.n);
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const [x, y] of path) { x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x); y1 = Math.max(y1, y); }
  const n = path.length;
  for (let i = 0; i < d.n; i++) {
    const x = V.px[i], y = V.py[i];
    if (x < x0 || x > x1 || y < y0 || y > y1) continue;
    if (V.mode === "box") { hit[i] = 1; continue; }
    let inPoly = false;
    for (let a = 0, b = n - 1; a < n; b = a++) {
      const [xa, ya] = path[a], [xb, yb] = path[b];
      if ((ya > y) !== (yb > y) && x < ((xb - xa) * (y - ya)) / (yb - ya) + xa) inPoly = !inPoly;
    }
    if (inPoly) hit[i] = 1;
  }
  return hit;
}

/** The point nearest (x, y) within HOVER_PX, or -1. @param {View} V @param {number} x @param {number} y */
function nearest(V, x, y) {
  if (!V.grid) return -1;
  const { cols, rows, start, items } = V.grid;
  const cx = (x / CELL) | 0, cy = (y / CELL) | 0;
  let best = -1, bestD = HOVER_PX * HOVER_PX;
  for (let gy = Math.max(0, cy - 1); gy <= Math.min(rows - 1, cy + 1); gy++) {
    for (let gx = Math.max(0, cx - 1); gx <= Math.min(cols - 1, cx + 1); gx++) {
      const c = gy * cols + gx;
      for (let k = start[c]; k < start[c + 1]; k++) {
        const i = items[k], dx = V.px[i] - x, dy = V.py[i] - y, dd = dx * dx + dy * dy;
        if (dd <= bestD) { bestD = dd; best = i; }
      }
    }
  }
  return best;
}

/** @param {View} V @param {number} i @param {number} [x] @param {number} [y] */
function showHover(V, i, x = 0, y = 0) {
  V.hoverPoint = i;
  if (i < 0) { V.hover.hidden = true; return; }
  const card = chunkItem(V, i, "div");
  V.hover.replaceChildren(card);
  V.hover.hidden = false;
  V.hover.style.left = `${Math.max(0, Math.min(x + 12, V.w - 320))}px`;
  V.hover.style.top = `${Math.max(0, Math.min(y + 12, HEIGHT - 150))}px`;
}

// -- pointer --------------------------------------------------------------------------------

/** Lasso / box selection, click to pick, pan (Pan mode, alt- or middle-drag), hover.
 * @param {View} V */
function attachPointer(V) {
  const ov = V.overlay;
  /** @type {Array<[number, number]> | null} */ let path = null;
  /** @type {[number, number] | null} */ let panFrom = null;
  let additive = false, hoverFrame = 0;
  const local = (/** @type {PointerEvent | MouseEvent} */ e) => {
    const r = ov.getBoundingClientRect();
    return /** @type {[number, number]} */ ([e.clientX - r.left, e.clientY - r.top]);
  };
  ov.addEventListener("pointerdown", (e) => {
    if (e.button !== 0 && e.button !== 1) return;
    ov.setPointerCapture(e.pointerId);
    showHover(V, -1);
    if (V.mode === "pan" || e.altKey || e.button === 1) panFrom = local(e);
    else { path = [local(e)]; additive = e.shiftKey; }
    e.preventDefault();
  });
  ov.addEventListener("pointermove", (e) => {
    const [x, y] = local(e);
    if (panFrom) {
      V.view.ux -= (x - panFrom[0]) / V.view.k;
      V.view.uy += (y - panFrom[1]) / V.view.k;
      panFrom = [x, y];
      redrawSoon(V);
    } else if (path) {
      if (V.mode === "box") path = [path[0], [x, path[0][1]], [x, y], [path[0][0], y]];
      else path.push([x, y]);
      drawOverlay(V, path);
    } else if (!hoverFrame) {
      hoverFrame = requestAnimationFrame(() => { hoverFrame = 0; showHover(V, nearest(V, x, y), x, y); drawOverlay(V); });
    }
  });
  const finish = (/** @type {PointerEvent} */ e) => {
    if (ov.hasPointerCapture(e.pointerId)) ov.releasePointerCapture(e.pointerId);
    panFrom = null;
    if (!path) return;
    const done = path;
    path = null;
    if (done.length < 3) {  // a click: select the point under it, or clear
      const i = nearest(V, done[0][0], done[0][1]);
      const pts = additive ? V.selectedPoints.slice() : new Uint8Array(V.d.n);
      if (i >= 0) pts[i] = 1;
      select(V, pts);
      return;
    }
    const hit = inside(V, done);
    if (additive) for (let i = 0; i < V.d.n; i++) hit[i] |= V.selectedPoints[i];
    select(V, hit);
  };
  ov.addEventListener("pointerup", finish);
  ov.addEventListener("pointercancel", finish);
  ov.addEventListener("pointerleave", () => { if (!path) { showHover(V, -1); drawOverlay(V); } });
  ov.addEventListener("wheel", (e) => {  // zoom about the pointer
    e.preventDefault();
    const [x, y] = local(e);
    const f = Math.exp(-Math.max(-100, Math.min(100, e.deltaY)) * 0.0025);
    const { k, ux, uy } = V.view, cx = V.w / 2, cy = HEIGHT / 2;
    const dx = ux + (x - cx) / k, dy = uy - (y - cy) / k;
    V.view = { k: k * f, ux: dx - (x - cx) / (k * f), uy: dy + (y - cy) / (k * f) };
    redrawSoon(V);
  }, { passive: false });
  ov.addEventListener("dblclick", () => { fit(V); drawAll(V); });
  V.root.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { e.stopPropagation(); select(V, new Uint8Array(V.d.n)); }
  });
}

/** One redraw per frame while panning or zooming. @param {View} V */
function redrawSoon(V) {
  if (V.frame) return;
  V.frame = requestAnimationFrame(() => { V.frame = 0; drawAll(V); });
}

/** @param {import("./types.js").RenderProps} props */
function render({ model, el: host }) {
  const V = createView(model);
  host.append(V.root);
  buildControls(V);
  attachPointer(V);
  const onColor = () => { V.colorSel.value = model.get("color_by"); drawPoints(V); showLegend(V); };
  const onData = () => {
    V.d = decode(model.get("_data"));
    V.showSegments = V.d.segments_default;
    V.selectedPoints = new Uint8Array(V.d.n);
    showHead(V);
    fit(V);
    drawAll(V);
    fromModel(V);
  };
  const onSelected = () => fromModel(V);
  model.on("change:selected", onSelected);
  model.on("change:color_by", onColor);
  model.on("change:_data", onData);
  let lastW = -1;
  const resize = new ResizeObserver(() => {
    const now = V.plot.clientWidth;
    if (now && now !== lastW) { lastW = now; fit(V); drawAll(V); }
  });
  setMode(V, "lasso");
  showHead(V);
  fit(V);
  drawAll(V);
  lastW = V.plot.clientWidth;
  fromModel(V);
  resize.observe(V.plot);
  return () => {
    resize.disconnect();
    model.off("change:selected", onSelected);
    model.off("change:color_by", onColor);
    model.off("change:_data", onData);
  };
}

export default { render };
