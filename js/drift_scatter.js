// Generated from js/src/drift_scatter.js by js/build.mjs (./dev build): edit the sources, not this file.

// js/src/dom.js
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== void 0 && text !== null) node.textContent = String(text);
  return node;
}
function button(cls, label, aria, onClick) {
  const b = el("button", cls, label);
  b.type = "button";
  b.setAttribute("aria-label", aria);
  b.addEventListener("click", onClick);
  return b;
}
function themeColors(root, spec) {
  const cs = getComputedStyle(root);
  const out = {};
  for (const [name, [variable, fallback]] of Object.entries(spec)) {
    out[name] = cs.getPropertyValue(variable).trim() || fallback;
  }
  return out;
}

// js/src/wire.js
var TYPES = {
  int16: Int16Array,
  uint16: Uint16Array,
  uint8: Uint8Array,
  int32: Int32Array,
  float32: Float32Array
};
function typed(buf) {
  const T = TYPES[buf && buf.dtype];
  if (!T) throw new Error(`ragtt: unsupported buffer dtype ${buf && buf.dtype}`);
  const v = buf.view;
  const bytes = v instanceof ArrayBuffer ? v : v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength);
  const arr = new T(bytes);
  if (arr.length !== buf.shape[0]) throw new Error(`ragtt: buffer length ${arr.length} != shape ${buf.shape[0]}`);
  return arr;
}
function strings(packed) {
  if (packed.hex) {
    const raw = typed(packed.hex), width = packed.width || 1;
    const hex = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
    return {
      length: raw.length / width,
      get: (i) => {
        let s = "";
        for (let k = i * width; k < (i + 1) * width; k++) s += hex[raw[k]];
        return s;
      }
    };
  }
  const bytes = typed(packed.bytes), off = typed(packed.offsets);
  const dec = new TextDecoder();
  return { length: off.length - 1, get: (i) => dec.decode(bytes.subarray(off[i], off[i + 1])) };
}

// js/src/labels.js
function versionLabel(version, names) {
  const name = names && names[String(version)];
  return name ? `${name} (v${version})` : `v${version}`;
}

// js/src/chunk_card.js
var STOP = new Set("a an and are as at be by can do does for from how i if in is it its of on or so that the their then there these this to was what when where which who why will with you your my me we our have has had not no yes".split(" "));
var WORD = /[\p{L}\p{N}_]+/gu;
var OP_CLASS = { delete: "ragtt-wd-del", insert: "ragtt-wd-ins" };
function queryTerms(query) {
  const out = /* @__PURE__ */ new Set();
  for (const m of String(query || "").toLowerCase().matchAll(WORD)) {
    if (m[0].length > 1 && !STOP.has(m[0])) out.add(m[0]);
  }
  return [...out];
}
function matchTerm(word, terms) {
  for (const t of terms) {
    if (word === t) return t;
    if (t.length >= 4 && word.length >= 4 && (word.startsWith(t) || t.startsWith(word))) return t;
  }
  return null;
}
function sentences(text) {
  const out = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const end = c === "\n" || ".!?".includes(c) && (i + 1 === text.length || /\s/.test(text[i + 1]));
    if (!end) continue;
    let j = i + 1;
    while (j < text.length && /[ \t\n]/.test(text[j])) j++;
    out.push(text.slice(start, j));
    start = j;
    i = j - 1;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}
