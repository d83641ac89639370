// ragtt Timeline: the index's history on a time axis, a draggable cursor, and what the
// focal query retrieves at the cursor's version; with an assertion namespace, the claims'
// validity windows as lanes and the claims valid at the cursor's time.
// Self-contained ES module (anywidget).
// Untrusted text (sources, labels, queries, chunk text, claims) reaches the DOM only as text.
//
// Two axes, switched by the header's button (the `axis` trait): "time" (wall clock) and
// "versions" (one equal slot per index version). The version axis's layout comes with the
// data (`_data.layout`, computed in Python; the rule is in ragtt_nb/timeline.py): event
// and claim positions in slot units, and the slots' boundaries as ticks, which map the
// cursor between times and positions. No kernel needed, so both work in a report.
//
// Test hook: the root's `data-axis` is the axis drawn ("time" or "versions"), and its
// `data-label-boxes` the snapshot labels drawn, as JSON [{x0, x1, text, label, version}]
// (CSS px from the canvas's left edge; `text` as drawn, maybe shortened with "…").

const KIND = { INGEST: 0, REMOVE: 1, SNAPSHOT: 2, QUERY: 3, REPLAY: 4 };
const ROW = 16;          // lane height, CSS px
const LABEL_W = 150;     // lane label column, CSS px
const PAD = 8;           // horizontal padding inside the plot, CSS px
const MAX_DOC_LANES = 40;
const MAX_CLAIM_LANES = 40;
const MAX_CLAIMS_LISTED = 200;
const FLAG = { SUPERSEDED: 1, OPEN: 2 };
const LANE = { ENTITY: 0, TYPE: 1 };
const LABEL_GAP = 6;     // px between two labels on one line
const AXES = ["time", "versions"];

/** Rebuild a typed array from a `{dtype, shape, view}` buffer; unknown dtypes fail loudly. */
function typed(buf) {
  const types = { int32: Int32Array, float32: Float32Array };
  const T = types[buf && buf.dtype];
  if (!T) throw new Error(`ragtt: unsupported buffer dtype ${buf && buf.dtype}`);
  const v = buf.view;
  const bytes = v instanceof ArrayBuffer ? v : v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength);
  const arr = new T(bytes);
  if (arr.length !== buf.shape[0]) throw new Error(`ragtt: buffer length ${arr.length} != shape ${buf.shape[0]}`);
  return arr;
}

/** An element with a class and (untrusted-safe) text. */
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function decode(data) {
  const versions = typed(data.versions.version);
  const ev = data.events;
  const focal = data.focal && {
    ...data.focal,
    offsets: typed(data.focal.result_offsets),
    resultChunks: typed(data.focal.result_chunks),
    scores: typed(data.focal.result_scores),
    byVersion: typed(data.focal.version_result),
  };
  const cl = data.claims;
  const claims = cl && {
    namespace: cl.namespace, lanes: cl.lanes, laneKind: typed(cl.lane_kind),
    ids: cl.ids, content: cl.content, type: cl.type, confidence: typed(cl.confidence),
    from: typed(cl.from), until: typed(cl.until), lane: typed(cl.lane), flags: typed(cl.flags),
    fromX: typed(cl.from_x), untilX: typed(cl.until_x),
  };
  const lay = data.layout;
  const layout = {
    auto: lay.auto, first: lay.first, slots: lay.slots, bounds: typed(lay.bounds), eventX: typed(lay.event_x),
  };
  return {
    t0: data.t0_ms, unit: data.t_unit_ms, claims, layout,
    versions, vt: typed(data.versions.t), ops: data.versions.operation,
    et: typed(ev.t), kind: typed(ev.kind), lane: typed(ev.lane), ev: typed(ev.version),
    docs: data.docs, presence: typed(data.presence), snapshots: data.snapshots, focal,
  };
}

function fmtTime(d, ticks) {
  const ms = d.t0 + ticks * d.unit;
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return `${(ms / 1000).toPrecision(12)} s`;  // beyond what Date holds
  return date.toISOString().replace("T", " ").replace(".000Z", "Z").replace("Z", " UTC");
}

/** Ticks to a position on the version axis (the rule of ragtt_nb/timeline.py's
 *  _slot_positions): the last slot starting at or before `ticks`, linearly inside it. */
