// @ts-check
// ragtt Timeline: the index's history on a time axis, a draggable cursor, and what the
// focal query retrieves at the cursor's version; with an assertion namespace, the claims'
// validity windows as lanes and the claims valid at the cursor's time.
// Untrusted text (sources, labels, queries, chunk text, claims) reaches the DOM only as text.
//
// Two axes, switched by the header's button (the `axis` trait): "time" (wall clock) and
// "versions" (one equal slot per index version). The version axis's layout comes with the
// data (`_data.layout`, computed in Python; the rule is in ragtt/views/timeline_axis.py): event
// and claim positions in slot units, and the slots' boundaries as ticks, which map the
// cursor between times and positions. No kernel needed, so both work in a report.
//
// Axis compression (thousands of versions): the layout may fold runs of quiet versions (no
// snapshot, query or replay) into one narrow, hatched segment each (`layout.runs`), through a
// monotone piecewise-linear warp from slot units to drawn units (`layout.warp_pos` ->
// `layout.warp_x`); snapshots and runs keep their slots, marks and labels. A segment's text
// under the axis says how many versions it holds; hovering it names them.
//
// Snapshot labels that share a prefix are drawn by their distinguishing part ("0.1" for
// "flask-0.1"), the cursor's version's label in full; hover shows every label in full. Every
// label is drawn: one that would overlap another goes on the next line of the snapshot lane,
// which grows a line for it (collision-aware placement, never dropping a label).
//
// Test hooks on the root: `data-axis` (the axis drawn), `data-label-boxes` (the snapshot
// labels drawn, JSON [{x0, x1, row, text, label, short, version}], CSS px from the canvas's left
// edge; `text` as drawn, maybe cut with "…"), `data-axis-labels` (the texts under the axis) and
// `data-compressed` (the compressed segments drawn, JSON [{from, to, x0, x1}], versions and CSS px).

import { button, el, themeColors } from "./dom.js";
import { typed } from "./wire.js";
import { LABEL_GAP, counted, distinguishing, placeLabels, slotText, timeText, versionLabel } from "./labels.js";
import { chunkCard, queryTerms } from "./chunk_card.js";

/** @typedef {import("./types.js").Model} Model */
/** @typedef {import("./labels.js").LabelBox} LabelBox */
/** @typedef {import("./labels.js").Mark} Mark */

const KIND = { INGEST: 0, REMOVE: 1, SNAPSHOT: 2, QUERY: 3, REPLAY: 4 };
const ROW = 16;          // lane height, CSS px
const LABEL_W = 150;     // lane label column, CSS px
const PAD = 8;           // horizontal padding inside the plot, CSS px
const MAX_DOC_LANES = 40;
const MAX_CLAIM_LANES = 40;
const MAX_CLAIMS_LISTED = 200;
const FLAG = { SUPERSEDED: 1, OPEN: 2 };
const LANE = { ENTITY: 0, TYPE: 1 };
const AXES = ["time", "versions"];
/** What the `axis` trait may hold: an axis, or "auto" (what Python resolved, `layout.auto`). */
export const AXIS_TRAITS = ["auto", ...AXES];

/** @param {any} data the `_data` trait */
function decode(data) {
  const focal = data.focal && {
    ...data.focal,
    offsets: typed(data.focal.result_offsets), resultChunks: typed(data.focal.result_chunks),
    scores: typed(data.focal.result_scores), byVersion: typed(data.focal.version_result),
    terms: queryTerms(data.focal.text),
  };
  const cl = data.claims;
  const claims = cl && {
    namespace: cl.namespace, lanes: cl.lanes, laneKind: typed(cl.lane_kind),
    ids: cl.ids, content: cl.content, type: cl.type, confidence: typed(cl.confidence),
    from: typed(cl.from), until: typed(cl.until), lane: typed(cl.lane), flags: typed(cl.flags),
    fromX: typed(cl.from_x), untilX: typed(cl.until_x), openAt: cl.open_at,
  };
  const lay = data.layout;
  const ev = data.events;
  /** @type {Record<string, string>} version -> the snapshot label that names it */
  const names = data.labels || {};
  const labels = [...new Set(data.snapshots.map((/** @type {any} */ s) => s.label))];
  const short = distinguishing(labels);
  return {
    t0: data.t0_ms, unit: data.t_unit_ms, claims, focal, names,
    shortOf: new Map(labels.map((l, i) => [l, short[i]])),
    layout: { auto: lay.auto, first: lay.first, slots: lay.slots, bounds: typed(lay.bounds), eventX: typed(lay.event_x),
      runs: typed(lay.runs), warpPos: typed(lay.warp_pos), warpX: typed(lay.warp_x), width: lay.width },
    versions: typed(data.versions.version), vt: typed(data.versions.t), ops: data.versions.operation,
    et: typed(ev.t), kind: typed(ev.kind), lane: typed(ev.lane), ev: typed(ev.version),
    docs: data.docs, presence: typed(data.presence), snapshots: data.snapshots,
  };
}

/** @typedef {ReturnType<typeof decode>} Data */

/** The time `ticks` stands for, as every widget writes a time (labels.js timeText). Ticks land on
 * whole seconds and midnights exactly (the unit and t0 are chosen so: ragtt/views/timeline.py's
 * tick_frame). @param {Data} d @param {number} ticks */
const fmtTime = (d, ticks) => timeText(d.t0 + ticks * d.unit);

/** Ticks to a position on the version axis (ragtt/views/timeline_axis.py's slot_positions): the
 *  last slot starting at or before `ticks`, linearly inside it.
 * @param {Data["layout"]} layout @param {number} ticks */