function appendHighlighted(parent, text, terms) {
  let last = 0, hits = 0;
  const seen = /* @__PURE__ */ new Set();
  if (terms.length) {
    for (const m of text.matchAll(WORD)) {
      const t = matchTerm(m[0].toLowerCase(), terms);
      if (!t) continue;
      const at = (
        /** @type {number} */
        m.index
      );
      if (at > last) parent.appendChild(document.createTextNode(text.slice(last, at)));
      parent.appendChild(el("mark", "ragtt-hl", m[0]));
      last = at + m[0].length;
      hits++;
      seen.add(t);
    }
  }
  if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  return { distinct: seen.size, hits };
}
function fillBody(body, spec, terms) {
  let best = null, bestIndex = -1, bestScore = [0, 0];
  if (spec.runs) {
    spec.runs.forEach(([op, text], i) => {
      const cls = OP_CLASS[op];
      const node = el(op === "delete" ? "del" : op === "insert" ? "ins" : "span", cls || "ragtt-wd-eq");
      appendHighlighted(node, text, terms);
      body.append(node);
      if (cls && !best) {
        best = node;
        bestIndex = i;
      }
    });
    return { target: best, index: bestIndex };
  }
  sentences(spec.text).forEach((s, i) => {
    const node = el("span", "ragtt-sentence");
    const { distinct, hits } = appendHighlighted(node, s, terms);
    body.append(node);
    if (distinct > bestScore[0] || distinct === bestScore[0] && hits > bestScore[1]) {
      best = node;
      bestIndex = i;
      bestScore = [distinct, hits];
    }
  });
  return { target: best, index: bestIndex };
}
function reveal(card) {
  const body = (
    /** @type {HTMLElement | null} */
    card.querySelector(".ragtt-chunk-text")
  );
  const toggle = (
    /** @type {HTMLElement | null} */
    card.querySelector(".ragtt-card-toggle")
  );
  if (!body || !toggle) return;
  const expanded = card.classList.contains("ragtt-expanded");
  const idx = Number(card.dataset.best);
  const target = idx >= 0 ? (
    /** @type {HTMLElement | undefined} */
    body.children[idx]
  ) : void 0;
  body.scrollTop = !expanded && target ? Math.max(0, target.offsetTop - 2) : 0;
  toggle.hidden = !expanded && body.scrollHeight <= body.clientHeight + 1;
}
function chunkCard(spec) {
  const card = el(spec.tag || "li", `ragtt-chunk${spec.cls ? ` ${spec.cls}` : ""}`);
  card.dataset.chunkId = spec.id;
  const meta = el("div", "ragtt-chunk-meta");
  for (const [cls, text] of spec.meta || []) meta.append(el("span", cls, text));
  if (spec.source !== void 0) meta.append(el("span", "ragtt-source", spec.source));
  for (const b of spec.badges || []) meta.append(el("span", `ragtt-badge ragtt-badge-${b.replace(/[^a-z0-9-]/gi, "")}`, b));
  const open = card.classList.contains("ragtt-expanded");
  const toggle = el("button", "ragtt-card-toggle", open ? "less" : "more");
  toggle.type = "button";
  toggle.setAttribute("aria-expanded", String(open));
  toggle.addEventListener("click", (e) => {
    e.stopPropagation();
    const open2 = card.classList.toggle("ragtt-expanded");
    toggle.textContent = open2 ? "less" : "more";
    toggle.setAttribute("aria-expanded", String(open2));
    reveal(card);
  });
  meta.append(toggle);
  const body = el("div", "ragtt-chunk-text");
  const { index } = fillBody(body, spec, spec.terms || []);
  card.dataset.best = String(index);
  card.append(meta, body);
  requestAnimationFrame(() => {
    if (card.isConnected) reveal(card);
  });
  return card;
}

