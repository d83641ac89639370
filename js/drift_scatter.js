// Generated from js/src/drift_scatter.js by js/build.mjs (./dev build): edit the sources, not this file.

// js/src/drift_scatter.js
var Q = 32767;
var OTHER = 65535;
var HEIGHT = 460;
var PAD = 12;
var CELL = 8;
var HOVER_PX = 7;
var LIST_MAX = 200;
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
function typed(buf) {
  const types = { int16: Int16Array, uint16: Uint16Array, uint8: Uint8Array, int32: Int32Array, float32: Float32Array };
  const T = types[buf && buf.dtype];
  if (!T) throw new Error(`ragtt: unsupported buffer dtype ${buf && buf.dtype}`);
  const v = buf.view;
  const bytes = v instanceof ArrayBuffer ? v : v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength);
  const arr = new T(bytes);
  if (arr.length !== buf.shape[0]) throw new Error(`ragtt: buffer length ${arr.length} != shape ${buf.shape[0]}`);
  return arr;
}
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== void 0) node.textContent = String(text);
  return node;
}
function strings(packed) {
  if (packed.hex) {
    const raw = typed(packed.hex), width = packed.width;
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
function decode(data) {
  const p = data.points;
  const d = {
    ...data,
    x: typed(p.x),
    y: typed(p.y),
    side: typed(p.version),
    src: typed(p.source),
    bounds: typed(data.bounds),
    explained: typed(data.explained),
    ids: strings(data.chunks.ids),
    texts: strings(data.chunks.text),
    centroids: typed(data.source_centroids),
    query: data.query && { text: data.query.text, xy: typed(data.query.xy) }
  };
  d.n = d.x.length;
  return d;
}
function chunkOf(d, i) {
  if (i < d.n_left) return i;
  const j = i - d.n_left;
  return j < d.n_common ? j : d.n_left + j - d.n_common;
}
function hexRGBA(color, alpha) {
  const c = document.createElement("canvas");
  c.width = c.height = 1;
  const g = c.getContext("2d");
  g.fillStyle = color;
  g.fillRect(0, 0, 1, 1);
  const [r, gg, b] = g.getImageData(0, 0, 1, 1).data;
  return (Math.round(alpha * 255) << 24 | b << 16 | gg << 8 | r) >>> 0;
}
function render({ model, el: host }) {
  let d = decode(model.get("_data"));
  let mode = "lasso";
  let showSegments = d.segments_default;
  let px = new Float32Array(0), py = new Float32Array(0);
  let grid = null;
  let selectedPoints = new Uint8Array(d.n);
  let hoverPoint = -1;
  let w = 0, dpr = 1;
  let painted = false;
  const root = el("div", "ragtt-drift-scatter");
  root.tabIndex = 0;
  const head = el("div", "ragtt-ds-head");
  const title = el("span", "ragtt-ds-title");
  const sub = el("span", "ragtt-ds-sub");
  head.append(title, sub);
  const warn = el("div", "ragtt-ds-warn");
  const controls = el("div", "ragtt-ds-controls");
  const colorSel = el("select", "ragtt-ds-color");
  colorSel.setAttribute("aria-label", "colour points by");
  for (const [v, label] of [["version", "colour: version"], ["source", "colour: source"]]) {
    const o = el("option", "", label);
    o.value = v;
    colorSel.append(o);
  }
  const segLabel = el("label", "ragtt-ds-seg");
  const segBox = el("input");
  segBox.type = "checkbox";
  segLabel.append(segBox, document.createTextNode(" chunk segments"));
  const modeBtn = (name, label) => {
    const b = el("button", "ragtt-ds-btn", label);
    b.type = "button";
    b.dataset.mode = name;
    b.addEventListener("click", () => setMode(name));
    return b;
  };
  const lassoBtn = modeBtn("lasso", "Lasso"), boxBtn = modeBtn("box", "Box");
  const clearBtn = el("button", "ragtt-ds-btn", "Clear");
  clearBtn.type = "button";
  clearBtn.addEventListener("click", () => select(new Uint8Array(d.n)));
  const status = el("span", "ragtt-ds-status");
  controls.append(colorSel, segLabel, lassoBtn, boxBtn, clearBtn, status);
  const plot = el("div", "ragtt-ds-plot");
  const canvases = ["segments", "points", "overlay"].map((name) => {
    const c = el("canvas", `ragtt-ds-canvas ragtt-ds-${name}`);
    plot.append(c);
    return c;
  });
  const [segCanvas, pointCanvas, overlay] = canvases;
  const hover = el("div", "ragtt-ds-hover ragtt-chunk");
  hover.hidden = true;
  plot.append(hover);
  const legend = el("div", "ragtt-ds-legend");
  const listTitle = el("div", "ragtt-ds-list-title");
  const list = el("ol", "ragtt-ds-list");
  root.append(head, warn, controls, plot, legend, listTitle, list);
  host.append(root);
  function colors() {
    const cs = getComputedStyle(root);
    const v = (name, fallback) => cs.getPropertyValue(name).trim() || fallback;
    return {
      left: v("--jp-brand-color1", "#1976d2"),
      right: v("--jp-warn-color1", "#f57c00"),
      fg: v("--jp-ui-font-color1", "#333"),
      dim: v("--jp-ui-font-color2", "#777"),
      sel: v("--jp-ui-font-color0", "#000"),
      font: v("--jp-ui-font-family", "system-ui, sans-serif")
    };
  }
  function layout() {
    w = Math.max(200, plot.clientWidth || 640);
    dpr = window.devicePixelRatio || 1;
    for (const c of canvases) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(HEIGHT * dpr);
      c.style.width = `${w}px`;
      c.style.height = `${HEIGHT}px`;
    }
    plot.style.height = `${HEIGHT}px`;
    const sx = (w - 2 * PAD) / (2 * Q), sy = (HEIGHT - 2 * PAD) / (2 * Q);
    px = new Float32Array(d.n);
    py = new Float32Array(d.n);
    for (let i = 0; i < d.n; i++) {
      px[i] = PAD + (d.x[i] + Q) * sx;
      py[i] = HEIGHT - PAD - (d.y[i] + Q) * sy;
    }
    const cols = Math.ceil(w / CELL) + 1, rows = Math.ceil(HEIGHT / CELL) + 1;
    const cellOf = new Int32Array(d.n);
    const start = new Int32Array(cols * rows + 1);
    for (let i = 0; i < d.n; i++) {
      const c = (py[i] / CELL | 0) * cols + (px[i] / CELL | 0);
      cellOf[i] = c;
      start[c + 1]++;
    }
    for (let c = 0; c < cols * rows; c++) start[c + 1] += start[c];
    const fill = start.slice(0, cols * rows);
    const items = new Int32Array(d.n);
    for (let i = 0; i < d.n; i++) items[fill[cellOf[i]]++] = i;
    grid = { cols, rows, start, items };
  }
  const toPx = (x, y) => [
    PAD + (x - d.bounds[0]) / (d.bounds[1] - d.bounds[0]) * (w - 2 * PAD),
    HEIGHT - PAD - (y - d.bounds[2]) / (d.bounds[3] - d.bounds[2]) * (HEIGHT - 2 * PAD)
  ];
  function pointColors(c) {
    if (model.get("color_by") === "source") {
      const table2 = PALETTE.map((p) => hexRGBA(p, 0.85));
      return { table: table2, of: (i) => d.src[i] === OTHER ? table2[9] : table2[d.src[i] % 9] };
    }
    const table = [hexRGBA(c.left, 0.85), hexRGBA(c.right, 0.85)];
    return { table, of: (i) => table[d.side[i]] };
  }
  function drawPoints() {
    const c = colors();
    const W = pointCanvas.width, H = pointCanvas.height;
    const g = pointCanvas.getContext("2d");
    const img = g.createImageData(W, H);
    const buf = new Uint32Array(img.data.buffer);
    const { of } = pointColors(c);
    const css = d.n <= 2e3 ? 6 : d.n <= 2e4 ? 3 : 2;
    const size = Math.max(1, Math.round(css * dpr)), half = size >> 1;
    for (let i = 0; i < d.n; i++) {
      const x0 = Math.round(px[i] * dpr) - half, y0 = Math.round(py[i] * dpr) - half;
      const col = of(i);
      for (let yy = y0; yy < y0 + size && yy < H; yy++) {
        if (yy < 0) continue;
        const row = yy * W;
        for (let xx = x0; xx < x0 + size && xx < W; xx++) if (xx >= 0) buf[row + xx] = col;
      }
    }
    g.putImageData(img, 0, 0);
  }
  function drawSegments() {
    const g = segCanvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, HEIGHT);
    if (!showSegments || !d.n_common) return;
    g.strokeStyle = colors().dim;
    g.globalAlpha = 0.35;
    g.lineWidth = 0.6;
    g.beginPath();
    for (let i = 0; i < d.n_common; i++) {
      g.moveTo(px[i], py[i]);
      g.lineTo(px[d.n_left + i], py[d.n_left + i]);
    }
    g.stroke();
    g.globalAlpha = 1;
  }
  function drawOverlay(path2) {
    const c = colors();
    const g = overlay.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, HEIGHT);
    const S = d.sources.length;
    if (S <= 200) {
      g.strokeStyle = c.fg;
      g.lineWidth = 1.5;
      for (let s = 0; s < S; s++) {
        const [lx, ly, rx, ry] = d.centroids.subarray(4 * s, 4 * s + 4);
        if ([lx, ly, rx, ry].some(Number.isNaN)) continue;
        const [ax, ay] = toPx(lx, ly), [bx, by] = toPx(rx, ry);
        g.beginPath();
        g.moveTo(ax, ay);
        g.lineTo(bx, by);
        g.stroke();
        g.beginPath();
        g.arc(bx, by, 3, 0, 2 * Math.PI);
        g.fillStyle = c.fg;
        g.fill();
      }
    }
    g.fillStyle = c.sel;
    for (let i = 0; i < d.n; i++) if (selectedPoints[i]) g.fillRect(px[i] - 1.5, py[i] - 1.5, 3, 3);
    if (d.query) {
      for (let side = 0; side < 2; side++) {
        const qx = d.query.xy[2 * side], qy = d.query.xy[2 * side + 1];
        if (Number.isNaN(qx)) continue;
        const [x, y] = toPx(qx, qy);
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
    if (hoverPoint >= 0) {
      g.strokeStyle = c.sel;
      g.lineWidth = 2;
      g.beginPath();
      g.arc(px[hoverPoint], py[hoverPoint], 5, 0, 2 * Math.PI);
      g.stroke();
    }
    if (path2 && path2.length > 1) {
      g.strokeStyle = c.sel;
      g.setLineDash([4, 3]);
      g.lineWidth = 1;
      g.beginPath();
      g.moveTo(path2[0][0], path2[0][1]);
      for (const [x, y] of path2) g.lineTo(x, y);
      if (mode === "lasso") g.closePath();
      g.stroke();
      g.setLineDash([]);
    }
  }
  function drawAll() {
    layout();
    drawSegments();
    drawPoints();
    drawOverlay();
    if (!painted) {
      painted = true;
      root.dataset.painted = "1";
      if (window.performance && performance.mark) performance.mark("ragtt-drift-scatter-painted");
    }
  }
  function showHead() {
    const L = d.left, R = d.right;
    title.textContent = `Drift v${L.version} → v${R.version}`;
    const pct = (v) => Number.isNaN(v) ? "" : ` ${Math.round(v * 100)}%`;
    const axes = d.method === "pca" ? ` · PCA axes${pct(d.explained[0])},${pct(d.explained[1])} of variance` : " · UMAP";
    sub.textContent = `${d.n_left} → ${d.n_right} chunks, ${d.n_common} common${axes}` + (L.embedder !== R.embedder ? ` · embedder ${L.embedder} → ${R.embedder}` : L.embedder ? ` · ${L.embedder}` : "");
    warn.textContent = d.comparable ? "" : `The versions' vectors have different sizes (${L.dim} and ${R.dim}): each is placed in its own coordinates, so the gap between them only says that everything changed.`;
    warn.hidden = d.comparable;
    colorSel.value = model.get("color_by");
    segBox.checked = showSegments;
  }
  function showLegend() {
    legend.replaceChildren();
    const c = colors();
    const item = (color, label) => {
      const span = el("span", "ragtt-ds-legend-item");
      const sw = el("span", "ragtt-ds-swatch");
      sw.style.background = color;
      span.append(sw, el("span", "", label));
      legend.append(span);
    };
    if (model.get("color_by") === "source") {
      d.sources.slice(0, 9).forEach((s, i) => item(PALETTE[i], s));
      if (d.sources.length > 9) item(PALETTE[9], `… ${d.sources.length - 9} more sources (colours repeat)`);
    } else {
      item(c.left, `v${d.left.version} (${d.n_left})`);
      item(c.right, `v${d.right.version} (${d.n_right})`);
    }
    if (d.query) item(c.sel, `◆ query: ${d.query.text}`);
  }
  function chunkItem(i) {
    const chunk = chunkOf(d, i);
    const li = el("li", "ragtt-chunk");
    li.dataset.chunkId = d.ids.get(chunk);
    const meta = el("div", "ragtt-chunk-meta");
    const s = d.src[i] === OTHER ? "(other)" : d.sources[d.src[i]];
    meta.append(
      el("span", "ragtt-ds-ver", `v${d.side[i] ? d.right.version : d.left.version}`),
      el("span", "ragtt-source", s)
    );
    li.append(meta, el("div", "ragtt-chunk-text", d.texts.get(chunk)));
    return li;
  }
  function showSelection() {
    const ids = model.get("selected");
    status.textContent = `${ids.length} selected`;
    list.replaceChildren();
    listTitle.textContent = ids.length ? `Selected chunks${ids.length > LIST_MAX ? ` (first ${LIST_MAX})` : ""}` : "";
    let shown = 0;
    const seen = /* @__PURE__ */ new Set();
    for (let i = 0; i < d.n && shown < LIST_MAX; i++) {
      if (!selectedPoints[i]) continue;
      const chunk = chunkOf(d, i);
      if (seen.has(chunk)) continue;
      seen.add(chunk);
      list.append(chunkItem(i));
      shown++;
    }
  }
  function fromModel() {
    const want = new Set(model.get("selected"));
    selectedPoints = new Uint8Array(d.n);
    if (want.size) {
      for (let i = 0; i < d.n; i++) if (want.has(d.ids.get(chunkOf(d, i)))) selectedPoints[i] = 1;
    }
    drawOverlay();
    showSelection();
  }
  function select(points) {
    const chunks = /* @__PURE__ */ new Set();
    for (let i = 0; i < d.n; i++) if (points[i]) chunks.add(chunkOf(d, i));
    const all = new Uint8Array(d.n);
    for (let i = 0; i < d.n; i++) if (chunks.has(chunkOf(d, i))) all[i] = 1;
    selectedPoints = all;
    const ids = [...chunks].sort((a, b) => a - b).map((c) => d.ids.get(c));
    model.set("selected", ids);
    model.save_changes();
    drawOverlay();
    showSelection();
  }
  function inside(path2) {
    const hit = new Uint8Array(d.n);
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const [x, y] of path2) {
      x0 = Math.min(x0, x);
      y0 = Math.min(y0, y);
      x1 = Math.max(x1, x);
      y1 = Math.max(y1, y);
    }
    const box = mode === "box";
    const n = path2.length;
    for (let i = 0; i < d.n; i++) {
      const x = px[i], y = py[i];
      if (x < x0 || x > x1 || y < y0 || y > y1) continue;
      if (box) {
        hit[i] = 1;
        continue;
      }
      let inPoly = false;
      for (let a = 0, b = n - 1; a < n; b = a++) {
        const [xa, ya] = path2[a], [xb, yb] = path2[b];
        if (ya > y !== yb > y && x < (xb - xa) * (y - ya) / (yb - ya) + xa) inPoly = !inPoly;
      }
      if (inPoly) hit[i] = 1;
    }
    return hit;
  }
  function setMode(name) {
    mode = name;
    for (const b of [lassoBtn, boxBtn]) b.classList.toggle("ragtt-active", b.dataset.mode === name);
  }
  let path = null, additive = false;
  const local = (e) => {
    const r = overlay.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  };
  function nearest(x, y) {
    if (!grid) return -1;
    const { cols, rows, start, items } = grid;
    const cx = x / CELL | 0, cy = y / CELL | 0;
    let best = -1, bestD = HOVER_PX * HOVER_PX;
    for (let gy = Math.max(0, cy - 1); gy <= Math.min(rows - 1, cy + 1); gy++) {
      for (let gx = Math.max(0, cx - 1); gx <= Math.min(cols - 1, cx + 1); gx++) {
        const c = gy * cols + gx;
        for (let k = start[c]; k < start[c + 1]; k++) {
          const i = items[k], dx = px[i] - x, dy = py[i] - y, dd = dx * dx + dy * dy;
          if (dd <= bestD) {
            bestD = dd;
            best = i;
          }
        }
      }
    }
    return best;
  }
  function showHover(i, x, y) {
    hoverPoint = i;
    if (i < 0) {
      hover.hidden = true;
      return;
    }
    const item = chunkItem(i);
    hover.replaceChildren(...item.childNodes);
    hover.dataset.chunkId = item.dataset.chunkId;
    hover.hidden = false;
    hover.style.left = `${Math.min(x + 12, w - 280)}px`;
    hover.style.top = `${Math.min(y + 12, HEIGHT - 90)}px`;
  }
  let hoverFrame = 0;
  overlay.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    overlay.setPointerCapture(e.pointerId);
    path = [local(e)];
    additive = e.shiftKey;
    showHover(-1);
    e.preventDefault();
  });
  overlay.addEventListener("pointermove", (e) => {
    const [x, y] = local(e);
    if (path) {
      if (mode === "box") path = [path[0], [x, path[0][1]], [x, y], [path[0][0], y]];
      else path.push([x, y]);
      drawOverlay(path);
      return;
    }
    if (hoverFrame) return;
    hoverFrame = requestAnimationFrame(() => {
      hoverFrame = 0;
      showHover(nearest(x, y), x, y);
      drawOverlay();
    });
  });
  const finish = (e) => {
    if (!path) return;
    if (overlay.hasPointerCapture(e.pointerId)) overlay.releasePointerCapture(e.pointerId);
    const done = path;
    path = null;
    if (done.length < 3) {
      const i = nearest(done[0][0], done[0][1]);
      const pts = additive ? selectedPoints.slice() : new Uint8Array(d.n);
      if (i >= 0) pts[i] = 1;
      select(pts);
      return;
    }
    const hit = inside(done);
    if (additive) for (let i = 0; i < d.n; i++) hit[i] |= selectedPoints[i];
    select(hit);
  };
  overlay.addEventListener("pointerup", finish);
  overlay.addEventListener("pointercancel", finish);
  overlay.addEventListener("pointerleave", () => {
    if (!path) {
      showHover(-1);
      drawOverlay();
    }
  });
  root.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      select(new Uint8Array(d.n));
    }
  });
  colorSel.addEventListener("change", () => {
    model.set("color_by", colorSel.value);
    model.save_changes();
  });
  segBox.addEventListener("change", () => {
    showSegments = segBox.checked;
    drawSegments();
  });
  const onColor = () => {
    colorSel.value = model.get("color_by");
    drawPoints();
    showLegend();
  };
  const onData = () => {
    d = decode(model.get("_data"));
    showSegments = d.segments_default;
    selectedPoints = new Uint8Array(d.n);
    showHead();
    drawAll();
    showLegend();
    fromModel();
  };
  model.on("change:selected", fromModel);
  model.on("change:color_by", onColor);
  model.on("change:_data", onData);
  let lastW = -1;
  const resize = new ResizeObserver(() => {
    const now = plot.clientWidth;
    if (now && now !== lastW) {
      lastW = now;
      drawAll();
    }
  });
  setMode("lasso");
  showHead();
  drawAll();
  lastW = plot.clientWidth;
  showLegend();
  fromModel();
  resize.observe(plot);
  return () => {
    resize.disconnect();
    model.off("change:selected", fromModel);
    model.off("change:color_by", onColor);
    model.off("change:_data", onData);
  };
}
var drift_scatter_default = { render };
export {
  drift_scatter_default as default
};