function posOfTicks(layout, ticks) {
  const b = layout.bounds, slots = layout.slots;
  let j = 0;
  for (let k = 0; k < slots; k++) if (b[k] <= ticks) j = k;
  const w = b[j + 1] - b[j];
  return j + (w > 0 ? Math.max(0, Math.min(1, (ticks - b[j]) / w)) : 0);
}

/** A piecewise-linear map through knots `from` -> `to` (both ascending): the version axis's
 *  warp from slot units to drawn units (compressed runs narrow), or back.
 * @param {ArrayLike<number>} from @param {ArrayLike<number>} to @param {number} v */
function warp(from, to, v) {
  let lo = 0, hi = from.length - 1;
  if (v <= from[0]) return to[0];
  if (v >= from[hi]) return to[hi];
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (from[mid] <= v) lo = mid; else hi = mid;
  }
  const w = from[hi] - from[lo];
  return to[lo] + (w > 0 ? ((v - from[lo]) / w) * (to[hi] - to[lo]) : 0);
}

/** The compressed run holding slot `j`, as [start, end), or null. @param {Data["layout"]} layout @param {number} j */
function runAt(layout, j) {
  const r = layout.runs;
  let lo = 0, hi = r.length / 2;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (r[2 * mid + 1] <= j) lo = mid + 1; else hi = mid;
  }
  return lo < r.length / 2 && r[2 * lo] <= j ? [r[2 * lo], r[2 * lo + 1]] : null;
}

/** The inverse: a position on the version axis to ticks.
 * @param {Data["layout"]} layout @param {number} pos */
function ticksOfPos(layout, pos) {
  const b = layout.bounds;
  const j = Math.max(0, Math.min(layout.slots - 1, Math.floor(pos)));
  const f = Math.max(0, Math.min(1, pos - j));
  return Math.round(b[j] + f * (b[j + 1] - b[j]));
}

/** Place every label, on as many lines as it takes: each on the first line where it fits in
 *  full right of its mark (else left of it) without touching another, `first` (the cursor's)
 *  first. A label wider than the whole plot is cut with "…" on a line of its own.
 * @param {CanvasRenderingContext2D} g @param {Mark[]} marks @param {number} left @param {number} right
 * @param {Mark | null} [first]
 * @returns {LabelBox[]} with `row` set, from 0 */
function stackLabels(g, marks, left, right, first = null) {
  const order = [...(first ? [first] : []), ...[...marks].sort((a, b) => a.x - b.x).filter((m) => m !== first)];
  /** @type {LabelBox[][]} */
  const lines = [];
  const free = (/** @type {LabelBox[]} */ line, /** @type {number} */ x0, /** @type {number} */ x1) => x0 >= left
    && x1 <= right && line.every((b) => x1 + LABEL_GAP <= b.x0 || x0 >= b.x1 + LABEL_GAP);
  return order.map((m) => {
    let text = m.text;
    let w = g.measureText(text).width;
    while (w > right - left && text.length > 1) {
      text = `${text.slice(0, -2)}…`;
      w = g.measureText(text).width;
    }
    const starts = [m.x + 4, m.x - 4 - w, Math.min(Math.max(left, m.x - w / 2), right - w)];
    for (let row = 0; ; row++) {
      if (!lines[row]) lines[row] = [];
      const x0 = starts.find((x) => free(lines[row], x, x + w));
      if (x0 !== undefined) {
        const box = { x0, x1: x0 + w, text, mark: m, row };
        lines[row].push(box);
        return box;
      }
    }
  }).sort((a, b) => a.x0 - b.x0);
}

/** The DOM of the view, and its mutable state.
 * @param {Model} model */
function createView(model) {
  const root = el("div", "ragtt-timeline tex2jax_ignore mathjax_ignore");
  root.tabIndex = 0;
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", "ragtt timeline: arrow keys move the cursor between index versions");
  const head = el("div", "ragtt-tl-head");
  const focalText = el("span", "ragtt-tl-query");
  const axisBtn = el("button", "ragtt-tl-btn ragtt-tl-axis");
  axisBtn.type = "button";
  head.append(el("span", "ragtt-tl-title", "Timeline"), focalText, axisBtn);
  const controls = el("div", "ragtt-tl-controls");
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
  const d = decode(model.get("_data"));
  return {
    model, d, root, focalText, axisBtn, controls, where: el("span", "ragtt-tl-where"), playBtn: /** @type {HTMLButtonElement | null} */ (null),
    scroller, canvas, cursor, info, docsPane, chunksPane, claimsPane, status,
    index: 0,          // index into d.versions of the cursor
    cursorT: 0,        // the cursor's time in ticks: a version's, or (with claims) wherever it was dragged
    cursorP: 0,        // the same place on the version axis (slot units)
    /** @type {LabelBox[]} */ snapBoxes: [],
    labelRows: 0,      // lines the snapshot labels take beyond the snapshot lane's own
    /** @type {string | null} */ claimsKey: null,   // the claims listed now (redrawn only on change)
    placed: false,     // whether the cursor has been placed since the data arrived
    /** @type {ReturnType<typeof setInterval> | null} */ playing: null,
    /** @type {number[]} */ docLanes: [], moreDocs: 0, /** @type {number[]} */ claimLanes: [], moreClaims: 0,
    tLo: 0, tHi: 1, drawnIndex: -1,
  };
}

/** @typedef {ReturnType<typeof createView>} View */

// -- geometry -----------------------------------------------------------------------------

/** The axis drawn: the `axis` trait, or for "auto" what Python resolved it to. @param {View} V */
function mode(V) {
  const a = V.model.get("axis");
  return AXES.includes(a) ? a : (AXES.includes(V.d.layout.auto) ? V.d.layout.auto : "time");
}