function posOfTicks(layout, ticks) {
  const b = layout.bounds, slots = layout.slots;
  let j = 0;
  for (let k = 0; k < slots; k++) if (b[k] <= ticks) j = k;
  const w = b[j + 1] - b[j];
  return j + (w > 0 ? Math.max(0, Math.min(1, (ticks - b[j]) / w)) : 0);
}

/** The inverse: a position on the version axis to ticks. */
function ticksOfPos(layout, pos) {
  const b = layout.bounds;
  const j = Math.max(0, Math.min(layout.slots - 1, Math.floor(pos)));
  const f = Math.max(0, Math.min(1, pos - j));
  return Math.round(b[j] + f * (b[j + 1] - b[j]));
}

/** Place labels on one line without overlaps. `marks` are {x, text, ...}; each label goes
 *  right of its mark (up to the next mark), else left of it, shortened with "…" when only
 *  part fits, skipped when not even that does. Returns the drawn boxes {x0, x1, text, mark}. */
function placeLabels(g, marks, left, right) {
  const sorted = [...marks].sort((a, b) => a.x - b.x);
  const minW = g.measureText("ab…").width;
  const boxes = [];
  let prevRight = -Infinity;
  sorted.forEach((m, k) => {
    const full = g.measureText(m.text).width;
    const floor = Math.max(left, prevRight + LABEL_GAP);
    const limit = Math.min(right, k + 1 < sorted.length ? sorted[k + 1].x - 3 : Infinity);
    const rightRoom = m.x + 4 >= floor ? limit - (m.x + 4) : -1;
    const leftRoom = m.x - 4 - floor;
    let side, room;
    if (full <= rightRoom) { side = "right"; room = full; }
    else if (full <= leftRoom) { side = "left"; room = full; }
    else if (Math.max(rightRoom, leftRoom) >= minW) {
      side = rightRoom >= leftRoom ? "right" : "left";
      room = Math.max(rightRoom, leftRoom);
    } else return;
    let text = m.text;
    if (full > room) {
      let n = text.length;
      while (n > 1 && g.measureText(`${text.slice(0, n)}…`).width > room) n--;
      text = `${text.slice(0, n)}…`;
    }
    const w = g.measureText(text).width;
    const x0 = side === "right" ? m.x + 4 : m.x - 4 - w;
    boxes.push({ x0, x1: x0 + w, text, mark: m });
    prevRight = x0 + w;
  });
  return boxes;
}

