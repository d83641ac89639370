// Generated from js/src/pdf_overlay.js by js/build.mjs (./dev build): edit the sources, not this file.

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
function reveal(card2) {
  const body = (
    /** @type {HTMLElement | null} */
    card2.querySelector(".ragtt-chunk-text")
  );
  const toggle = (
    /** @type {HTMLElement | null} */
    card2.querySelector(".ragtt-card-toggle")
  );
  if (!body || !toggle) return;
  const expanded = card2.classList.contains("ragtt-expanded");
  const idx = Number(card2.dataset.best);
  const target = idx >= 0 ? (
    /** @type {HTMLElement | undefined} */
    body.children[idx]
  ) : void 0;
  body.scrollTop = !expanded && target ? Math.max(0, target.offsetTop - 2) : 0;
  toggle.hidden = !expanded && body.scrollHeight <= body.clientHeight + 1;
}
function chunkCard(spec) {
  const card2 = el(spec.tag || "li", `ragtt-chunk${spec.cls ? ` ${spec.cls}` : ""}`);
  card2.dataset.chunkId = spec.id;
  const meta = el("div", "ragtt-chunk-meta");
  for (const [cls, text] of spec.meta || []) meta.append(el("span", cls, text));
  if (spec.source !== void 0) meta.append(el("span", "ragtt-source", spec.source));
  for (const b of spec.badges || []) meta.append(el("span", `ragtt-badge ragtt-badge-${b.replace(/[^a-z0-9-]/gi, "")}`, b));
  const open = card2.classList.contains("ragtt-expanded");
  const toggle = el("button", "ragtt-card-toggle", open ? "less" : "more");
  toggle.type = "button";
  toggle.setAttribute("aria-expanded", String(open));
  toggle.addEventListener("click", (e) => {
    e.stopPropagation();
    const open2 = card2.classList.toggle("ragtt-expanded");
    toggle.textContent = open2 ? "less" : "more";
    toggle.setAttribute("aria-expanded", String(open2));
    reveal(card2);
  });
  meta.append(toggle);
  const body = el("div", "ragtt-chunk-text");
  const { index } = fillBody(body, spec, spec.terms || []);
  card2.dataset.best = String(index);
  card2.append(meta, body);
  requestAnimationFrame(() => {
    if (card2.isConnected) reveal(card2);
  });
  return card2;
}