/** The time span on the axis, in ticks. @param {Data} d @returns {[number, number]} */
function span(d) {
  let lo = Infinity, hi = -Infinity;
  const arrays = [d.vt, d.et];
  const c = d.claims;
  if (c) arrays.push(c.from, c.until.filter((/** @type {number} */ _, /** @type {number} */ i) => !(c.flags[i] & FLAG.OPEN)));
  for (const arr of arrays) for (let i = 0; i < arr.length; i++) {
    if (arr[i] < lo) lo = arr[i];
    if (arr[i] > hi) hi = arr[i];
  }
  if (!(hi > lo)) return [lo - 1, lo + 1];
  // open claims run to the axis end: leave them some room past the last thing on the axis
  if (c && c.flags.some((/** @type {number} */ f) => f & FLAG.OPEN)) hi += Math.max(1, Math.round((hi - lo) * 0.04));
  return [lo, hi];
}

/** @param {View} V */
const plotW = (V) => Math.max(40, V.scroller.clientWidth - LABEL_W - 2 * PAD);
/** @param {View} V @param {number} ticks */
const xOf = (V, ticks) => LABEL_W + PAD + ((ticks - V.tLo) / (V.tHi - V.tLo)) * plotW(V);
/** @param {View} V @param {number} x */
const ticksAt = (V, x) => Math.max(V.tLo, Math.min(V.tHi, V.tLo + ((x - LABEL_W - PAD) / plotW(V)) * (V.tHi - V.tLo)));
/** The version axis: positions in slot units, 0 .. layout.slots, drawn through the warp. @param {View} V @param {number} pos */
const xOfP = (V, pos) => {
  const l = V.d.layout;
  return LABEL_W + PAD + (warp(l.warpPos, l.warpX, pos) / l.width) * plotW(V);
};
/** @param {View} V @param {number} x */
const posAt = (V, x) => {
  const l = V.d.layout;
  return Math.max(0, Math.min(l.slots, warp(l.warpX, l.warpPos, ((x - LABEL_W - PAD) / plotW(V)) * l.width)));
};
/** @param {View} V @param {number} i */
const versionX = (V, i) => (mode(V) === "time" ? xOf(V, V.d.vt[i]) : xOfP(V, V.d.layout.first + i));
/** @param {View} V @param {number} i */
const eventX = (V, i) => (mode(V) === "time" ? xOf(V, V.d.et[i]) : xOfP(V, V.d.layout.eventX[i]));
/** @param {View} V */
const cursorX = (V) => (mode(V) === "time" ? xOf(V, V.cursorT) : xOfP(V, V.cursorP));

/** The version at a time: the latest one committed at or before it (or the first).
 * @param {Data} d @param {number} ticks */
function indexAtTicks(d, ticks) {
  let best = 0;
  for (let i = 0; i < d.vt.length; i++) if (d.vt[i] <= ticks) best = i;
  return best;
}

/** @param {View} V */
function chooseLanes(V) {
  const d = V.d;
  const counts = new Map();
  for (let i = 0; i < d.lane.length; i++) if (d.lane[i] >= 0) counts.set(d.lane[i], (counts.get(d.lane[i]) || 0) + 1);
  const all = [...counts.keys()].sort((a, b) => a - b);
  V.docLanes = all.slice(0, MAX_DOC_LANES);
  V.moreDocs = all.length - V.docLanes.length;
  const nClaimLanes = d.claims ? d.claims.lanes.length : 0;
  V.claimLanes = [...Array(Math.min(nClaimLanes, MAX_CLAIM_LANES)).keys()];
  V.moreClaims = nClaimLanes - V.claimLanes.length;
}

/** Every row of the plot, top to bottom. @param {View} V
 * @returns {Array<{name: string, style: string, kind?: string, key?: number}>} */
function rows(V) {
  const d = V.d;
  const out = [{ name: "queries", style: "dim" }, { name: "snapshots", style: "dim" }];
  for (let r = 0; r < V.labelRows; r++) out.push({ name: "", style: "dim" });  // more snapshot label lines
  for (const doc of V.docLanes) out.push({ name: d.docs[doc], style: "fg", kind: "doc", key: doc });
  if (V.moreDocs > 0) out.push({ name: `+${V.moreDocs} more documents`, style: "dim" });
  if (d.claims) {
    out.push({ name: `claims · ${d.claims.namespace}`, style: "head" });
    for (const l of V.claimLanes) {
      const isType = d.claims.laneKind[l] === LANE.TYPE;
      out.push({ name: isType ? `type: ${d.claims.lanes[l]}` : d.claims.lanes[l], style: isType ? "dim" : "fg",
        kind: "claim", key: l });
    }
    if (V.moreClaims > 0) out.push({ name: `+${V.moreClaims} more`, style: "dim" });
  }
  return out;
}

/** @param {View} V */
function colors(V) {
  return themeColors(V.root, {
    fg: ["--jp-ui-font-color1", "#333"], dim: ["--jp-ui-font-color2", "#777"],
    grid: ["--jp-border-color2", "#ddd"], bg: ["--jp-layout-color1", "#fff"],
    ingest: ["--jp-brand-color1", "#1976d2"], remove: ["--jp-error-color1", "#d32f2f"],
    snapshot: ["--jp-warn-color1", "#f57c00"], query: ["--jp-success-color1", "#388e3c"],
    replay: ["--jp-ui-font-color2", "#777"], font: ["--jp-ui-font-family", "system-ui, sans-serif"],
    claim: ["--jp-info-color1", "#0097a7"], cursor: ["--jp-brand-color1", "#1976d2"],
  });
}

// -- drawing ------------------------------------------------------------------------------

/** Lanes: queries, snapshots, one per document, then (with claims) one per entity or type.
 * @param {number} lane */
const laneY = (lane) => lane * ROW;

