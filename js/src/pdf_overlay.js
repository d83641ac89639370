// @ts-check
// ragtt PdfOverlay: a rendered PDF page with the chunks' regions over it, the page's route,
// and a query's retrieved chunks by rank. Pages are PNG bytes: embedded in the state, or
// asked of the kernel (model.send) on demand. Untrusted text (chunk text, source, query,
// route reasons) reaches the DOM only as text.

import { button, el } from "./dom.js";
import { typed } from "./wire.js";
import { versionLabel } from "./labels.js";
import { chunkCard, queryTerms } from "./chunk_card.js";

/** @typedef {import("./types.js").Model} Model */

const FETCH_WAIT_MS = 4000;   // how long a page request may go unanswered before the notice
/** The zoom's range, CSS px per PDF point (the `scale` trait; 0: the widget's width). */
export const SCALE = { min: 0.2, max: 8 };

/** Bytes of an embedded or received PNG, whatever shape the manager hands them in.
 * @param {unknown} v @returns {BlobPart} */
function pngBytes(v) {
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return /** @type {BlobPart} */ (new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
  throw new Error("ragtt: a page image is not binary data");
}

/** @param {any} data the `_data` trait */
function decode(data) {
  return {
    ...data,
    sizes: typed(data.page_sizes),
    rank: typed(data.chunks.rank), score: typed(data.chunks.score),
    rPage: typed(data.regions.page), rBox: typed(data.regions.box), rChunk: typed(data.regions.chunk),
    terms: queryTerms(data.query && data.query.text),
  };
}

/** @typedef {ReturnType<typeof decode>} Data */

/** @param {Model} model */
function createView(model) {
  const root = el("div", "ragtt-pdf-overlay tex2jax_ignore mathjax_ignore");
  root.tabIndex = 0;
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", "ragtt PDF overlay: arrow keys turn pages");
  const head = el("div", "ragtt-po-head");
  const title = el("span", "ragtt-po-title");
  const queryText = el("span", "ragtt-po-query");
  head.append(title, queryText);
  const controls = el("div", "ragtt-po-controls");
  const route = el("div", "ragtt-po-route");
  const viewport = el("div", "ragtt-po-viewport");
  const pageBox = el("div", "ragtt-po-page");
  const img = el("img", "ragtt-po-image");
  img.alt = "";
  img.draggable = false;
  const layer = el("div", "ragtt-po-regions");
  const notice = el("div", "ragtt-po-notice");
  pageBox.append(img, layer, notice);
  viewport.append(pageBox);
  const hover = el("div", "ragtt-po-hover");
  hover.hidden = true;
  const list = el("ol", "ragtt-po-list");
  root.append(head, controls, route, viewport, hover, list);
  return {
    model, d: decode(model.get("_data")), root, title, queryText, controls, route, viewport, pageBox, img, layer,
    notice, hover, list, where: el("span", "ragtt-po-where"), status: el("span", "ragtt-po-status"),
    /** @type {Map<number, string>} */ urls: new Map(),   // page -> object URL of its PNG (switching fast)
    /** @type {Map<number, ReturnType<typeof setTimeout>>} */ waiting: new Map(),  // unanswered requests
    shownAt: 0,
  };
}

/** @typedef {ReturnType<typeof createView>} View */

/** @param {View} V */
function buildControls(V) {
  const m = V.model;
  const add = (/** @type {string} */ label, /** @type {string} */ aria, /** @type {() => void} */ fn) =>
    V.controls.append(button("ragtt-po-btn", label, aria, fn));
  add("◀", "previous page", () => go(V, m.get("page") - 1));
  V.controls.append(V.where);
  add("▶", "next page", () => go(V, m.get("page") + 1));
  add("−", "zoom out", () => zoomBy(V, 1 / 1.25));
  add("Fit", "fit to width", () => setScale(V, 0));
  add("+", "zoom in", () => zoomBy(V, 1.25));
  V.controls.append(V.status);
  V.root.addEventListener("keydown", (e) => {
    /** @type {Record<string, number>} */
    const moves = { ArrowLeft: -1, ArrowRight: 1, PageUp: -1, PageDown: 1 };
    if (e.key in moves) { e.preventDefault(); e.stopPropagation(); go(V, m.get("page") + moves[e.key]); }
    else if (e.key === "Home" || e.key === "End") {
      e.preventDefault();
      e.stopPropagation();
      go(V, e.key === "Home" ? 1 : V.d.page_count);
    }
  });
}

// -- pages ----------------------------------------------------------------------------------

/** The object URL of an embedded or fetched page, or null. @param {View} V @param {number} page */
function urlFor(V, page) {
  const known = V.urls.get(page);
  if (known) return known;
  const embedded = V.model.get("_pages")[String(page)];
  if (!embedded) return null;
  const url = URL.createObjectURL(new Blob([pngBytes(embedded.png)], { type: "image/png" }));
  V.urls.set(page, url);
  return url;
}

/** Ask the kernel for a page; say so when nobody answers. @param {View} V @param {number} page */
function request(V, page) {
  if (V.waiting.has(page)) return;
  V.model.send({ type: "page", page });
  V.waiting.set(page, setTimeout(() => {
    V.waiting.delete(page);
    if (V.model.get("page") !== page || V.urls.has(page)) return;
    const d = V.d;
    V.notice.textContent = d.left_out.includes(page)
      ? `Page ${page} is not embedded: the report's page images passed the ${(d.embed_limit / 1e6).toFixed(0)} MB cap `
        + "(PdfOverlay(..., embed_limit=...)). Open the notebook with a kernel to see it."
      : `Page ${page} is not embedded in this view and no kernel has answered yet.`;
    V.notice.hidden = false;
  }, FETCH_WAIT_MS));
}

/** A page from the kernel. @param {View} V @param {any} msg @param {unknown[]} buffers */
function onPageMessage(V, msg, buffers) {
  if (!msg || msg.type !== "page") return;
  clearTimeout(V.waiting.get(msg.page));
  V.waiting.delete(msg.page);
  if (msg.error || !buffers || !buffers.length) {
    if (msg.page === V.model.get("page")) { V.notice.textContent = `Page ${msg.page}: ${msg.error || "no image"}`; V.notice.hidden = false; }
    return;
  }
  V.urls.set(msg.page, URL.createObjectURL(new Blob([pngBytes(buffers[0])], { type: "image/png" })));
  if (msg.page === V.model.get("page")) show(V);
}

// -- layout ---------------------------------------------------------------------------------

/** @param {View} V @param {number} page @returns {[number, number]} */
const pageSize = (V, page) => [V.d.sizes[2 * (page - 1)], V.d.sizes[2 * (page - 1) + 1]];

/** CSS px per PDF point: the `scale` trait, or the widget's width. @param {View} V @param {number} page */
function scaleFor(V, page) {
  const s = V.model.get("scale");
  if (s > 0) return s;
  const avail = Math.max(200, (V.viewport.clientWidth || 800) - 4);
  return Math.min(avail, 1000) / pageSize(V, page)[0];
}

/** Show the current page: image, route, regions. @param {View} V */
function show(V) {
  const started = performance.now();
  const page = V.model.get("page");
  const [pw, ph] = pageSize(V, page);
  const s = scaleFor(V, page);
  for (const node of [V.pageBox, V.img]) { node.style.width = `${pw * s}px`; node.style.height = `${ph * s}px`; }
  V.where.textContent = `page ${page} of ${V.d.page_count}`;
  showRoute(V, page);
  drawRegions(V, page, s);
  const url = urlFor(V, page);
  V.notice.hidden = true;
  if (url) {
    if (V.img.getAttribute("src") !== url) V.img.src = url;
    V.img.hidden = false;
    const done = () => {
      V.root.dataset.page = String(page);
      V.root.dataset.pageMs = (performance.now() - (V.shownAt || started)).toFixed(1);
      V.shownAt = 0;
    };
    V.img.decode().then(done, done);
  } else {
    V.img.hidden = true;
    V.img.removeAttribute("src");
    V.notice.textContent = `Loading page ${page}…`;
    V.notice.hidden = false;
    request(V, page);
  }
  // warm the neighbours' object URLs so turning a page needs no Blob work
  for (const n of [page - 1, page + 1]) if (n >= 1 && n <= V.d.page_count) urlFor(V, n);
}

/** The page's route: engine badge, the router's signals, the reason. @param {View} V @param {number} page */
function showRoute(V, page) {
  V.route.replaceChildren();
  const r = V.d.routes.find((/** @type {any} */ x) => x.page === page);
  if (!r) { V.route.append(el("span", "ragtt-po-engine", "no route recorded for this page")); return; }
  V.route.append(el("span", `ragtt-po-engine ragtt-po-engine-${String(r.engine).replace(/[^a-z0-9_-]/gi, "")}`, r.engine));
  for (const [k, v] of Object.entries(r.signals)) V.route.append(el("span", "ragtt-po-signal", `${k} ${v}`));
  for (const [k, v] of Object.entries(r.facts || {})) V.route.append(el("span", "ragtt-po-fact", `${k} ${v}`));
  V.route.append(el("span", "ragtt-po-reason", r.reason));
}

/** One box per region on the page, smaller ones on top; retrieved ones with their rank.
 * @param {View} V @param {number} page @param {number} s */
function drawRegions(V, page, s) {
  const d = V.d;
  V.layer.replaceChildren();
  const selected = new Set(V.model.get("selected"));
  const items = [];
  for (let i = 0; i < d.rPage.length; i++) {
    if (d.rPage[i] !== page) continue;
    const [x0, y0, x1, y1] = d.rBox.subarray(4 * i, 4 * i + 4);
    items.push({ c: d.rChunk[i], x0, y0, x1, y1, area: (x1 - x0) * (y1 - y0) });
  }
  items.sort((a, b) => b.area - a.area);  // smaller boxes last: on top, so they stay clickable
  for (const it of items) {
    const box = el("div", "ragtt-region ragtt-chunk");
    const id = d.chunks.ids[it.c];
    box.dataset.chunkId = id;
    Object.assign(box.style, { left: `${it.x0 * s}px`, top: `${it.y0 * s}px`,
      width: `${Math.max(2, (it.x1 - it.x0) * s)}px`, height: `${Math.max(2, (it.y1 - it.y0) * s)}px` });
    const rank = d.rank[it.c];
    if (rank) {
      box.classList.add("ragtt-retrieved");
      box.dataset.rank = String(rank);
      box.append(el("span", "ragtt-po-rank", `#${rank}`));
      box.style.setProperty("--ragtt-rank-alpha", String(Math.max(0.15, 0.45 - 0.05 * (rank - 1))));
    }
    if (selected.has(id)) box.classList.add("ragtt-selected");
    box.addEventListener("pointerenter", (e) => showHover(V, it.c, e));
    box.addEventListener("pointermove", (e) => placeHover(V, e));
    box.addEventListener("pointerleave", () => { V.hover.hidden = true; });
    box.addEventListener("click", (e) => choose(V, id, e.shiftKey));
    V.layer.append(box);
  }
}

/** A chunk as the shared card. @param {View} V @param {number} c @param {"li" | "div"} tag */
function card(V, c, tag) {
  const d = V.d;
  /** @type {Array<[string, string]>} */
  const meta = d.rank[c] ? [["ragtt-rank", `#${d.rank[c]}`], ["ragtt-score", d.score[c].toFixed(4)]] : [];
  meta.push(["ragtt-po-id", d.chunks.ids[c]]);
  return chunkCard({ id: d.chunks.ids[c], text: d.chunks.text[c], meta, terms: d.terms, tag });
}

/** @param {View} V @param {number} c @param {PointerEvent} e */
function showHover(V, c, e) {
  V.hover.replaceChildren(card(V, c, "div"));
  V.hover.hidden = false;
  placeHover(V, e);
}

/** @param {View} V @param {PointerEvent} e */
function placeHover(V, e) {
  const r = V.root.getBoundingClientRect();
  V.hover.style.left = `${Math.max(0, Math.min(e.clientX - r.left + 14, r.width - 340))}px`;
  V.hover.style.top = `${e.clientY - r.top + 14}px`;
}

/** @param {View} V @param {string} id @param {boolean} additive */
function choose(V, id, additive) {
  const now = V.model.get("selected");
  const sel = additive ? new Set(now) : new Set();
  if (additive && sel.has(id)) sel.delete(id); else sel.add(id);
  if (!additive && now.length === 1 && now[0] === id) sel.delete(id);
  V.model.set("selected", [...sel]);
  V.model.save_changes();
}

/** @param {View} V */
function showSelection(V) {
  const d = V.d, sel = V.model.get("selected");
  V.status.textContent = `${sel.length} selected`;
  for (const box of /** @type {HTMLElement[]} */ ([...V.layer.children])) {
    box.classList.toggle("ragtt-selected", sel.includes(box.dataset.chunkId));
  }
  const index = new Map(d.chunks.ids.map((/** @type {string} */ id, /** @type {number} */ i) => [id, i]));
  V.list.replaceChildren(...sel.filter((/** @type {string} */ id) => index.has(id))
    .map((/** @type {string} */ id) => card(V, index.get(id), "li")));
}

/** @param {View} V */
function showHead(V) {
  const d = V.d, q = d.query;
  V.title.textContent = d.source;
  V.queryText.textContent = q
    ? `query ${q.query_id} (${versionLabel(q.version, d.labels)}): ${q.text} · ${q.on_this_document} of ${q.retrieved} `
      + "retrieved chunks in this document"
    : "";
}

// -- navigation -----------------------------------------------------------------------------

/** @param {View} V @param {number} page */
function go(V, page) {
  const next = Math.max(1, Math.min(V.d.page_count, page));
  if (next === V.model.get("page")) return;
  V.shownAt = performance.now();
  V.model.set("page", next);
  V.model.save_changes();
  show(V);
}

/** @param {View} V @param {number} s */
function setScale(V, s) {
  V.model.set("scale", s);
  V.model.save_changes();
  show(V);
}

/** @param {View} V @param {number} f */
function zoomBy(V, f) { setScale(V, Math.min(SCALE.max, Math.max(SCALE.min, scaleFor(V, V.model.get("page")) * f))); }

/** @param {import("./types.js").RenderProps} props */
function render({ model, el: host }) {
  const V = createView(model);
  host.append(V.root);
  buildControls(V);
  const onPage = () => show(V);
  const onSelected = () => showSelection(V);
  const onPages = () => { if (!V.urls.has(model.get("page"))) show(V); };
  const onData = () => { V.d = decode(model.get("_data")); showHead(V); show(V); showSelection(V); };
  const onMsg = (/** @type {any} */ msg, /** @type {unknown[]} */ buffers) => onPageMessage(V, msg, buffers);
  const events = /** @type {Array<[string, (...args: any[]) => void]>} */ ([["change:page", onPage],
    ["change:scale", onPage], ["change:selected", onSelected], ["change:_pages", onPages], ["change:_data", onData],
    ["msg:custom", onMsg]]);
  for (const [name, fn] of events) model.on(name, fn);
  let lastW = -1;
  const resize = new ResizeObserver(() => {
    const now = V.viewport.clientWidth;
    if (now && now !== lastW && model.get("scale") === 0) { lastW = now; show(V); }
  });
  resize.observe(V.viewport);
  showHead(V);
  show(V);
  showSelection(V);
  return () => {
    resize.disconnect();
    for (const t of V.waiting.values()) clearTimeout(t);
    for (const u of V.urls.values()) URL.revokeObjectURL(u);
    for (const [name, fn] of events) model.off(name, fn);
  };
}

export default { render };
