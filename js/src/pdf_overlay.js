// ragtt PdfOverlay: a rendered PDF page with the chunks' regions over it, the page's route,
// and a query's retrieved chunks by rank. Self-contained ES module (anywidget).
// Pages are PNG bytes: embedded in the state, or asked of the kernel (model.send) on demand.
// Untrusted text (chunk text, source, query, route reasons) reaches the DOM only as text.

const FETCH_WAIT_MS = 4000;   // how long a page request may go unanswered before the notice

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

/** Bytes of an embedded or received PNG, whatever shape the manager hands them in. */
function pngBytes(v) {
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  throw new Error("ragtt: a page image is not binary data");
}

function decode(data) {
  return {
    ...data,
    sizes: typed(data.page_sizes),
    rank: typed(data.chunks.rank), score: typed(data.chunks.score),
    rPage: typed(data.regions.page), rBox: typed(data.regions.box), rChunk: typed(data.regions.chunk),
  };
}

function render({ model, el: host }) {
  let d = decode(model.get("_data"));
  const urls = new Map();        // page -> object URL of its PNG (the cache that makes switching fast)
  const waiting = new Map();     // page -> timeout id of an unanswered request
  let shownAt = 0;

  const root = el("div", "ragtt-pdf-overlay");
  root.tabIndex = 0;
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", "ragtt PDF overlay: arrow keys turn pages");
  const head = el("div", "ragtt-po-head");
  const title = el("span", "ragtt-po-title");
  const queryText = el("span", "ragtt-po-query");
  head.append(title, queryText);

  const controls = el("div", "ragtt-po-controls");
  const button = (label, aria, fn) => {
    const b = el("button", "ragtt-po-btn", label);
    b.type = "button";
    b.setAttribute("aria-label", aria);
    b.addEventListener("click", fn);
    controls.append(b);
    return b;
  };
  button("◀", "previous page", () => go(model.get("page") - 1));
  const where = el("span", "ragtt-po-where");
  controls.append(where);
  button("▶", "next page", () => go(model.get("page") + 1));
  button("−", "zoom out", () => zoomBy(1 / 1.25));
  button("Fit", "fit to width", () => setScale(0));
  button("+", "zoom in", () => zoomBy(1.25));
  const status = el("span", "ragtt-po-status");
  controls.append(status);

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
  const hover = el("div", "ragtt-po-hover ragtt-chunk");
  hover.hidden = true;
  const list = el("ol", "ragtt-po-list");
  root.append(head, controls, route, viewport, hover, list);
  host.append(root);

  // -- pages -----------------------------------------------------------------------------------
  function urlFor(page) {
    if (urls.has(page)) return urls.get(page);
    const embedded = model.get("_pages")[String(page)];
    if (!embedded) return null;
    const url = URL.createObjectURL(new Blob([pngBytes(embedded.png)], { type: "image/png" }));
    urls.set(page, url);
    return url;
  }

  function request(page) {
    if (waiting.has(page)) return;
    model.send({ type: "page", page });
    waiting.set(page, setTimeout(() => {
      waiting.delete(page);
      if (model.get("page") !== page || urls.has(page)) return;
      const capped = d.left_out.includes(page);
      notice.textContent = capped
        ? `Page ${page} is not embedded: the report's page images passed the ${(d.embed_limit / 1e6).toFixed(0)} MB cap `
          + "(PdfOverlay(..., embed_limit=...)). Open the notebook with a kernel to see it."
        : `Page ${page} is not embedded in this view and no kernel answered.`;
      notice.hidden = false;
    }, FETCH_WAIT_MS));
  }

  const onMsg = (msg, buffers) => {
    if (!msg || msg.type !== "page") return;
    clearTimeout(waiting.get(msg.page));
    waiting.delete(msg.page);
    if (msg.error || !buffers || !buffers.length) {
      if (msg.page === model.get("page")) { notice.textContent = `Page ${msg.page}: ${msg.error || "no image"}`; notice.hidden = false; }
      return;
    }
    urls.set(msg.page, URL.createObjectURL(new Blob([pngBytes(buffers[0])], { type: "image/png" })));
    if (msg.page === model.get("page")) show();
  };

  // -- layout ----------------------------------------------------------------------------------
  const pageSize = (page) => [d.sizes[2 * (page - 1)], d.sizes[2 * (page - 1) + 1]];
  function scaleFor(page) {
    const s = model.get("scale");
    if (s > 0) return s;
    const [pw] = pageSize(page);
    const avail = Math.max(200, (viewport.clientWidth || 800) - 4);
    return Math.min(avail, 1000) / pw;
  }

  function show() {
    const started = performance.now();
    const page = model.get("page");
    const [pw, ph] = pageSize(page);
    const s = scaleFor(page);
    pageBox.style.width = `${pw * s}px`;
    pageBox.style.height = `${ph * s}px`;
    img.style.width = `${pw * s}px`;
    img.style.height = `${ph * s}px`;
    where.textContent = `page ${page} of ${d.page_count}`;
    showRoute(page);
    drawRegions(page, s);
    const url = urlFor(page);
    notice.hidden = true;
    if (url) {
      if (img.getAttribute("src") !== url) img.src = url;
      img.hidden = false;
      const done = () => {
        root.dataset.page = String(page);
        root.dataset.pageMs = (performance.now() - (shownAt || started)).toFixed(1);
        shownAt = 0;
      };
      img.decode().then(done, done);
    } else {
      img.hidden = true;
      img.removeAttribute("src");
      notice.textContent = `Loading page ${page}…`;
      notice.hidden = false;
      request(page);
    }
    // warm the neighbours' object URLs so turning a page needs no Blob work
    for (const n of [page - 1, page + 1]) if (n >= 1 && n <= d.page_count) urlFor(n);
  }

  function showRoute(page) {
    route.replaceChildren();
    const r = d.routes.find((x) => x.page === page);
    if (!r) { route.append(el("span", "ragtt-po-engine", "no route recorded for this page")); return; }
    const badge = el("span", `ragtt-po-engine ragtt-po-engine-${String(r.engine).replace(/[^a-z0-9_-]/gi, "")}`, r.engine);
    route.append(badge);
    for (const [k, v] of Object.entries(r.signals)) route.append(el("span", "ragtt-po-signal", `${k} ${v}`));
    for (const [k, v] of Object.entries(r.facts || {})) route.append(el("span", "ragtt-po-fact", `${k} ${v}`));
    route.append(el("span", "ragtt-po-reason", r.reason));
  }

  function drawRegions(page, s) {
    layer.replaceChildren();
    const selected = new Set(model.get("selected"));
    const items = [];
    for (let i = 0; i < d.rPage.length; i++) {
      if (d.rPage[i] !== page) continue;
      const [x0, y0, x1, y1] = d.rBox.subarray(4 * i, 4 * i + 4);
      items.push({ i, c: d.rChunk[i], x0, y0, x1, y1, area: (x1 - x0) * (y1 - y0) });
    }
    items.sort((a, b) => b.area - a.area);  // smaller boxes last: on top, so they stay clickable
    for (const it of items) {
      const box = el("div", "ragtt-region ragtt-chunk");
      const id = d.chunks.ids[it.c];
      box.dataset.chunkId = id;
      box.style.left = `${it.x0 * s}px`;
      box.style.top = `${it.y0 * s}px`;
      box.style.width = `${Math.max(2, (it.x1 - it.x0) * s)}px`;
      box.style.height = `${Math.max(2, (it.y1 - it.y0) * s)}px`;
      const rank = d.rank[it.c];
      if (rank) {
        box.classList.add("ragtt-retrieved");
        box.dataset.rank = String(rank);
        box.append(el("span", "ragtt-po-rank", `#${rank}`));
        box.style.setProperty("--ragtt-rank-alpha", String(Math.max(0.15, 0.45 - 0.05 * (rank - 1))));
      }
      if (selected.has(id)) box.classList.add("ragtt-selected");
      box.addEventListener("pointerenter", (e) => showHover(it.c, e));
      box.addEventListener("pointermove", (e) => placeHover(e));
      box.addEventListener("pointerleave", () => { hover.hidden = true; });
      box.addEventListener("click", (e) => choose(id, e.shiftKey));
      layer.append(box);
    }
  }

  function chunkBody(c, node) {
    const meta = el("div", "ragtt-chunk-meta");
    if (d.rank[c]) meta.append(el("span", "ragtt-rank", `#${d.rank[c]}`), el("span", "ragtt-score", d.score[c].toFixed(4)));
    meta.append(el("span", "ragtt-po-id", d.chunks.ids[c]));
    node.replaceChildren(meta, el("div", "ragtt-chunk-text", d.chunks.text[c]));
  }
  function showHover(c, e) {
    chunkBody(c, hover);
    hover.dataset.chunkId = d.chunks.ids[c];
    hover.hidden = false;
    placeHover(e);
  }
  function placeHover(e) {
    const r = root.getBoundingClientRect();
    hover.style.left = `${Math.min(e.clientX - r.left + 14, r.width - 330)}px`;
    hover.style.top = `${e.clientY - r.top + 14}px`;
  }

  function choose(id, additive) {
    const sel = additive ? new Set(model.get("selected")) : new Set();
    if (additive && sel.has(id)) sel.delete(id); else sel.add(id);
    if (!additive && model.get("selected").length === 1 && model.get("selected")[0] === id) sel.delete(id);
    model.set("selected", [...sel]);
    model.save_changes();
  }

  function showSelection() {
    const sel = model.get("selected");
    status.textContent = `${sel.length} selected`;
    for (const box of layer.children) box.classList.toggle("ragtt-selected", sel.includes(box.dataset.chunkId));
    list.replaceChildren();
    const index = new Map(d.chunks.ids.map((id, i) => [id, i]));
    for (const id of sel) {
      const c = index.get(id);
      if (c === undefined) continue;
      const li = el("li", "ragtt-chunk");
      li.dataset.chunkId = id;
      chunkBody(c, li);
      list.append(li);
    }
  }

  function showHead() {
    title.textContent = d.source;
    queryText.textContent = d.query
      ? `query ${d.query.query_id} (v${d.query.version}): ${d.query.text} · ${d.query.on_this_document} of ${d.query.retrieved} retrieved chunks in this document`
      : "";
  }

  // -- navigation ------------------------------------------------------------------------------
  function go(page) {
    const next = Math.max(1, Math.min(d.page_count, page));
    if (next === model.get("page")) return;
    shownAt = performance.now();
    model.set("page", next);
    model.save_changes();
    show();
  }
  function setScale(s) {
    model.set("scale", s);
    model.save_changes();
    show();
  }
  function zoomBy(f) { setScale(Math.min(8, Math.max(0.2, scaleFor(model.get("page")) * f))); }

  root.addEventListener("keydown", (e) => {
    const moves = { ArrowLeft: -1, ArrowRight: 1, PageUp: -1, PageDown: 1 };
    if (e.key in moves) { e.preventDefault(); e.stopPropagation(); go(model.get("page") + moves[e.key]); }
    else if (e.key === "Home" || e.key === "End") { e.preventDefault(); e.stopPropagation(); go(e.key === "Home" ? 1 : d.page_count); }
  });

  const onPage = () => show();
  const onSelected = () => showSelection();
  const onPages = () => { if (!urls.has(model.get("page"))) show(); };
  const onData = () => { d = decode(model.get("_data")); showHead(); show(); showSelection(); };
  model.on("change:page", onPage);
  model.on("change:scale", onPage);
  model.on("change:selected", onSelected);
  model.on("change:_pages", onPages);
  model.on("change:_data", onData);
  model.on("msg:custom", onMsg);

  let lastW = -1;
  const resize = new ResizeObserver(() => {
    const now = viewport.clientWidth;
    if (now && now !== lastW && model.get("scale") === 0) { lastW = now; show(); }
  });
  resize.observe(viewport);

  showHead();
  show();
  showSelection();

  return () => {
    resize.disconnect();
    for (const t of waiting.values()) clearTimeout(t);
    for (const u of urls.values()) URL.revokeObjectURL(u);
    model.off("change:page", onPage);
    model.off("change:scale", onPage);
    model.off("change:selected", onSelected);
    model.off("change:_pages", onPages);
    model.off("change:_data", onData);
    model.off("msg:custom", onMsg);
  };
}

export default { render };