/** Redraw the whole plot. @param {View} V */
function draw(V) {
  const d = V.d, c = colors(V);
  const w = V.scroller.clientWidth || 600;
  const g = /** @type {CanvasRenderingContext2D} */ (V.canvas.getContext("2d"));
  placeSnapshotLabels(V, g, c, w);  // first: how many lines they take sets the lanes
  const rowList = rows(V);
  const lanes = rowList.length;
  const h = lanes * ROW + 18;
  const dpr = window.devicePixelRatio || 1;
  V.canvas.width = Math.round(w * dpr);
  V.canvas.height = Math.round(h * dpr);
  V.canvas.style.width = `${w}px`;
  V.canvas.style.height = `${h}px`;
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  g.textBaseline = "middle";
  drawLanes(V, g, c, rowList, w);
  const laneOfDoc = new Map(), laneOfClaim = new Map();
  rowList.forEach((row, i) => {
    if (row.kind === "doc") laneOfDoc.set(row.key, i);
    else if (row.kind === "claim") laneOfClaim.set(row.key, i);
  });
  drawClaims(V, g, c, laneOfClaim, w);
  const folded = mode(V) === "versions" && d.layout.runs.length > 0;
  for (let i = 0; i < d.kind.length; i++) {
    const k = d.kind[i];
    let lane, color;
    if (k === KIND.QUERY || k === KIND.REPLAY) { lane = 0; color = k === KIND.QUERY ? c.query : c.replay; }
    else if (k === KIND.SNAPSHOT) { lane = 1; color = c.snapshot; }
    else { lane = laneOfDoc.get(d.lane[i]); color = k === KIND.REMOVE ? c.remove : c.ingest; if (lane === undefined) continue; }
    g.fillStyle = color;
    // inside a compressed segment the marks of hundreds of versions overlap: drawn faint, so
    // the segment's hatching shows through
    g.globalAlpha = folded && runAt(d.layout, Math.floor(d.layout.eventX[i])) ? 0.3 : 1;
    g.fillRect(Math.round(eventX(V, i)) - 1, laneY(lane) + 3, 3, ROW - 7);
  }
  g.globalAlpha = 1;
  drawSnapshotLabels(V, g, c);
  drawAxisLabels(V, g, c, w, lanes);
  V.cursor.style.height = `${lanes * ROW}px`;
  V.drawnIndex = V.index;
  placeCursor(V);
  showAxis(V);
}

/** Lane names, lane rules, the version axis's slots and the version ticks.
 * @param {View} V @param {CanvasRenderingContext2D} g @param {Record<string, string>} c
 * @param {ReturnType<typeof rows>} rowList @param {number} w */
function drawLanes(V, g, c, rowList, w) {
  const lanes = rowList.length;
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
  if (mode(V) === "versions") {  // every other slot shaded, so equal slots read as slots
    g.save();
    g.globalAlpha = 0.35;
    g.fillStyle = c.grid;
    const lay = V.d.layout;
    for (let j = lay.first; j < lay.slots; j += 2) {
      const run = runAt(lay, j);
      if (run) { j = run[1] - 1 + ((run[1] - j) % 2); continue; }  // keep the stripes' parity past the run
      g.fillRect(xOfP(V, j), 0, xOfP(V, j + 1) - xOfP(V, j), lanes * ROW);
    }
    g.restore();
    drawRuns(V, g, c, lanes);
  }
  g.fillStyle = c.grid;
  const versionsAxis = mode(V) === "versions";
  const after = versionsAxis ? null : afterLastVersion(V);
  if (after) {  // past the last version (queries asked since): shaded, not read as more history
    g.save();
    g.globalAlpha = 0.45;
    g.fillRect(after.x0, 0, after.x1 - after.x0, lanes * ROW);
    g.restore();
  }
  V.root.dataset.afterLast = after ? JSON.stringify(after) : "";
  for (let i = 0; i < V.d.vt.length; i++) {
    if (versionsAxis && runAt(V.d.layout, V.d.layout.first + i)) continue;  // the segment is drawn as one
    g.fillRect(Math.round(versionX(V, i)), 0, 1, lanes * ROW);
  }
}

/** On the time axis, the stretch after the last version up to the axis end (the runs logged
 *  since, often months after the last release an ingest was dated with), or null.
 * @param {View} V @returns {{x0: number, x1: number, from: string, to: string} | null} */
function afterLastVersion(V) {
  const d = V.d, last = d.vt[d.vt.length - 1];
  if (!(V.tHi > last)) return null;
  const x0 = Math.max(LABEL_W + PAD, xOf(V, last)), x1 = xOf(V, V.tHi);
  return x1 - x0 >= 2 ? { x0: Math.round(x0 * 10) / 10, x1: Math.round(x1 * 10) / 10,
    from: fmtTime(d, last), to: fmtTime(d, V.tHi) } : null;
}

/** The compressed segments: each a hatched band over the lanes between two rules
 *  (`data-compressed` lists them). @param {View} V @param {CanvasRenderingContext2D} g
 * @param {Record<string, string>} c @param {number} lanes */
function drawRuns(V, g, c, lanes) {
  const lay = V.d.layout, r = lay.runs, out = [];
  g.save();
  for (let k = 0; k < r.length; k += 2) {
    const x0 = xOfP(V, r[k]), x1 = xOfP(V, r[k + 1]), h = lanes * ROW;
    g.fillStyle = c.bg;
    g.fillRect(x0, 0, x1 - x0, h);
    g.strokeStyle = c.grid;
    g.lineWidth = 1;
    g.beginPath();
    g.rect(x0, 0, x1 - x0, h);
    g.clip();
    for (let y = -Math.ceil(x1 - x0); y < h; y += 4) {  // diagonal hatching: folded, not empty
      g.moveTo(x0, y);
      g.lineTo(x1, y + (x1 - x0));
    }
    g.stroke();
    g.restore();
    g.save();
    g.fillStyle = c.dim;
    g.fillRect(Math.round(x0), 0, 1, h);
    g.fillRect(Math.round(x1) - 1, 0, 1, h);
    out.push({ from: V.d.versions[r[k] - lay.first], to: V.d.versions[r[k + 1] - 1 - lay.first],
      x0: Math.round(x0 * 10) / 10, x1: Math.round(x1 * 10) / 10 });
  }
  g.restore();
  V.root.dataset.compressed = JSON.stringify(out);
}