// js/src/drift_scatter.js
var Q = 32767;
var OTHER = 65535;
var HEIGHT = 460;
var PAD = 12;
var CELL = 8;
var HOVER_PX = 7;
var LIST_MAX = 200;
var RING_MAX = 5e3;
var DIM = 0.18;
var PALETTE = [
  "#1f77b4",
  "#ff7f0e",
  "#2ca02c",
  "#d62728",
  "#9467bd",
  "#8c564b",
  "#e377c2",
  "#17becf",
  "#bcbd22",
  "#7f7f7f"
];
function decode(data) {
  const p = data.points;
  const qx = typed(p.x), qy = typed(p.y), bounds = typed(data.bounds);
  const n = qx.length;
  const x = new Float32Array(n), y = new Float32Array(n);
  const sx = (bounds[1] - bounds[0]) / (2 * Q), sy = (bounds[3] - bounds[2]) / (2 * Q);
  for (let i = 0; i < n; i++) {
    x[i] = bounds[0] + (qx[i] + Q) * sx;
    y[i] = bounds[2] + (qy[i] + Q) * sy;
  }
  return {
    ...data,
    n,
    x,
    y,
    bounds,
    side: typed(p.version),
    src: typed(p.source),
    explained: typed(data.explained),
    ids: strings(data.chunks.ids),
    texts: strings(data.chunks.text),
    centroids: typed(data.source_centroids),
    query: data.query && { text: data.query.text, xy: typed(data.query.xy), terms: queryTerms(data.query.text) },
    names: data.labels || {},
    /** @type {Array<{source: string, status: string, cosine: number | null, left: number, right: number, common: number, drifted: boolean, summary: string, renamed_from: string | null}>} */
    table: data.source_table || []
  };
}
function chunkOf(d, i) {
  if (i < d.n_left) return i;
  const j = i - d.n_left;
  return j < d.n_common ? j : d.n_left + j - d.n_common;
}
function rgba32(color, alpha) {
  const c = document.createElement("canvas");
  c.width = c.height = 1;
  const g = (
    /** @type {CanvasRenderingContext2D} */
    c.getContext("2d")
  );
  g.fillStyle = color;
  g.fillRect(0, 0, 1, 1);
  const [r, gg, b] = g.getImageData(0, 0, 1, 1).data;
  return (Math.round(alpha * 255) << 24 | b << 16 | gg << 8 | r) >>> 0;
}
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
    model,
    d,
    root,
    title,
    sub,
    warn,
    controls,
    plot,
    hover,
    legend,
    listTitle,
    list,
    table,
    segCanvas: canvases[0],
    pointCanvas: canvases[1],
    overlay: canvases[2],
    colorSel: el("select", "ragtt-ds-color"),
    segBox: el("input"),
    status: el("span", "ragtt-ds-status"),
    /** @type {Record<string, HTMLButtonElement>} */
    modeBtns: {},
    mode: "lasso",
    showSegments: d.segments_default,
    px: new Float32Array(0),
    py: new Float32Array(0),
    // point positions, CSS px
    /** @type {{cols: number, rows: number, start: Int32Array, items: Int32Array} | null} */
    grid: null,
    selectedPoints: new Uint8Array(d.n),
    nSelected: 0,
    hoverPoint: -1,
    w: 0,
    dpr: 1,
    painted: false,
    view: { k: 1, ux: 0, uy: 0 },
    // pixels per projection unit, and the projection point at the centre
    frame: 0
    // a pending redraw (pan, zoom)
  };
}
function buildControls(V) {
  V.colorSel.setAttribute("aria-label", "colour points by");
  for (const [v, label] of [["version", "colour: version"], ["source", "colour: source"]]) {
    const o = el("option", "", label);
    o.value = v;
    V.colorSel.append(o);
  }
  V.colorSel.addEventListener("change", () => {
    V.model.set("color_by", V.colorSel.value);
    V.model.save_changes();
  });
  const segLabel = el("label", "ragtt-ds-seg");
  V.segBox.type = "checkbox";
  segLabel.append(V.segBox, document.createTextNode(" chunk segments"));
  V.segBox.addEventListener("change", () => {
    V.showSegments = V.segBox.checked;
    drawSegments(V);
  });
  V.controls.append(V.colorSel, segLabel);
  for (const [name, label, aria] of [
    ["lasso", "Lasso", "lasso select"],
    ["box", "Box", "box select"],
    ["pan", "Pan", "pan (or alt-drag; wheel zooms, double-click resets)"]
  ]) {
    const b = button("ragtt-ds-btn", label, aria, () => setMode(V, name));
    b.dataset.mode = name;
    V.modeBtns[name] = b;
    V.controls.append(b);
  }
  V.controls.append(
    button("ragtt-ds-btn", "Reset view", "reset zoom and pan", () => {
      fit(V);
      drawAll(V);
    }),
    button("ragtt-ds-btn", "Clear", "clear the selection", () => select(V, new Uint8Array(V.d.n))),
    V.status
  );
}
function setMode(V, name) {
  V.mode = name;
  for (const [m, b] of Object.entries(V.modeBtns)) b.classList.toggle("ragtt-active", m === name);
  V.overlay.style.cursor = name === "pan" ? "grab" : "crosshair";
}
function colors(V) {
  return themeColors(V.root, {
    left: ["--jp-brand-color1", "#1976d2"],
    right: ["--jp-warn-color1", "#f57c00"],
    fg: ["--jp-ui-font-color1", "#333"],
    dim: ["--jp-ui-font-color2", "#777"],
    sel: ["--jp-ui-font-color0", "#000"],
    bg: ["--jp-layout-color0", "#fff"],
    font: ["--jp-ui-font-family", "system-ui, sans-serif"]
  });
}
function fit(V) {
  const b = V.d.bounds;
  const w = Math.max(200, V.plot.clientWidth || 640);
  const k = Math.min((w - 2 * PAD) / (b[1] - b[0] || 1), (HEIGHT - 2 * PAD) / (b[3] - b[2] || 1));
  V.view = { k, ux: (b[0] + b[1]) / 2, uy: (b[2] + b[3]) / 2 };
}
var toPx = (V, x, y) => [V.w / 2 + (x - V.view.ux) * V.view.k, HEIGHT / 2 - (y - V.view.uy) * V.view.k];
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
  for (let i = 0; i < d.n; i++) {
    px[i] = cx + (d.x[i] - ux) * k;
    py[i] = cy - (d.y[i] - uy) * k;
  }
  V.px = px;
  V.py = py;
  V.root.dataset.view = JSON.stringify({ k, ux, uy, w: V.w, h: HEIGHT });
  const cols = Math.ceil(V.w / CELL) + 1, rows = Math.ceil(HEIGHT / CELL) + 1;
  const cellOf = new Int32Array(d.n).fill(-1);
  const start = new Int32Array(cols * rows + 1);
  for (let i = 0; i < d.n; i++) {
    if (!(px[i] >= 0 && px[i] < V.w && py[i] >= 0 && py[i] < HEIGHT)) continue;
    const c = (py[i] / CELL | 0) * cols + (px[i] / CELL | 0);
    cellOf[i] = c;
    start[c + 1]++;
  }
  for (let c = 0; c < cols * rows; c++) start[c + 1] += start[c];
  const fill = start.slice(0, cols * rows);
  const items = new Int32Array(start[cols * rows]);
  for (let i = 0; i < d.n; i++) if (cellOf[i] >= 0) items[fill[cellOf[i]]++] = i;
  V.grid = { cols, rows, start, items };
}
function pointColors(V, alpha) {
  const d = V.d, c = colors(V);
  if (V.model.get("color_by") === "source") {
    const table2 = PALETTE.map((p) => rgba32(p, alpha));
    return (i) => d.src[i] === OTHER ? table2[9] : table2[d.src[i] % 9];
  }
  const table = [rgba32(c.left, alpha), rgba32(c.right, alpha)];
  return (i) => table[d.side[i]];
}
function drawPoints(V) {
  const d = V.d, W = V.pointCanvas.width, H = V.pointCanvas.height;
  const g = (
    /** @type {CanvasRenderingContext2D} */
    V.pointCanvas.getContext("2d")
  );
  const img = g.createImageData(W, H);
  const buf = new Uint32Array(img.data.buffer);
  const any = V.nSelected > 0;
  const plain = pointColors(V, any ? DIM : 0.85), strong = pointColors(V, 1);
  const css = d.n <= 2e3 ? 6 : d.n <= 2e4 ? 3 : 2;
  const square = (i, size2, col) => {
    const half = size2 >> 1;
    const x0 = Math.round(V.px[i] * V.dpr) - half, y0 = Math.round(V.py[i] * V.dpr) - half;
    for (let yy = Math.max(0, y0); yy < y0 + size2 && yy < H; yy++) {
      const row = yy * W;
      for (let xx = Math.max(0, x0); xx < x0 + size2 && xx < W; xx++) buf[row + xx] = col;
    }
  };
  const size = Math.max(1, Math.round(css * V.dpr)), big = Math.max(size + 2, Math.round((css + 3) * V.dpr));
  const hollow = V.model.get("color_by") === "source" && size >= 4;
  const ring = (i, col) => {
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
  if (any) {
    for (let i = 0; i < d.n; i++) if (V.selectedPoints[i]) square(i, big, strong(i));
  }
  g.putImageData(img, 0, 0);
}
function drawSegments(V) {
  const d = V.d;
  const g = (
    /** @type {CanvasRenderingContext2D} */
    V.segCanvas.getContext("2d")
  );
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
function drawOverlay(V, path) {
  const d = V.d, c = colors(V);
  const g = (
    /** @type {CanvasRenderingContext2D} */
    V.overlay.getContext("2d")
  );
  g.setTransform(V.dpr, 0, 0, V.dpr, 0, 0);
  g.clearRect(0, 0, V.w, HEIGHT);
  if (d.sources.length <= 200) drawMoves(V, g, c);
  if (V.nSelected && V.nSelected <= RING_MAX) {
    g.strokeStyle = c.sel;
    g.lineWidth = 1.5;
    g.beginPath();
    const r = d.n <= 2e3 ? 6.5 : 4.5;
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
function drawMoves(V, g, c) {
  const d = V.d;
  const row = new Map(d.table.map((r) => [r.source, r]));
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
  const boxes = [];
  for (const m of moves) {
    const [lx, ly] = d.centroids.subarray(4 * m.from, 4 * m.from + 2), [rx, ry] = d.centroids.subarray(4 * m.to + 2, 4 * m.to + 4);
    if ([lx, ly, rx, ry].some(Number.isNaN)) continue;
    const [ax, ay] = toPx(V, lx, ly), [bx, by] = toPx(V, rx, ry);
    g.strokeStyle = g.fillStyle = c.fg;
    g.lineWidth = 1.5;
    g.setLineDash(m.dashed ? [5, 3] : []);
    g.beginPath();
    g.moveTo(ax, ay);
    g.lineTo(bx, by);
    g.stroke();
    g.setLineDash([]);
    g.beginPath();
    g.arc(bx, by, 3, 0, 2 * Math.PI);
    g.fill();
    const w = g.measureText(m.text).width, h = 13;
    const spots = [
      [bx + 6, by - h],
      [bx + 6, by + 2],
      [bx - 6 - w, by - h],
      [bx - 6 - w, by + 2],
      [bx - w / 2, by - 8 - h],
      [bx - w / 2, by + 8]
    ];
    const clamp = ([x2, y2]) => [Math.min(Math.max(2, x2), V.w - w - 2), Math.min(Math.max(2, y2), HEIGHT - h - 2)];
    const free = spots.map(clamp).find(([x2, y2]) => boxes.every((b) => x2 + w < b.x0 || x2 > b.x1 || y2 + h < b.y0 || y2 > b.y1));
    const [x, y] = free || clamp(spots[0]);
    g.fillStyle = c.bg;
    g.globalAlpha = 0.85;
    g.fillRect(x - 2, y, w + 4, h);
    g.globalAlpha = 1;
    g.fillStyle = c.fg;
    g.fillText(m.text, x, y + h / 2);
    boxes.push({ source: m.source, text: m.text, x0: x, y0: y, x1: x + w, y1: y + h });
  }
  V.root.dataset.arrowLabels = JSON.stringify(boxes.map((b) => ({
    ...b,
    x0: Math.round(b.x0),
    y0: Math.round(b.y0),
    x1: Math.round(b.x1),
    y1: Math.round(b.y1)
  })));
}
var short = (name) => name.length > 28 ? `…${name.slice(-27)}` : name;
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
  const order = [...d.table].sort((a, b) => Number(b.drifted) - Number(a.drifted) || (a.cosine === null ? 2 : a.cosine) - (b.cosine === null ? 2 : b.cosine));
  for (const r of order) {
    const tr = el("tr", `ragtt-ds-row ragtt-ds-${r.status}${r.drifted ? " ragtt-ds-drifted" : ""}`);
    tr.dataset.source = r.source;
    const name = el("td", "ragtt-ds-source", r.source);
    if (r.renamed_from) name.append(el("div", "ragtt-ds-renamed-from", `renamed from ${r.renamed_from}`));
    tr.append(
      name,
      el("td", "ragtt-ds-num", r.cosine === null ? r.status === "common" ? "n/a" : r.status : r.cosine.toFixed(4)),
      el("td", "ragtt-ds-num", `${r.left} → ${r.right}${r.status === "common" ? ` (${r.common})` : ""}`),
      el("td", "ragtt-ds-flag", r.drifted ? "DRIFTED" : r.status === "renamed" ? "renamed" : "")
    );
    tr.title = r.summary;
    table.tBodies[0].append(tr);
  }
  V.table.append(el("div", "ragtt-ds-table-title", "Per source (as ragtt drift prints it)"), table);
}
function drawQuery(V, g, c) {
  const q = V.d.query;
  for (let side = 0; side < 2; side++) {
    const qx = q.xy[2 * side], qy = q.xy[2 * side + 1];
    if (Number.isNaN(qx)) continue;
    const [x, y] = toPx(V, qx, qy);
    g.beginPath();
    g.moveTo(x, y - 8);
    g.lineTo(x + 8, y);
    g.lineTo(x, y + 8);
    g.lineTo(x - 8, y);
    g.closePath();
    g.fillStyle = side === 0 ? c.left : c.right;
    g.strokeStyle = c.sel;
    g.lineWidth = 1.5;
    g.fill();
    g.stroke();
  }
}
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
function showHead(V) {
  const d = V.d, L = d.left, R = d.right;
  V.title.textContent = `Drift ${versionLabel(L.version, d.names)} → ${versionLabel(R.version, d.names)}`;
  const pct = (v) => Number.isNaN(v) ? "" : ` ${Math.round(v * 100)}%`;
  const axes = d.method === "pca" ? ` · PCA axes${pct(d.explained[0])},${pct(d.explained[1])} of variance, equal units` : " · UMAP";
  V.sub.textContent = `${d.n_left} → ${d.n_right} chunks, ${d.n_common} common${axes}` + (L.embedder !== R.embedder ? ` · embedder ${L.embedder} → ${R.embedder}` : L.embedder ? ` · ${L.embedder}` : "");
  V.warn.textContent = d.comparable ? "" : `The versions' vectors have different sizes (${L.dim} and ${R.dim}): each is placed in its own coordinates, so the gap between them only says that everything changed.`;
  V.warn.hidden = d.comparable;
  V.colorSel.value = V.model.get("color_by");
  V.segBox.checked = V.showSegments;
  showTable(V);
}
function showLegend(V) {
  const d = V.d, c = colors(V);
  V.legend.replaceChildren();
  const item = (kind, color, label) => {
    const span = el("span", "ragtt-ds-legend-item");
    const sw = el("span", `ragtt-ds-swatch ragtt-ds-swatch-${kind}`);
    sw.style.setProperty("--ragtt-swatch", color);
    span.append(sw, el("span", "ragtt-ds-legend-text", label));
    V.legend.append(span);
  };
  if (V.model.get("color_by") === "source") {
    d.sources.slice(0, 9).forEach((s, i) => item("dot", PALETTE[i], s));
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
function chunkItem(V, i, tag) {
  const d = V.d, chunk = chunkOf(d, i);
  const source = d.src[i] === OTHER ? "(other)" : d.sources[d.src[i]];
  return chunkCard({
    id: d.ids.get(chunk),
    text: d.texts.get(chunk),
    source,
    tag,
    terms: d.query ? d.query.terms : [],
    meta: [["ragtt-ds-ver", versionLabel(d.side[i] ? d.right.version : d.left.version, d.names)]]
  });
}
function showSelection(V) {
  const d = V.d, ids = V.model.get("selected");
  V.status.textContent = `${ids.length} selected`;
  V.list.replaceChildren();
  V.listTitle.textContent = ids.length ? `Selected chunks${ids.length > LIST_MAX ? ` (first ${LIST_MAX})` : ""}` : "";
  let shown = 0;
  const seen = /* @__PURE__ */ new Set();
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
function fromModel(V) {
  const d = V.d, want = new Set(V.model.get("selected"));
  V.selectedPoints = new Uint8Array(d.n);
  if (want.size) {
    for (let i = 0; i < d.n; i++) if (want.has(d.ids.get(chunkOf(d, i)))) V.selectedPoints[i] = 1;
  }
  if (want.size || V.nSelected) afterSelect(V);
  else showSelection(V);
}
function afterSelect(V) {
  let n = 0;
  for (let i = 0; i < V.d.n; i++) n += V.selectedPoints[i];
  V.nSelected = n;
  drawSegments(V);
  drawPoints(V);
  drawOverlay(V);
  showSelection(V);
}
function select(V, points) {
  const d = V.d, chunks = /* @__PURE__ */ new Set();
  for (let i = 0; i < d.n; i++) if (points[i]) chunks.add(chunkOf(d, i));
  const all = new Uint8Array(d.n);
  for (let i = 0; i < d.n; i++) if (chunks.has(chunkOf(d, i))) all[i] = 1;
  V.selectedPoints = all;
  V.model.set("selected", [...chunks].sort((a, b) => a - b).map((c) => d.ids.get(c)));
  V.model.save_changes();
  afterSelect(V);
}
function inside(V, path) {
  const d = V.d, hit = new Uint8Array(d.n);
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const [x, y] of path) {
    x0 = Math.min(x0, x);
    y0 = Math.min(y0, y);
    x1 = Math.max(x1, x);
    y1 = Math.max(y1, y);
  }
  const n = path.length;
  for (let i = 0; i < d.n; i++) {
    const x = V.px[i], y = V.py[i];
    if (x < x0 || x > x1 || y < y0 || y > y1) continue;
    if (V.mode === "box") {
      hit[i] = 1;
      continue;
    }
    let inPoly = false;
    for (let a = 0, b = n - 1; a < n; b = a++) {
      const [xa, ya] = path[a], [xb, yb] = path[b];
      if (ya > y !== yb > y && x < (xb - xa) * (y - ya) / (yb - ya) + xa) inPoly = !inPoly;
    }
    if (inPoly) hit[i] = 1;
  }
  return hit;
}
function nearest(V, x, y) {
  if (!V.grid) return -1;
  const { cols, rows, start, items } = V.grid;
  const cx = x / CELL | 0, cy = y / CELL | 0;
  let best = -1, bestD = HOVER_PX * HOVER_PX;
  for (let gy = Math.max(0, cy - 1); gy <= Math.min(rows - 1, cy + 1); gy++) {
    for (let gx = Math.max(0, cx - 1); gx <= Math.min(cols - 1, cx + 1); gx++) {
      const c = gy * cols + gx;
      for (let k = start[c]; k < start[c + 1]; k++) {
        const i = items[k], dx = V.px[i] - x, dy = V.py[i] - y, dd = dx * dx + dy * dy;
        if (dd <= bestD) {
          bestD = dd;
          best = i;
        }
      }
    }
  }
  return best;
}
function showHover(V, i, x = 0, y = 0) {
  V.hoverPoint = i;
  if (i < 0) {
    V.hover.hidden = true;
    return;
  }
  const card = chunkItem(V, i, "div");
  V.hover.replaceChildren(card);
  V.hover.hidden = false;
  V.hover.style.left = `${Math.max(0, Math.min(x + 12, V.w - 320))}px`;
  V.hover.style.top = `${Math.max(0, Math.min(y + 12, HEIGHT - 150))}px`;
}
function attachPointer(V) {
  const ov = V.overlay;
  let path = null;
  let panFrom = null;
  let additive = false, hoverFrame = 0;
  const local = (e) => {
    const r = ov.getBoundingClientRect();
    return (
      /** @type {[number, number]} */
      [e.clientX - r.left, e.clientY - r.top]
    );
  };
  ov.addEventListener("pointerdown", (e) => {
    if (e.button !== 0 && e.button !== 1) return;
    ov.setPointerCapture(e.pointerId);
    showHover(V, -1);
    if (V.mode === "pan" || e.altKey || e.button === 1) panFrom = local(e);
    else {
      path = [local(e)];
      additive = e.shiftKey;
    }
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
      hoverFrame = requestAnimationFrame(() => {
        hoverFrame = 0;
        showHover(V, nearest(V, x, y), x, y);
        drawOverlay(V);
      });
    }
  });
  const finish = (e) => {
    if (ov.hasPointerCapture(e.pointerId)) ov.releasePointerCapture(e.pointerId);
    panFrom = null;
    if (!path) return;
    const done = path;
    path = null;
    if (done.length < 3) {
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
  ov.addEventListener("pointerleave", () => {
    if (!path) {
      showHover(V, -1);
      drawOverlay(V);
    }
  });
  ov.addEventListener("wheel", (e) => {
    e.preventDefault();
    const [x, y] = local(e);
    const f = Math.exp(-Math.max(-100, Math.min(100, e.deltaY)) * 25e-4);
    const { k, ux, uy } = V.view, cx = V.w / 2, cy = HEIGHT / 2;
    const dx = ux + (x - cx) / k, dy = uy - (y - cy) / k;
    V.view = { k: k * f, ux: dx - (x - cx) / (k * f), uy: dy + (y - cy) / (k * f) };
    redrawSoon(V);
  }, { passive: false });
  ov.addEventListener("dblclick", () => {
    fit(V);
    drawAll(V);
  });
  V.root.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      select(V, new Uint8Array(V.d.n));
    }
  });
}
function redrawSoon(V) {
  if (V.frame) return;
  V.frame = requestAnimationFrame(() => {
    V.frame = 0;
    drawAll(V);
  });
}
function render({ model, el: host }) {
  const V = createView(model);
  host.append(V.root);
  buildControls(V);
  attachPointer(V);
  const onColor = () => {
    V.colorSel.value = model.get("color_by");
    drawPoints(V);
    showLegend(V);
  };
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
    if (now && now !== lastW) {
      lastW = now;
      fit(V);
      drawAll(V);
    }
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
var drift_scatter_default = { render };
export {
  drift_scatter_default as default
};