// js/src/pdf_overlay.js
var FETCH_WAIT_MS = 4e3;
function pngBytes(v) {
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return (
    /** @type {BlobPart} */
    new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
  );
  throw new Error("ragtt: a page image is not binary data");
}
function decode(data) {
  return {
    ...data,
    sizes: typed(data.page_sizes),
    rank: typed(data.chunks.rank),
    score: typed(data.chunks.score),
    rPage: typed(data.regions.page),
    rBox: typed(data.regions.box),
    rChunk: typed(data.regions.chunk),
    terms: queryTerms(data.query && data.query.text)
  };
}
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
    model,
    d: decode(model.get("_data")),
    root,
    title,
    queryText,
    controls,
    route,
    viewport,
    pageBox,
    img,
    layer,
    notice,
    hover,
    list,
    where: el("span", "ragtt-po-where"),
    status: el("span", "ragtt-po-status"),
    /** @type {Map<number, string>} */
    urls: /* @__PURE__ */ new Map(),
    // page -> object URL of its PNG (switching fast)
    /** @type {Map<number, ReturnType<typeof setTimeout>>} */
    waiting: /* @__PURE__ */ new Map(),
    // unanswered requests
    shownAt: 0
  };
}
function buildControls(V) {
  const m = V.model;
  const add = (label, aria, fn) => V.controls.append(button("ragtt-po-btn", label, aria, fn));
  add("◀", "previous page", () => go(V, m.get("page") - 1));
  V.controls.append(V.where);
  add("▶", "next page", () => go(V, m.get("page") + 1));
  add("−", "zoom out", () => zoomBy(V, 1 / 1.25));
  add("Fit", "fit to width", () => setScale(V, 0));
  add("+", "zoom in", () => zoomBy(V, 1.25));
  V.controls.append(V.status);
  V.root.addEventListener("keydown", (e) => {
    const moves = { ArrowLeft: -1, ArrowRight: 1, PageUp: -1, PageDown: 1 };
    if (e.key in moves) {
      e.preventDefault();
      e.stopPropagation();
      go(V, m.get("page") + moves[e.key]);
    } else if (e.key === "Home" || e.key === "End") {
      e.preventDefault();
      e.stopPropagation();
      go(V, e.key === "Home" ? 1 : V.d.page_count);
    }
  });
}
function urlFor(V, page) {
  const known = V.urls.get(page);
  if (known) return known;
  const embedded = V.model.get("_pages")[String(page)];
  if (!embedded) return null;
  const url = URL.createObjectURL(new Blob([pngBytes(embedded.png)], { type: "image/png" }));
  V.urls.set(page, url);
  return url;
}
function request(V, page) {
  if (V.waiting.has(page)) return;
  V.model.send({ type: "page", page });
  V.waiting.set(page, setTimeout(() => {
    V.waiting.delete(page);
    if (V.model.get("page") !== page || V.urls.has(page)) return;
    const d = V.d;
    V.notice.textContent = d.left_out.includes(page) ? `Page ${page} is not embedded: the report's page images passed the ${(d.embed_limit / 1e6).toFixed(0)} MB cap (PdfOverlay(..., embed_limit=...)). Open the notebook with a kernel to see it.` : `Page ${page} is not embedded in this view and no kernel answered.`;
    V.notice.hidden = false;
  }, FETCH_WAIT_MS));
}
function onPageMessage(V, msg, buffers) {
  if (!msg || msg.type !== "page") return;
  clearTimeout(V.waiting.get(msg.page));
  V.waiting.delete(msg.page);
  if (msg.error || !buffers || !buffers.length) {
    if (msg.page === V.model.get("page")) {
      V.notice.textContent = `Page ${msg.page}: ${msg.error || "no image"}`;
      V.notice.hidden = false;
    }
    return;
  }
  V.urls.set(msg.page, URL.createObjectURL(new Blob([pngBytes(buffers[0])], { type: "image/png" })));
  if (msg.page === V.model.get("page")) show(V);
}
var pageSize = (V, page) => [V.d.sizes[2 * (page - 1)], V.d.sizes[2 * (page - 1) + 1]];
function scaleFor(V, page) {
  const s = V.model.get("scale");
  if (s > 0) return s;
  const avail = Math.max(200, (V.viewport.clientWidth || 800) - 4);
  return Math.min(avail, 1e3) / pageSize(V, page)[0];
}
function show(V) {
  const started = performance.now();
  const page = V.model.get("page");
  const [pw, ph] = pageSize(V, page);
  const s = scaleFor(V, page);
  for (const node of [V.pageBox, V.img]) {
    node.style.width = `${pw * s}px`;
    node.style.height = `${ph * s}px`;
  }
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
  for (const n of [page - 1, page + 1]) if (n >= 1 && n <= V.d.page_count) urlFor(V, n);
}
function showRoute(V, page) {
  V.route.replaceChildren();
  const r = V.d.routes.find((x) => x.page === page);
  if (!r) {
    V.route.append(el("span", "ragtt-po-engine", "no route recorded for this page"));
    return;
  }
  V.route.append(el("span", `ragtt-po-engine ragtt-po-engine-${String(r.engine).replace(/[^a-z0-9_-]/gi, "")}`, r.engine));
  for (const [k, v] of Object.entries(r.signals)) V.route.append(el("span", "ragtt-po-signal", `${k} ${v}`));
  for (const [k, v] of Object.entries(r.facts || {})) V.route.append(el("span", "ragtt-po-fact", `${k} ${v}`));
  V.route.append(el("span", "ragtt-po-reason", r.reason));
}
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
  items.sort((a, b) => b.area - a.area);
  for (const it of items) {
    const box = el("div", "ragtt-region ragtt-chunk");
    const id = d.chunks.ids[it.c];
    box.dataset.chunkId = id;
    Object.assign(box.style, {
      left: `${it.x0 * s}px`,
      top: `${it.y0 * s}px`,
      width: `${Math.max(2, (it.x1 - it.x0) * s)}px`,
      height: `${Math.max(2, (it.y1 - it.y0) * s)}px`
    });
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
    box.addEventListener("pointerleave", () => {
      V.hover.hidden = true;
    });
    box.addEventListener("click", (e) => choose(V, id, e.shiftKey));
    V.layer.append(box);
  }
}
function card(V, c, tag) {
  const d = V.d;
  const meta = d.rank[c] ? [["ragtt-rank", `#${d.rank[c]}`], ["ragtt-score", d.score[c].toFixed(4)]] : [];
  meta.push(["ragtt-po-id", d.chunks.ids[c]]);
  return chunkCard({ id: d.chunks.ids[c], text: d.chunks.text[c], meta, terms: d.terms, tag });
}
function showHover(V, c, e) {
  V.hover.replaceChildren(card(V, c, "div"));
  V.hover.hidden = false;
  placeHover(V, e);
}
function placeHover(V, e) {
  const r = V.root.getBoundingClientRect();
  V.hover.style.left = `${Math.max(0, Math.min(e.clientX - r.left + 14, r.width - 340))}px`;
  V.hover.style.top = `${e.clientY - r.top + 14}px`;
}
function choose(V, id, additive) {
  const now = V.model.get("selected");
  const sel = additive ? new Set(now) : /* @__PURE__ */ new Set();
  if (additive && sel.has(id)) sel.delete(id);
  else sel.add(id);
  if (!additive && now.length === 1 && now[0] === id) sel.delete(id);
  V.model.set("selected", [...sel]);
  V.model.save_changes();
}
function showSelection(V) {
  const d = V.d, sel = V.model.get("selected");
  V.status.textContent = `${sel.length} selected`;
  for (
    const box of
    /** @type {HTMLElement[]} */
    [...V.layer.children]
  ) {
    box.classList.toggle("ragtt-selected", sel.includes(box.dataset.chunkId));
  }
  const index = new Map(d.chunks.ids.map((id, i) => [id, i]));
  V.list.replaceChildren(...sel.filter((id) => index.has(id)).map((id) => card(V, index.get(id), "li")));
}
function showHead(V) {
  const d = V.d, q = d.query;
  V.title.textContent = d.source;
  V.queryText.textContent = q ? `query ${q.query_id} (${versionLabel(q.version, d.labels)}): ${q.text} · ${q.on_this_document} of ${q.retrieved} retrieved chunks in this document` : "";
}
function go(V, page) {
  const next = Math.max(1, Math.min(V.d.page_count, page));
  if (next === V.model.get("page")) return;
  V.shownAt = performance.now();
  V.model.set("page", next);
  V.model.save_changes();
  show(V);
}
function setScale(V, s) {
  V.model.set("scale", s);
  V.model.save_changes();
  show(V);
}
function zoomBy(V, f) {
  setScale(V, Math.min(8, Math.max(0.2, scaleFor(V, V.model.get("page")) * f)));
}
function render({ model, el: host }) {
  const V = createView(model);
  host.append(V.root);
  buildControls(V);
  const onPage = () => show(V);
  const onSelected = () => showSelection(V);
  const onPages = () => {
    if (!V.urls.has(model.get("page"))) show(V);
  };
  const onData = () => {
    V.d = decode(model.get("_data"));
    showHead(V);
    show(V);
    showSelection(V);
  };
  const onMsg = (msg, buffers) => onPageMessage(V, msg, buffers);
  const events = (
    /** @type {Array<[string, (...args: any[]) => void]>} */
    [
      ["change:page", onPage],
      ["change:scale", onPage],
      ["change:selected", onSelected],
      ["change:_pages", onPages],
      ["change:_data", onData],
      ["msg:custom", onMsg]
    ]
  );
  for (const [name, fn] of events) model.on(name, fn);
  let lastW = -1;
  const resize = new ResizeObserver(() => {
    const now = V.viewport.clientWidth;
    if (now && now !== lastW && model.get("scale") === 0) {
      lastW = now;
      show(V);
    }
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
var pdf_overlay_default = { render };
export {
  pdf_overlay_default as default
};