/** Where the snapshot labels go (`V.snapBoxes`, `V.labelRows`): beside their marks, on as
 *  many lines as they need, never over each other and never dropped; the distinguishing part,
 *  the cursor's version's label in full (measured bold, as drawn).
 * @param {View} V @param {CanvasRenderingContext2D} g @param {Record<string, string>} c @param {number} w */
function placeSnapshotLabels(V, g, c, w) {
  const d = V.d, current = d.versions[V.index];
  g.font = `600 11px ${c.font}`;
  const marks = d.snapshots.filter((/** @type {any} */ s) => s.event >= 0 && s.event < d.kind.length)
    .map((/** @type {any} */ s) => ({ x: Math.round(eventX(V, s.event)), snap: s,
      text: s.version === current ? s.label : d.shortOf.get(s.label) || s.label }));
  // the cursor's version's label (the one that names it) goes first, in full
  const first = marks.filter((m) => m.snap.version === current && m.snap.label === d.names[String(current)]).pop();
  V.snapBoxes = stackLabels(g, marks, LABEL_W, w - PAD, first);
  V.labelRows = Math.max(0, ...V.snapBoxes.map((b) => b.row || 0));
}

/** The snapshot labels where `placeSnapshotLabels` put them (canvas text: never parsed as HTML).
 * @param {View} V @param {CanvasRenderingContext2D} g @param {Record<string, string>} c */
function drawSnapshotLabels(V, g, c) {
  const d = V.d, current = d.versions[V.index];
  for (const b of V.snapBoxes) {  // a backdrop, so a label set left of its mark stays legible over others' ticks
    const on = b.mark.snap.version === current, y = laneY(1 + (b.row || 0));
    if (b.row) {  // a thin stem from the label line up to its mark
      g.fillStyle = c.snapshot;
      g.fillRect(b.mark.x, laneY(2), 1, y - laneY(2) + 3);
    }
    g.fillStyle = c.bg;
    g.fillRect(b.x0 - 1, y + 2, b.x1 - b.x0 + 2, ROW - 5);
    g.fillStyle = on ? c.cursor : c.fg;
    g.font = on ? `600 11px ${c.font}` : `11px ${c.font}`;
    g.fillText(b.text, b.x0, y + ROW / 2);
  }
  g.font = `11px ${c.font}`;
  V.root.dataset.labelBoxes = JSON.stringify(V.snapBoxes.map((b) => ({
    x0: Math.round(b.x0 * 10) / 10, x1: Math.round(b.x1 * 10) / 10, row: b.row || 0, text: b.text,
    label: b.mark.snap.label, short: d.shortOf.get(b.mark.snap.label), version: b.mark.snap.version,
  })));
}

/** Under the lanes: the time at both ends, or each slot's version (by its label's
 *  distinguishing part where a snapshot names it).
 * @param {View} V @param {CanvasRenderingContext2D} g @param {Record<string, string>} c
 * @param {number} w @param {number} lanes */
function drawAxisLabels(V, g, c, w, lanes) {
  const d = V.d, versionsAxis = mode(V) === "versions";
  g.fillStyle = c.dim;
  const axisMarks = versionsAxis
    ? [...(d.layout.first ? [{ x: xOfP(V, 0) - 4, text: "earlier" }] : []),
      ...Array.from(d.versions, (/** @type {number} */ v, i) => ({ x: versionX(V, i) - 4, text: slotText(v, d.names, d.shortOf) }))
        .filter((_, i) => !runAt(d.layout, d.layout.first + i)),
      ...runMarks(V)]
    : [{ x: LABEL_W + PAD - 4, text: fmtTime(d, V.tLo) }];
  const axisBoxes = placeLabels(g, axisMarks, LABEL_W, w - PAD);
  const y = lanes * ROW + 9;
  if (!versionsAxis) {  // the end time, right-aligned, unless it would run into the start; past
    // the last version, it says so (the axis runs on to the newest run, not to a release)
    const fits = (/** @type {string} */ t) => !axisBoxes.length || w - PAD - g.measureText(t).width >= axisBoxes[0].x1 + LABEL_GAP;
    const plain = fmtTime(d, V.tHi), noted = `shaded: after the last version, to ${plain}`;
    const end = afterLastVersion(V) && fits(noted) ? noted : plain;
    if (fits(end)) g.fillText(end, w - PAD - g.measureText(end).width, y);
    V.root.dataset.axisEnd = fits(end) ? end : "";
  }
  for (const b of axisBoxes) g.fillText(b.text, b.x0, y);
  V.root.dataset.axisLabels = JSON.stringify(axisBoxes.map((b) => b.text));
}

/** Under a compressed segment: how many versions it folds ("⋯ 2,940"). @param {View} V */
function runMarks(V) {
  const r = V.d.layout.runs, out = [];
  for (let k = 0; k < r.length; k += 2) out.push({ x: xOfP(V, r[k]), text: `⋯ ${(r[k + 1] - r[k]).toLocaleString("en")}` });
  return out;
}

/** Each claim a bar from valid_from to valid_until (open ones to the axis end); superseded
 *  claims are hollow and dashed, the others filled.
 * @param {View} V @param {CanvasRenderingContext2D} g @param {Record<string, string>} c
 * @param {Map<number, number>} laneOfClaim @param {number} w */