function render({ model, el: host }) {
  let d = decode(model.get("_data"));
  let index = 0;          // index into d.versions of the cursor
  let cursorT = 0;        // the cursor's time in ticks: a version's, or (with claims) wherever it was dragged
  let cursorP = 0;        // the same place on the version axis (slot units)
  let snapBoxes = [];     // the snapshot labels drawn: {x0, x1, text, mark}
  let claimsKey = null;   // the claims listed now (to redraw the list only when it changes)
  let placed = false;     // whether the cursor has been placed since the data arrived
  let playing = null;     // interval id while playing
  let docLanes = [];      // doc index per drawn lane (the most active documents first)

  const root = el("div", "ragtt-timeline");
  root.tabIndex = 0;
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", "ragtt timeline: arrow keys move the cursor between index versions");

  const head = el("div", "ragtt-tl-head");
  const title = el("span", "ragtt-tl-title", "Timeline");
  const focalText = el("span", "ragtt-tl-query");
  const axisBtn = el("button", "ragtt-tl-btn ragtt-tl-axis");
  axisBtn.type = "button";
  axisBtn.addEventListener("click", () => {
    model.set("axis", mode() === "time" ? "versions" : "time");
    model.save_changes();
  });
  head.append(title, focalText, axisBtn);

  const controls = el("div", "ragtt-tl-controls");
  const button = (label, aria, fn) => {
    const b = el("button", "ragtt-tl-btn", label);
    b.type = "button";
    b.setAttribute("aria-label", aria);
    b.addEventListener("click", fn);
    controls.append(b);
    return b;
  };
  button("|◀", "first version", () => go(0));
  button("◀", "previous version", () => go(index - 1));
  const playBtn = button("Play", "play", () => (playing ? stop() : play()));
  button("▶", "next version", () => go(index + 1));
  button("▶|", "latest version", () => go(d.versions.length - 1));
  const where = el("span", "ragtt-tl-where");
  controls.append(where);

  const scroller = el("div", "ragtt-tl-plot");
  const canvas = el("canvas", "ragtt-tl-canvas");
  const cursor = el("div", "ragtt-timeline-cursor");
  cursor.setAttribute("role", "slider");
  cursor.setAttribute("aria-label", "index version");
  scroller.append(canvas, cursor);

  const info = el("div", "ragtt-tl-info");
  const panes = el("div", "ragtt-tl-panes");
  const docsPane = el("div", "ragtt-tl-docs");
  const chunksPane = el("div", "ragtt-tl-chunks");
  panes.append(docsPane, chunksPane);
  const claimsPane = el("div", "ragtt-tl-claims");
  const status = el("div", "ragtt-tl-status");
  root.append(head, controls, scroller, info, panes, claimsPane, status);
  host.append(root);

  // -- geometry -------------------------------------------------------------------------
  /** The axis drawn: the `axis` trait, or for "auto" what Python resolved it to. */
  const mode = () => {
    const a = model.get("axis");
    return AXES.includes(a) ? a : (AXES.includes(d.layout.auto) ? d.layout.auto : "time");
  };
  const span = () => {
    let lo = Infinity, hi = -Infinity;
    const arrays = [d.vt, d.et];
    const c = d.claims;
    if (c) arrays.push(c.from, c.until.filter((_, i) => !(c.flags[i] & FLAG.OPEN)));
    for (const arr of arrays) for (let i = 0; i < arr.length; i++) {
      if (arr[i] < lo) lo = arr[i];
      if (arr[i] > hi) hi = arr[i];
    }
    if (!(hi > lo)) return [lo - 1, lo + 1];
    // open claims run to the axis end: leave them some room past the last thing on the axis
    if (c && c.flags.some((f) => f & FLAG.OPEN)) hi += Math.max(1, Math.round((hi - lo) * 0.04));
    return [lo, hi];
  };
  let [tLo, tHi] = span();
  const plotW = () => Math.max(40, scroller.clientWidth - LABEL_W - 2 * PAD);
  const xOf = (ticks) => LABEL_W + PAD + ((ticks - tLo) / (tHi - tLo)) * plotW();
  const ticksAt = (x) => Math.max(tLo, Math.min(tHi, tLo + ((x - LABEL_W - PAD) / plotW()) * (tHi - tLo)));
  // the version axis: positions in slot units, 0 .. layout.slots
  const xOfP = (pos) => LABEL_W + PAD + (pos / d.layout.slots) * plotW();
  const posAt = (x) => Math.max(0, Math.min(d.layout.slots, ((x - LABEL_W - PAD) / plotW()) * d.layout.slots));
  // where things are drawn, on the axis shown now
  const versionX = (i) => (mode() === "time" ? xOf(d.vt[i]) : xOfP(d.layout.first + i));
  const eventX = (i) => (mode() === "time" ? xOf(d.et[i]) : xOfP(d.layout.eventX[i]));
  const cursorX = () => (mode() === "time" ? xOf(cursorT) : xOfP(cursorP));
  /** The version at a time: the latest one committed at or before it (or the first). */
  function indexAtTicks(ticks) {
    let best = 0;
    for (let i = 0; i < d.vt.length; i++) if (d.vt[i] <= ticks) best = i;
    return best;
  }

  let moreDocs = 0, claimLanes = [], moreClaims = 0;
  function chooseLanes() {
    const counts = new Map();
    for (let i = 0; i < d.lane.length; i++) if (d.lane[i] >= 0) counts.set(d.lane[i], (counts.get(d.lane[i]) || 0) + 1);
    const all = [...counts.keys()].sort((a, b) => a - b);
    docLanes = all.slice(0, MAX_DOC_LANES);
    moreDocs = all.length - docLanes.length;
    const nClaimLanes = d.claims ? d.claims.lanes.length : 0;
    claimLanes = [...Array(Math.min(nClaimLanes, MAX_CLAIM_LANES)).keys()];
    moreClaims = nClaimLanes - claimLanes.length;
  }

  /** Every row of the plot, top to bottom: {name, style, kind, key}. */
  function rows() {
    const out = [{ name: "queries", style: "dim" }, { name: "snapshots", style: "dim" }];
    for (const doc of docLanes) out.push({ name: d.docs[doc], style: "fg", kind: "doc", key: doc });
    if (moreDocs > 0) out.push({ name: `+${moreDocs} more documents`, style: "dim" });
    if (d.claims) {
      out.push({ name: `claims · ${d.claims.namespace}`, style: "head" });
      for (const l of claimLanes) {
        const isType = d.claims.laneKind[l] === LANE.TYPE;
        out.push({ name: isType ? `type: ${d.claims.lanes[l]}` : d.claims.lanes[l], style: isType ? "dim" : "fg",
          kind: "claim", key: l });
      }
      if (moreClaims > 0) out.push({ name: `+${moreClaims} more`, style: "dim" });
    }
    return out;
  }

  function colors() {
    const cs = getComputedStyle(root);
    const v = (name, fallback) => cs.getPropertyValue(name).trim() || fallback;
    return {
      fg: v("--jp-ui-font-color1", "#333"), dim: v("--jp-ui-font-color2", "#777"),
      grid: v("--jp-border-color2", "#ddd"), bg: v("--jp-layout-color1", "#fff"),
      ingest: v("--jp-brand-color1", "#1976d2"), remove: v("--jp-error-color1", "#d32f2f"),
      snapshot: v("--jp-warn-color1", "#f57c00"), query: v("--jp-success-color1", "#388e3c"),
      replay: v("--jp-ui-font-color2", "#777"), font: v("--jp-ui-font-family", "system-ui, sans-serif"),
      claim: v("--jp-info-color1", "#0097a7"),
    };
  }

  // Lanes: queries, snapshots, one per document, then (with claims) one per entity or type.
  const laneY = (lane) => lane * ROW;
  function draw() {
    const c = colors();
    const rowList = rows();
    const lanes = rowList.length;
    const w = scroller.clientWidth || 600, h = lanes * ROW + 18;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    canvas.style.width = `${w}px`;
    canvas.style.height = `${h}px`;
    const g = canvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    g.font = `11px ${c.font}`;
    g.textBaseline = "middle";
    for (let l = 0; l < lanes; l++) {
      const row = rowList[l];
      g.fillStyle = c.grid;
      g.fillRect(LABEL_W, laneY(l) + ROW - 1, w - LABEL_W, 1);
      g.fillStyle = row.style === "fg" ? c.fg : row.style === "head" ? c.claim : c.dim;
      g.font = row.style === "head" ? `600 11px ${c.font}` : `11px ${c.font}`;
      let name = row.name;
      while (name.length > 3 && g.measureText(name).width > LABEL_W - 8) name = name.slice(0, -2);
      if (name !== row.name) name += "…";
      g.fillText(name, 4, laneY(l) + ROW / 2);
    }
    g.font = `11px ${c.font}`;
    const versionsAxis = mode() === "versions";
    if (versionsAxis) {  // every other slot shaded, so equal slots read as slots
      g.save();
      g.globalAlpha = 0.35;
      g.fillStyle = c.grid;
      for (let j = d.layout.first; j < d.layout.slots; j += 2) {
        g.fillRect(xOfP(j), 0, xOfP(j + 1) - xOfP(j), lanes * ROW);
      }
      g.restore();
    }
    // version ticks on the axis
    g.fillStyle = c.grid;
    for (let i = 0; i < d.vt.length; i++) g.fillRect(Math.round(versionX(i)), 0, 1, lanes * ROW);
    const laneOfDoc = new Map(), laneOfClaim = new Map();
    rowList.forEach((row, i) => {
      if (row.kind === "doc") laneOfDoc.set(row.key, i);
      else if (row.kind === "claim") laneOfClaim.set(row.key, i);
    });
    drawClaims(g, c, laneOfClaim, w);
    for (let i = 0; i < d.kind.length; i++) {
      const k = d.kind[i];
      let lane, color;
      if (k === KIND.QUERY || k === KIND.REPLAY) { lane = 0; color = k === KIND.QUERY ? c.query : c.replay; }
      else if (k === KIND.SNAPSHOT) { lane = 1; color = c.snapshot; }
      else { lane = laneOfDoc.get(d.lane[i]); color = k === KIND.REMOVE ? c.remove : c.ingest; if (lane === undefined) continue; }
      g.fillStyle = color;
      g.fillRect(Math.round(eventX(i)) - 1, laneY(lane) + 3, 3, ROW - 7);
    }
    // snapshot labels beside their marks, never over each other (canvas text: never parsed as HTML)
    const marks = d.snapshots.filter((s) => s.event >= 0 && s.event < d.kind.length)
      .map((s) => ({ x: Math.round(eventX(s.event)), text: s.label, snap: s }));
    snapBoxes = placeLabels(g, marks, LABEL_W, w - PAD);
    for (const b of snapBoxes) {  // a backdrop, so a label set left of its mark stays legible over others' ticks
      g.fillStyle = c.bg;
      g.fillRect(b.x0 - 1, laneY(1) + 2, b.x1 - b.x0 + 2, ROW - 5);
      g.fillStyle = c.fg;
      g.fillText(b.text, b.x0, laneY(1) + ROW / 2);
    }
    root.dataset.labelBoxes = JSON.stringify(snapBoxes.map((b) => ({
      x0: Math.round(b.x0 * 10) / 10, x1: Math.round(b.x1 * 10) / 10, text: b.text,
      label: b.mark.snap.label, version: b.mark.snap.version,
    })));
    // under the lanes: the time at both ends, or each slot's version
    g.fillStyle = c.dim;
    const axisMarks = versionsAxis
      ? [...(d.layout.first ? [{ x: xOfP(0) - 4, text: "earlier" }] : []),
        ...Array.from(d.versions, (v, i) => ({ x: versionX(i) - 4, text: `v${v}` }))]
      : [{ x: LABEL_W + PAD - 4, text: fmtTime(d, tLo) }];
    const axisBoxes = placeLabels(g, axisMarks, LABEL_W, w - PAD);
    if (!versionsAxis) {  // the end time, right-aligned, unless it would run into the start
      const end = fmtTime(d, tHi), ew = g.measureText(end).width;
      if (!axisBoxes.length || w - PAD - ew >= axisBoxes[0].x1 + LABEL_GAP) g.fillText(end, w - PAD - ew, lanes * ROW + 9);
    }
    for (const b of axisBoxes) g.fillText(b.text, b.x0, lanes * ROW + 9);
    cursor.style.height = `${lanes * ROW}px`;
    placeCursor();
    showAxis();
  }

  function showAxis() {
    const m = mode();
    root.dataset.axis = m;
    axisBtn.textContent = m === "time" ? "Axis: time" : "Axis: versions";
    axisBtn.setAttribute("aria-label", m === "time" ? "axis: time; switch to one slot per version"
      : "axis: one slot per version; switch to time");
    axisBtn.title = m === "time" ? "Drawn at wall-clock time; click for one equal slot per index version"
      : "One equal slot per index version; click for wall-clock time";
  }

  /** Each claim a bar from valid_from to valid_until (open ones to the axis end); superseded
   *  claims are hollow and dashed, the others filled. */
  function drawClaims(g, c, laneOfClaim, w) {
    const k = d.claims;
    if (!k) return;
    const right = w - PAD;
    g.save();
    g.lineWidth = 1;
    for (let i = 0; i < k.ids.length; i++) {
      const lane = laneOfClaim.get(k.lane[i]);
      if (lane === undefined) continue;
      const versionsAxis = mode() === "versions";
      const x0 = Math.max(LABEL_W, versionsAxis ? xOfP(k.fromX[i]) : xOf(k.from[i]));
      const x1 = k.flags[i] & FLAG.OPEN ? right : Math.min(right, versionsAxis ? xOfP(k.untilX[i]) : xOf(k.until[i]));
      const y = laneY(lane) + 3, h = ROW - 7, bw = Math.max(2, x1 - x0);
      if (k.flags[i] & FLAG.SUPERSEDED) {
        g.globalAlpha = 0.18;
        g.fillStyle = c.claim;
        g.fillRect(x0, y, bw, h);
        g.globalAlpha = 1;
        g.setLineDash([3, 2]);
        g.strokeStyle = c.claim;
        g.strokeRect(x0 + 0.5, y + 0.5, bw - 1, h - 1);
        g.setLineDash([]);
      } else {
        g.globalAlpha = 0.85;
        g.fillStyle = c.claim;
        g.fillRect(x0, y, bw, h);
        g.globalAlpha = 1;
      }
      // where the claim starts: a dark tick, so back-to-back claims stay apart
      g.fillStyle = c.fg;
      g.fillRect(Math.round(x0), y - 1, 1, h + 2);
    }
    g.restore();
  }

  function placeCursor() {
    cursor.style.left = `${Math.round(cursorX()) - 1}px`;
    cursor.setAttribute("aria-valuemin", String(d.versions[0]));
    cursor.setAttribute("aria-valuemax", String(d.versions[d.versions.length - 1]));
    cursor.setAttribute("aria-valuenow", String(d.versions[index]));
  }

  // -- panes ----------------------------------------------------------------------------
  function resultAt(i) {
    const f = d.focal;
    const r = f.byVersion[i];
    const out = [];
    for (let j = f.offsets[r]; j < f.offsets[r + 1]; j++) out.push({ chunk: f.resultChunks[j], score: f.scores[j] });
    return out;
  }

  function showPanes() {
    const v = d.versions[index];
    where.textContent = `v${v} (${index + 1} of ${d.versions.length})`;
    const labels = d.snapshots.filter((s) => s.version === v).map((s) => s.label);
    const early = cursorT < d.vt[0] ? "Before the first index version · " : "";
    info.textContent = `${early}Index version ${v} · ${fmtTime(d, d.vt[index])} · ${d.ops[index] || ""}`
      + (labels.length ? ` · snapshot ${labels.join(", ")}` : "")
      + (cursorT !== d.vt[index] ? ` · cursor at ${fmtTime(d, cursorT)}` : "");

    const present = [];
    for (let i = 0; i < d.presence.length; i += 3) {
      if (d.presence[i + 1] <= v && v < d.presence[i + 2]) present.push(d.docs[d.presence[i]]);
    }
    present.sort();
    docsPane.replaceChildren(el("div", "ragtt-tl-pane-title", `Documents present (${present.length})`));
    const ul = el("ul", "ragtt-tl-doclist");
    for (const name of present) ul.append(el("li", "ragtt-tl-doc", name));
    docsPane.append(ul);

    chunksPane.replaceChildren();
    if (!d.focal) {
      chunksPane.append(el("div", "ragtt-tl-empty", "No focal query: Timeline(proj, query_id=...) shows its chunks here."));
      return;
    }
    const now = resultAt(index);
    const before = index > 0 ? new Set(resultAt(index - 1).map((r) => r.chunk)) : new Set();
    const nowIds = new Set(now.map((r) => r.chunk));
    const left = index > 0 ? [...before].filter((c) => !nowIds.has(c)).length : 0;
    chunksPane.append(el("div", "ragtt-tl-pane-title",
      `Chunks retrieved at v${v} (${now.length})` + (index > 0 ? ` · ${left} left since v${d.versions[index - 1]}` : "")));
    const ol = el("ol", "ragtt-tl-chunklist");
    const selected = new Set(model.get("selected"));
    now.forEach((r, rank) => {
      const c = d.focal.chunks[r.chunk];
      const li = el("li", "ragtt-chunk");
      li.dataset.chunkId = c.chunk_id;
      li.tabIndex = -1;
      if (index > 0 && !before.has(r.chunk)) li.classList.add("ragtt-new");
      if (selected.has(c.chunk_id)) li.classList.add("ragtt-selected");
      const meta = el("div", "ragtt-chunk-meta");
      meta.append(el("span", "ragtt-rank", `#${rank + 1}`), el("span", "ragtt-score", r.score.toFixed(4)),
        el("span", "ragtt-source", c.source));
      if (li.classList.contains("ragtt-new")) meta.append(el("span", "ragtt-badge", "new"));
      li.append(meta, el("div", "ragtt-chunk-text", c.text));
      li.addEventListener("click", () => toggle(c.chunk_id));
      ol.append(li);
    });
    if (!now.length) ol.append(el("li", "ragtt-tl-empty", "nothing retrieved at this version"));
    chunksPane.append(ol);
  }

  /** Indexes of the claims valid at `ticks` (valid_from <= t < valid_until), in lane order. */
  function claimsAt(ticks) {
    const k = d.claims, out = [];
    for (let i = 0; i < k.ids.length; i++) {
      if (k.from[i] <= ticks && ((k.flags[i] & FLAG.OPEN) || ticks < k.until[i])) out.push(i);
    }
    return out;
  }

  function showClaims() {
    const k = d.claims;
    claimsPane.hidden = !k;
    if (!k) return;
    const valid = claimsAt(cursorT);
    const key = `${valid.join(",")}@${fmtTime(d, cursorT)}`;
    if (key === claimsKey) return;
    claimsKey = key;
    claimsPane.replaceChildren(el("div", "ragtt-tl-pane-title",
      `Claims valid at ${fmtTime(d, cursorT)} in ${k.namespace} (${valid.length})`));
    const ol = el("ol", "ragtt-tl-claimlist");
    for (const i of valid.slice(0, MAX_CLAIMS_LISTED)) {
      const li = el("li", "ragtt-claim");
      li.dataset.assertionId = k.ids[i];
      const lane = k.lanes[k.lane[i]];
      const meta = el("div", "ragtt-claim-meta");
      meta.append(
        el("span", "ragtt-claim-entity", k.laneKind[k.lane[i]] === LANE.TYPE ? "(no entity)" : lane),
        el("span", "ragtt-claim-type", k.type[i]),
        el("span", "ragtt-claim-confidence", k.confidence[i].toFixed(2)),
        el("span", "ragtt-claim-window", `${fmtTime(d, k.from[i])} → `
          + (k.flags[i] & FLAG.OPEN ? "open" : fmtTime(d, k.until[i]))));
      if (k.flags[i] & FLAG.SUPERSEDED) {
        li.classList.add("ragtt-claim-superseded");
        meta.append(el("span", "ragtt-badge", "superseded later"));
      }
      li.append(meta, el("div", "ragtt-claim-text", k.content[i]));
      ol.append(li);
    }
    if (valid.length > MAX_CLAIMS_LISTED) ol.append(el("li", "ragtt-tl-empty", `+${valid.length - MAX_CLAIMS_LISTED} more`));
    if (!valid.length) ol.append(el("li", "ragtt-tl-empty", "no claim is valid at this time"));
    claimsPane.append(ol);
  }

  function showStatus() {
    const n = model.get("selected").length;
    status.textContent = `${n} selected`;
  }

  function toggle(chunkId) {
    const sel = new Set(model.get("selected"));
    sel.has(chunkId) ? sel.delete(chunkId) : sel.add(chunkId);
    model.set("selected", [...sel]);
    model.save_changes();
  }

  // -- cursor movement --------------------------------------------------------------------
  /** Move the cursor to version `i` (at its commit time, or at `ticks` when given, at `pos`
   *  on the version axis when given too). */
  function go(i, { sync = true, ticks = null, pos = null } = {}) {
    const next = Math.max(0, Math.min(d.versions.length - 1, i));
    const changed = next !== index;
    index = next;
    placed = true;
    cursorT = ticks === null ? d.vt[index] : ticks;
    cursorP = ticks === null ? d.layout.first + index : (pos === null ? posOfTicks(d.layout, ticks) : pos);
    placeCursor();
    showPanes();
    showClaims();
    if (sync && changed && model.get("version") !== d.versions[index]) {
      model.set("version", d.versions[index]);
      model.save_changes();
    }
  }

  /** Dragging: with claims the cursor follows the pointer's time; without, it snaps to versions.
   *  On the version axis the slot under the pointer is the version. */
  function goTo(x) {
    if (mode() === "versions") {
      const pos = posAt(x);
      const slot = Math.min(d.layout.slots - 1, Math.floor(pos));
      go(slot - d.layout.first, d.claims ? { ticks: ticksOfPos(d.layout, pos), pos } : {});
      return;
    }
    const ticks = ticksAt(x);
    const i = indexAtTicks(ticks);
    go(i, { ticks: d.claims ? ticks : null });
  }

  /** The tooltip: a snapshot's full label over its mark or label; on the version axis, the slot's version. */
  function hover(x, y) {
    const inSnapLane = y >= laneY(1) && y < laneY(2);
    const snap = inSnapLane && (snapBoxes.find((b) => x >= b.x0 - 2 && x <= b.x1 + 2)
      || snapBoxes.find((b) => Math.abs(x - b.mark.x) <= 3));
    let tip = "";
    if (snap) tip = `snapshot ${snap.mark.snap.label} (v${snap.mark.snap.version})`;
    else if (inSnapLane) {
      const near = d.snapshots.find((s) => s.event >= 0 && s.event < d.kind.length && Math.abs(x - eventX(s.event)) <= 3);
      if (near) tip = `snapshot ${near.label} (v${near.version})`;
    }
    if (!tip && mode() === "versions" && x >= LABEL_W) {
      const i = Math.min(d.layout.slots - 1, Math.floor(posAt(x))) - d.layout.first;
      tip = i < 0 ? "before the first index version"
        : `v${d.versions[i]} · ${fmtTime(d, d.vt[i])} · ${d.ops[i] || ""}`;
    }
    if (scroller.title !== tip) scroller.title = tip;
  }

  function fromModel() {
    const v = model.get("version");
    if (placed && d.versions[index] === v && d.claims) {  // our own change echoed back: keep the dragged place
      placeCursor();
      showPanes();
      showClaims();
      return;
    }
    let i = d.versions.indexOf(v);
    if (i < 0) i = d.versions.length - 1;
    go(i, { sync: false });
  }

  function play() {
    if (index >= d.versions.length - 1) go(0);
    playBtn.textContent = "Pause";
    playBtn.setAttribute("aria-label", "pause");
    playing = setInterval(() => (index >= d.versions.length - 1 ? stop() : go(index + 1)), 700);
  }
  function stop() {
    clearInterval(playing);
    playing = null;
    playBtn.textContent = "Play";
    playBtn.setAttribute("aria-label", "play");
  }

  let dragging = false;
  const onDown = (e) => {
    if (e.button !== 0) return;
    dragging = true;
    scroller.setPointerCapture(e.pointerId);
    root.focus({ preventScroll: true });
    goTo(e.clientX - canvas.getBoundingClientRect().left);
    e.preventDefault();
  };
  const onMove = (e) => {
    const r = canvas.getBoundingClientRect();
    if (dragging) goTo(e.clientX - r.left);
    else hover(e.clientX - r.left, e.clientY - r.top);
  };
  const onUp = (e) => {
    dragging = false;
    if (scroller.hasPointerCapture(e.pointerId)) scroller.releasePointerCapture(e.pointerId);
  };
  const onKey = (e) => {
    const moves = { ArrowLeft: index - 1, ArrowRight: index + 1, Home: 0, End: d.versions.length - 1 };
    if (!(e.key in moves)) return;
    e.preventDefault();
    e.stopPropagation();  // keep JupyterLab's notebook shortcuts out of it
    go(moves[e.key]);
  };
  scroller.addEventListener("pointerdown", onDown);
  scroller.addEventListener("pointermove", onMove);
  scroller.addEventListener("pointerup", onUp);
  scroller.addEventListener("pointercancel", onUp);
  root.addEventListener("keydown", onKey);

  const onData = () => {
    d = decode(model.get("_data"));
    claimsKey = null;
    placed = false;
    [tLo, tHi] = span();
    chooseLanes();
    draw();
    fromModel();
    showHead();
  };
  const onSelected = () => { showPanes(); showStatus(); };
  function showHead() {
    focalText.textContent = d.focal ? `query ${d.focal.query_id}: ${d.focal.text}` : "";
  }
  const onAxis = () => { draw(); };
  model.on("change:version", fromModel);
  model.on("change:selected", onSelected);
  model.on("change:_data", onData);
  model.on("change:axis", onAxis);

  const resize = new ResizeObserver(() => draw());
  resize.observe(scroller);

  chooseLanes();
  showHead();
  draw();
  fromModel();
  showStatus();

  return () => {
    stop();
    resize.disconnect();
    model.off("change:version", fromModel);
    model.off("change:selected", onSelected);
    model.off("change:_data", onData);
    model.off("change:axis", onAxis);
  };
}

export default { render };