function drawClaims(V, g, c, laneOfClaim, w) {
  const k = V.d.claims;
  if (!k) return;
  const right = w - PAD, versionsAxis = mode(V) === "versions";
  g.save();
  g.lineWidth = 1;
  for (let i = 0; i < k.ids.length; i++) {
    const lane = laneOfClaim.get(k.lane[i]);
    if (lane === undefined) continue;
    const x0 = Math.max(LABEL_W, versionsAxis ? xOfP(V, k.fromX[i]) : xOf(V, k.from[i]));
    const x1 = k.flags[i] & FLAG.OPEN ? right : Math.min(right, versionsAxis ? xOfP(V, k.untilX[i]) : xOf(V, k.until[i]));
    const y = laneY(lane) + 3, h = ROW - 7, bw = Math.max(2, x1 - x0);
    g.fillStyle = c.claim;
    if (k.flags[i] & FLAG.SUPERSEDED) {
      g.globalAlpha = 0.18;
      g.fillRect(x0, y, bw, h);
      g.globalAlpha = 1;
      g.setLineDash([3, 2]);
      g.strokeStyle = c.claim;
      g.strokeRect(x0 + 0.5, y + 0.5, bw - 1, h - 1);
      g.setLineDash([]);
    } else {
      g.globalAlpha = 0.85;
      g.fillRect(x0, y, bw, h);
      g.globalAlpha = 1;
    }
    g.fillStyle = c.fg;  // where the claim starts: a dark tick, so back-to-back claims stay apart
    g.fillRect(Math.round(x0), y - 1, 1, h + 2);
  }
  g.restore();
}

/** @param {View} V */
function placeCursor(V) {
  const d = V.d;
  V.cursor.style.left = `${Math.round(cursorX(V)) - 1}px`;
  V.cursor.setAttribute("aria-valuemin", String(d.versions[0]));
  V.cursor.setAttribute("aria-valuemax", String(d.versions[d.versions.length - 1]));
  V.cursor.setAttribute("aria-valuenow", String(d.versions[V.index]));
  V.cursor.setAttribute("aria-valuetext", versionLabel(d.versions[V.index], d.names));
}

/** @param {View} V */
function showAxis(V) {
  const m = mode(V);
  V.root.dataset.axis = m;
  V.axisBtn.textContent = m === "time" ? "Axis: time" : "Axis: versions";
  V.axisBtn.setAttribute("aria-label", m === "time" ? "axis: time; switch to one slot per version"
    : "axis: one slot per version; switch to time");
  V.axisBtn.title = m === "time" ? "Drawn at wall-clock time; click for one equal slot per index version"
    : "One equal slot per index version; click for wall-clock time";
}

// -- panes --------------------------------------------------------------------------------

/** The focal query's result at version index `i`. @param {Data} d @param {number} i */
function resultAt(d, i) {
  const f = d.focal;
  const r = f.byVersion[i];
  const out = [];
  for (let j = f.offsets[r]; j < f.offsets[r + 1]; j++) out.push({ chunk: f.resultChunks[j], score: f.scores[j] });
  return out;
}

/** The info line, the documents present and the focal query's chunks at the cursor. @param {View} V */
function showPanes(V) {
  const d = V.d, v = d.versions[V.index];
  const label = versionLabel(v, d.names);
  V.where.textContent = `${label} (${V.index + 1} of ${d.versions.length})`;
  const labels = d.snapshots.filter((/** @type {any} */ s) => s.version === v).map((/** @type {any} */ s) => s.label);
  const early = V.cursorT < d.vt[0] ? "Before the first index version · " : "";
  V.info.textContent = `${early}Index version ${label} · ${fmtTime(d, d.vt[V.index])} · ${d.ops[V.index] || ""}`
    + (labels.length ? ` · snapshot ${labels.join(", ")}` : "")
    + (V.cursorT !== d.vt[V.index] ? ` · cursor at ${fmtTime(d, V.cursorT)}` : "");

  const present = [];
  for (let i = 0; i < d.presence.length; i += 3) {
    if (d.presence[i + 1] <= v && v < d.presence[i + 2]) present.push(d.docs[d.presence[i]]);
  }
  present.sort();
  V.docsPane.replaceChildren(el("div", "ragtt-tl-pane-title", `Documents present (${present.length})`));
  const ul = el("ul", "ragtt-tl-doclist");
  for (const name of present) ul.append(el("li", "ragtt-tl-doc", name));
  V.docsPane.append(ul);
  showChunks(V);
}

/** @param {View} V */
function showChunks(V) {
  const d = V.d, v = d.versions[V.index], index = V.index;
  V.chunksPane.replaceChildren();
  if (!d.focal) {
    V.chunksPane.append(el("div", "ragtt-tl-empty", "No focal query: open the timeline of a query (%ragtt timeline QUERY_ID, or a logged query's timeline button) to see its chunks here."));
    return;
  }
  const now = resultAt(d, index);
  const before = index > 0 ? new Set(resultAt(d, index - 1).map((r) => r.chunk)) : new Set();
  const nowIds = new Set(now.map((r) => r.chunk));
  const left = index > 0 ? [...before].filter((c) => !nowIds.has(c)).length : 0;
  V.chunksPane.append(el("div", "ragtt-tl-pane-title", `Chunks retrieved at ${versionLabel(v, d.names)} (${now.length})`
    + (index > 0 ? ` · ${left} left since ${versionLabel(d.versions[index - 1], d.names)}` : "")));
  const ol = el("ol", "ragtt-tl-chunklist");
  const selected = new Set(V.model.get("selected"));
  now.forEach((r, rank) => {
    const c = d.focal.chunks[r.chunk];
    const isNew = index > 0 && !before.has(r.chunk);
    const card = chunkCard({
      id: c.chunk_id, text: c.text, source: c.source, terms: d.focal.terms,
      meta: [["ragtt-rank", `#${rank + 1}`], ["ragtt-score", r.score.toFixed(4)]],
      badges: isNew ? ["new"] : [],
      cls: `${isNew ? "ragtt-new" : ""}${selected.has(c.chunk_id) ? " ragtt-selected" : ""}`.trim(),
    });
    card.tabIndex = -1;
    card.addEventListener("click", () => toggle(V, c.chunk_id));
    ol.append(card);
  });
  if (!now.length) ol.append(el("li", "ragtt-tl-empty", "nothing retrieved at this version"));
  V.chunksPane.append(ol);
}

/** Indexes of the claims valid at `ticks` (valid_from <= t < valid_until), in lane order.
 * @param {Data} d @param {number} ticks */
function claimsAt(d, ticks) {
  const k = d.claims, out = [];
  for (let i = 0; i < k.ids.length; i++) {
    if (k.from[i] <= ticks && ((k.flags[i] & FLAG.OPEN) || ticks < k.until[i])) out.push(i);
  }
  return out;
}

/** @param {View} V */
function showClaims(V) {
  const d = V.d, k = d.claims;
  V.claimsPane.hidden = !k;
  if (!k) return;
  const valid = claimsAt(d, V.cursorT);
  const key = `${valid.join(",")}@${fmtTime(d, V.cursorT)}`;
  if (key === V.claimsKey) return;
  V.claimsKey = key;
  V.claimsPane.replaceChildren(el("div", "ragtt-tl-pane-title",
    `Claims valid at ${fmtTime(d, V.cursorT)} in ${k.namespace} (${valid.length})`));
  const ol = el("ol", "ragtt-tl-claimlist");
  for (const i of valid.slice(0, MAX_CLAIMS_LISTED)) {
    const li = el("li", "ragtt-claim");
    li.dataset.assertionId = k.ids[i];
    const meta = el("div", "ragtt-claim-meta");
    meta.append(
      el("span", "ragtt-claim-entity", k.laneKind[k.lane[i]] === LANE.TYPE ? "(no entity)" : k.lanes[k.lane[i]]),
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
  V.claimsPane.append(ol);
}

/** @param {View} V @param {string} chunkId */
function toggle(V, chunkId) {
  const sel = new Set(V.model.get("selected"));
  if (sel.has(chunkId)) sel.delete(chunkId); else sel.add(chunkId);
  V.model.set("selected", [...sel]);
  V.model.save_changes();
}

// -- cursor movement ----------------------------------------------------------------------

/** Move the cursor to version `i` (at its commit time, or at `ticks` when given, at `pos` on
 *  the version axis when given too).
 * @param {View} V @param {number} i @param {{sync?: boolean, ticks?: number | null, pos?: number | null}} [opts] */
function go(V, i, { sync = true, ticks = null, pos = null } = {}) {
  const d = V.d;
  const next = Math.max(0, Math.min(d.versions.length - 1, i));
  const changed = next !== V.index;
  V.index = next;
  V.placed = true;
  V.cursorT = ticks === null ? d.vt[V.index] : ticks;
  V.cursorP = ticks === null ? d.layout.first + V.index : (pos === null ? posOfTicks(d.layout, ticks) : pos);
  // redraw for the cursor's snapshot label in full (and the first time)
  if (V.drawnIndex !== V.index && (d.snapshots.length || V.drawnIndex < 0)) draw(V);
  else placeCursor(V);
  showPanes(V);
  showClaims(V);
  if (sync && changed && V.model.get("version") !== d.versions[V.index]) {
    V.model.set("version", d.versions[V.index]);
    V.model.save_changes();
  }
}

/** Dragging: with claims the cursor follows the pointer's time; without, it snaps to versions.
 *  On the version axis the slot under the pointer is the version. @param {View} V @param {number} x */
function goTo(V, x) {
  const d = V.d;
  if (mode(V) === "versions") {
    const pos = posAt(V, x);
    const slot = Math.min(d.layout.slots - 1, Math.floor(pos));
    go(V, slot - d.layout.first, d.claims ? { ticks: ticksOfPos(d.layout, pos), pos } : {});
    return;
  }
  const ticks = ticksAt(V, x);
  go(V, indexAtTicks(d, ticks), { ticks: d.claims ? ticks : null });
}

/** The tooltip: a snapshot's full label over its mark or label; on the version axis, the slot's version.
 * @param {View} V @param {number} x @param {number} y */
function hover(V, x, y) {
  const d = V.d;
  const inSnapLane = y >= laneY(1) && y < laneY(2 + V.labelRows);
  const line = Math.floor(y / ROW) - 1;
  const snap = inSnapLane && (V.snapBoxes.find((b) => (b.row || 0) === line && x >= b.x0 - 2 && x <= b.x1 + 2)
    || V.snapBoxes.find((b) => Math.abs(x - b.mark.x) <= 3));
  let tip = "";
  if (snap) tip = `snapshot ${snap.mark.snap.label} (v${snap.mark.snap.version})`;
  else if (inSnapLane) {
    const near = d.snapshots.find((/** @type {any} */ s) => s.event >= 0 && s.event < d.kind.length
      && Math.abs(x - eventX(V, s.event)) <= 3);
    if (near) tip = `snapshot ${near.label} (v${near.version})`;
  }
  if (!tip && mode(V) === "versions" && x >= LABEL_W) {
    const slot = Math.min(d.layout.slots - 1, Math.floor(posAt(V, x)));
    const i = slot - d.layout.first, run = runAt(d.layout, slot);
    tip = i < 0 ? "before the first index version"
      : run ? `v${d.versions[run[0] - d.layout.first]} to v${d.versions[run[1] - 1 - d.layout.first]}: `
        + `${counted(run[1] - run[0], "version")} with no snapshot or query (compressed) · at the pointer `
        + versionLabel(d.versions[i], d.names)
      : `${versionLabel(d.versions[i], d.names)} · ${fmtTime(d, d.vt[i])} · ${d.ops[i] || ""}`;
  }
  if (V.scroller.title !== tip) V.scroller.title = tip;
}

/** The cursor follows the `version` trait (first placement: where the data says to open). @param {View} V */
function fromModel(V) {
  const d = V.d, v = V.model.get("version");
  if (V.placed && d.versions[V.index] === v && d.claims) {  // our own change echoed back: keep the dragged place
    placeCursor(V);
    showPanes(V);
    showClaims(V);
    return;
  }
  let i = d.versions.indexOf(v);
  if (i < 0) i = d.versions.length - 1;
  const openAt = !V.placed && d.claims && d.claims.openAt !== null && d.claims.openAt !== undefined
    && indexAtTicks(d, d.claims.openAt) === i ? d.claims.openAt : null;
  go(V, i, { sync: false, ticks: openAt });
}

/** The header's buttons and the cursor keys. @param {View} V */
function buildControls(V) {
  const d = () => V.d;
  const add = (/** @type {string} */ label, /** @type {string} */ aria, /** @type {() => void} */ fn) => {
    const b = button("ragtt-tl-btn", label, aria, fn);
    V.controls.append(b);
    return b;
  };
  add("|◀", "first version", () => go(V, 0));
  add("◀", "previous version", () => go(V, V.index - 1));
  V.playBtn = add("Play", "play", () => (V.playing ? stop(V) : play(V)));
  add("▶", "next version", () => go(V, V.index + 1));
  add("▶|", "latest version", () => go(V, d().versions.length - 1));
  V.controls.append(V.where);
  V.axisBtn.addEventListener("click", () => {
    V.model.set("axis", mode(V) === "time" ? "versions" : "time");
    V.model.save_changes();
  });
  V.root.addEventListener("keydown", (e) => {
    /** @type {Record<string, number>} */
    const moves = { ArrowLeft: V.index - 1, ArrowRight: V.index + 1, Home: 0, End: d().versions.length - 1 };
    if (!(e.key in moves)) return;
    e.preventDefault();
    e.stopPropagation();  // keep JupyterLab's notebook shortcuts out of it
    go(V, moves[e.key]);
  });
}

/** @param {View} V */
function play(V) {
  if (V.index >= V.d.versions.length - 1) go(V, 0);
  const b = /** @type {HTMLButtonElement} */ (V.playBtn);
  b.textContent = "Pause";
  b.setAttribute("aria-label", "pause");
  V.playing = setInterval(() => (V.index >= V.d.versions.length - 1 ? stop(V) : go(V, V.index + 1)), 700);
}

/** @param {View} V */
function stop(V) {
  if (V.playing) clearInterval(V.playing);
  V.playing = null;
  const b = /** @type {HTMLButtonElement} */ (V.playBtn);
  b.textContent = "Play";
  b.setAttribute("aria-label", "play");
}

/** Drag the cursor; hover for tooltips. @param {View} V */
function attachPointer(V) {
  let dragging = false;
  const { scroller, canvas } = V;
  scroller.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    dragging = true;
    scroller.setPointerCapture(e.pointerId);
    V.root.focus({ preventScroll: true });
    goTo(V, e.clientX - canvas.getBoundingClientRect().left);
    e.preventDefault();
  });
  scroller.addEventListener("pointermove", (e) => {
    const r = canvas.getBoundingClientRect();
    if (dragging) goTo(V, e.clientX - r.left);
    else hover(V, e.clientX - r.left, e.clientY - r.top);
  });
  const up = (/** @type {PointerEvent} */ e) => {
    dragging = false;
    if (scroller.hasPointerCapture(e.pointerId)) scroller.releasePointerCapture(e.pointerId);
  };
  scroller.addEventListener("pointerup", up);
  scroller.addEventListener("pointercancel", up);
}

/** @param {View} V */
function showHead(V) {
  const f = V.d.focal;
  V.focalText.textContent = f ? `query ${f.query_id} at ${versionLabel(f.version, V.d.names)}: ${f.text}` : "";
}

/** @param {View} V */
function showStatus(V) {
  V.status.textContent = `${V.model.get("selected").length} selected`;
}

/** @param {import("./types.js").RenderProps} props */
function render({ model, el: host }) {
  const V = createView(model);
  host.append(V.root);
  buildControls(V);
  attachPointer(V);
  const onData = () => {
    V.d = decode(model.get("_data"));
    V.claimsKey = null;
    V.placed = false;
    [V.tLo, V.tHi] = span(V.d);
    chooseLanes(V);
    V.drawnIndex = -1;
    fromModel(V);  // draws
    showHead(V);
  };
  const onVersion = () => fromModel(V);
  const onSelected = () => { showChunks(V); showStatus(V); };
  const onAxis = () => draw(V);
  model.on("change:version", onVersion);
  model.on("change:selected", onSelected);
  model.on("change:_data", onData);
  model.on("change:axis", onAxis);
  const resize = new ResizeObserver(() => draw(V));
  resize.observe(V.scroller);
  [V.tLo, V.tHi] = span(V.d);
  chooseLanes(V);
  showHead(V);
  fromModel(V);  // draws
  showStatus(V);
  return () => {
    stop(V);
    resize.disconnect();
    model.off("change:version", onVersion);
    model.off("change:selected", onSelected);
    model.off("change:_data", onData);
    model.off("change:axis", onAxis);
  };
}

export default { render };
