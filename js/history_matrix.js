// Generated from js/src/history_matrix.js by js/build.mjs (./dev build): edit the sources, not this file.

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
function joinBuffers(value, buffers) {
  if (Array.isArray(value)) return value.map((v) => joinBuffers(v, buffers));
  if (value === null || typeof value !== "object") return value;
  if (typeof value.$ref === "number" && Object.keys(value).length === 1) return buffers[value.$ref];
  const out = {};
  for (const [k, v] of Object.entries(value)) out[k] = joinBuffers(v, buffers);
  return out;
}

// js/src/labels.js
var SEPARATORS = "-_ ./:@";
var LABEL_GAP = 6;
function versionLabel(version, names) {
  const name = names && names[String(version)];
  return name ? `${name} (v${version})` : `v${version}`;
}
function slotText(version, names, shortOf) {
  const name = names[String(version)];
  return name ? shortOf.get(name) || name : `v${version}`;
}
function distinguishing(labels) {
  if (labels.length < 2) return [...labels];
  let pre = commonPrefix(labels);
  pre = cutAt(pre, (p) => SEPARATORS.includes(p[p.length - 1]), (p) => p.slice(0, -1));
  const rest = labels.map((l) => l.slice(pre.length));
  const rev = rest.map((l) => [...l].reverse().join(""));
  let suf = commonPrefix(rev);
  suf = cutAt(suf, (s) => SEPARATORS.includes(s[s.length - 1]), (s) => s.slice(0, -1));
  const out = rest.map((l) => l.slice(0, l.length - suf.length));
  return out.some((l) => !l) ? [...labels] : out;
}
function commonPrefix(xs) {
  let p = xs[0];
  for (const x of xs) while (!x.startsWith(p)) p = p.slice(0, -1);
  return p;
}
function cutAt(s, ok, step) {
  while (s && !ok(s)) s = step(s);
  return s;
}
function placeLabels(g, marks, left, right, first = null) {
  const sorted = [...marks].sort((a, b) => a.x - b.x);
  const minW = g.measureText("ab…").width;
  const boxes = [];
  let held = null;
  if (first) {
    const w = g.measureText(first.text).width;
    const x0 = first.x + 4 + w <= right ? first.x + 4 : Math.max(left, first.x - 4 - w);
    held = { x0, x1: x0 + w, text: first.text, mark: first };
  }
  let prevRight = -Infinity;
  sorted.forEach((m, k) => {
    if (m === first) return;
    const before = held && m.x < held.x0;
    const floor = Math.max(left, prevRight + LABEL_GAP, held && !before ? held.x1 + LABEL_GAP : -Infinity);
    const limit = Math.min(
      right,
      k + 1 < sorted.length ? sorted[k + 1].x - 3 : Infinity,
      held && before ? held.x0 - LABEL_GAP : Infinity
    );
    const full = g.measureText(m.text).width;
    const rightRoom = m.x + 4 >= floor ? limit - (m.x + 4) : -1;
    const leftRoom = m.x - 4 - floor;
    let side, room;
    if (full <= rightRoom) {
      side = "right";
      room = full;
    } else if (full <= leftRoom) {
      side = "left";
      room = full;
    } else if (Math.max(rightRoom, leftRoom) >= minW) {
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
  if (held) boxes.push(held);
  return boxes.sort((a, b) => a.x0 - b.x0);
}

// js/src/model_shim.js
function unwire(value) {
  if (Array.isArray(value)) return value.map(unwire);
  if (value === null || typeof value !== "object") return value;
  if (typeof value.$buffer === "string") {
    const raw = atob(value.$buffer);
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes.buffer;
  }
  const out = {};
  for (const [k, v] of Object.entries(value)) out[k] = unwire(v);
  return out;
}
function createModel(state, hooks) {
  const values = { ...state };
  const listeners = /* @__PURE__ */ new Map();
  const dirty = /* @__PURE__ */ new Set();
  const emit = (event, ...args) => {
    for (const fn of [...listeners.get(event) || []]) fn(...args);
  };
  return {
    get: (name) => values[name],
    set: (name, value) => {
      values[name] = value;
      dirty.add(name);
      emit(`change:${name}`, value);
    },
    on: (event, fn) => {
      if (!listeners.has(event)) listeners.set(event, /* @__PURE__ */ new Set());
      listeners.get(event)?.add(fn);
    },
    off: (event, fn) => {
      if (fn) listeners.get(event)?.delete(fn);
      else listeners.delete(event);
    },
    save_changes: () => {
      const changed = {};
      for (const name of dirty) changed[name] = values[name];
      dirty.clear();
      if (hooks.onSave) hooks.onSave(changed);
    },
    send: (content) => {
      hooks.reply(content).then(
        (replies) => {
          for (const r of replies) emit("msg:custom", unwire(r.content), unwire(r.buffers || []));
        },
        (err) => console.warn("ragtt: a widget message got no answer:", err)
      );
    }
  };
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
  const toggle2 = (
    /** @type {HTMLElement | null} */
    card.querySelector(".ragtt-card-toggle")
  );
  if (!body || !toggle2) return;
  const expanded = card.classList.contains("ragtt-expanded");
  const idx = Number(card.dataset.best);
  const target = idx >= 0 ? (
    /** @type {HTMLElement | undefined} */
    body.children[idx]
  ) : void 0;
  body.scrollTop = !expanded && target ? Math.max(0, target.offsetTop - 2) : 0;
  toggle2.hidden = !expanded && body.scrollHeight <= body.clientHeight + 1;
}
function chunkCard(spec) {
  const card = el(spec.tag || "li", `ragtt-chunk${spec.cls ? ` ${spec.cls}` : ""}`);
  card.dataset.chunkId = spec.id;
  const meta = el("div", "ragtt-chunk-meta");
  for (const [cls, text] of spec.meta || []) meta.append(el("span", cls, text));
  if (spec.source !== void 0) meta.append(el("span", "ragtt-source", spec.source));
  for (const b of spec.badges || []) meta.append(el("span", `ragtt-badge ragtt-badge-${b.replace(/[^a-z0-9-]/gi, "")}`, b));
  const open = card.classList.contains("ragtt-expanded");
  const toggle2 = el("button", "ragtt-card-toggle", open ? "less" : "more");
  toggle2.type = "button";
  toggle2.setAttribute("aria-expanded", String(open));
  toggle2.addEventListener("click", (e) => {
    e.stopPropagation();
    const open2 = card.classList.toggle("ragtt-expanded");
    toggle2.textContent = open2 ? "less" : "more";
    toggle2.setAttribute("aria-expanded", String(open2));
    reveal(card);
  });
  meta.append(toggle2);
  const body = el("div", "ragtt-chunk-text");
  const { index } = fillBody(body, spec, spec.terms || []);
  card.dataset.best = String(index);
  card.append(meta, body);
  requestAnimationFrame(() => {
    if (card.isConnected) reveal(card);
  });
  return card;
}

// js/src/chunk_diff.js
var OPS = { e: "equal", d: "delete", i: "insert" };
var fmt = (x) => Number.isFinite(x) ? x.toFixed(4) : "";
var signed = (x) => (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(4);
function decode(d) {
  const c = d.chunks;
  const [rl, rr, sl, sr] = [typed(c.rank_left), typed(c.rank_right), typed(c.score_left), typed(c.score_right)];
  const chunks = c.ids.map((id, i) => ({
    i,
    id,
    source: c.sources[i],
    text: c.texts[i],
    rankL: rl[i],
    rankR: rr[i],
    scoreL: sl[i],
    scoreR: sr[i],
    state: rl[i] && rr[i] ? "kept" : rl[i] ? "removed" : "added",
    pair: null
  }));
  const pl = typed(d.pairs.left), pr = typed(d.pairs.right), sim = typed(d.pairs.similarity);
  const pairs = [];
  for (let k = 0; k < pl.length; k++) {
    const runs = (
      /** @type {Array<[string, string]>} */
      [...d.pairs.ops[k]].map((op, j) => [OPS[
        /** @type {"e"|"d"|"i"} */
        op
      ], d.pairs.runs[k][j]])
    );
    const pair = { left: chunks[pl[k]], right: chunks[pr[k]], similarity: sim[k], runs };
    for (const ch of [pair.left, pair.right]) {
      ch.state = "changed";
      ch.pair = pair;
    }
    pairs.push(pair);
  }
  return { ...d, chunks, pairs, terms: queryTerms(d.left.query), names: d.labels || {} };
}
function columnCard(d, ch, side, selected) {
  const rank = side === "left" ? ch.rankL : ch.rankR;
  const meta = [["ragtt-rank", `#${rank}`]];
  if (ch.state === "kept" && side === "right") {
    const moved = ch.rankL - ch.rankR;
    meta.push([
      `ragtt-move ${moved > 0 ? "ragtt-up" : moved < 0 ? "ragtt-down" : ""}`,
      moved > 0 ? `▲${moved}` : moved < 0 ? `▼${-moved}` : "="
    ]);
    meta.push(["ragtt-score", `${fmt(ch.scoreR)} (${signed(ch.scoreR - ch.scoreL)})`]);
  } else {
    meta.push(["ragtt-score", fmt(side === "left" ? ch.scoreL : ch.scoreR)]);
  }
  const card = chunkCard({
    id: ch.id,
    text: ch.text,
    source: ch.source,
    meta,
    terms: d.terms,
    badges: ch.state === "kept" ? [] : [ch.state],
    cls: `ragtt-${ch.state}${selected.has(ch.id) ? " ragtt-selected" : ""}`
  });
  card.tabIndex = 0;
  card.setAttribute("role", "button");
  return card;
}
function column(d, side, selected) {
  const run = d[side];
  const col = el("div", `ragtt-cd-col ragtt-cd-${side}`);
  const head = el("div", "ragtt-cd-colhead");
  head.append(
    el("span", "ragtt-cd-when", side === "left" ? "Then" : "Now"),
    el("span", "ragtt-cd-version", `index ${versionLabel(run.version, d.names)}`),
    el("code", "ragtt-cd-id", run.id)
  );
  col.append(head, el("div", "ragtt-cd-query", run.query));
  const ol = el("ol", "ragtt-cd-list");
  const key = side === "left" ? "rankL" : "rankR";
  d.chunks.filter((c) => c[key] > 0).sort((a, b) => a[key] - b[key]).forEach((c) => ol.append(columnCard(d, c, side, selected)));
  col.append(ol);
  if (run.answer !== null && run.answer !== void 0) {
    col.append(el("div", "ragtt-cd-answer-title", "Answer"), el("div", "ragtt-cd-answer", run.answer));
  }
  return col;
}
function pairCard(d, p, selected) {
  const card = chunkCard({
    id: p.right.id,
    text: p.right.text,
    source: p.right.source,
    runs: p.runs,
    terms: d.terms,
    meta: [
      ["ragtt-rank", `#${p.left.rankL} → #${p.right.rankR}`],
      ["ragtt-cd-similarity", `similarity ${p.similarity.toFixed(2)}`]
    ],
    badges: ["changed"],
    tag: "li",
    cls: `ragtt-changed ragtt-cd-pair${selected.has(p.right.id) || selected.has(p.left.id) ? " ragtt-selected" : ""}`
  });
  card.dataset.leftId = p.left.id;
  card.tabIndex = 0;
  card.setAttribute("role", "button");
  return card;
}
function changes(d, selected) {
  const box = el("div", "ragtt-cd-changes");
  if (d.pairs.length) {
    box.append(el("div", "ragtt-cd-section", `Changed passages (${d.pairs.length})`));
    const ol = el("ol", "ragtt-cd-list ragtt-cd-pairs");
    for (const p of d.pairs) ol.append(pairCard(d, p, selected));
    box.append(ol);
  }
  const lone = d.chunks.filter((c) => c.state === "added" || c.state === "removed");
  if (lone.length) {
    box.append(el(
      "div",
      "ragtt-cd-section",
      `No counterpart (${lone.length}): passages that are new in the now run or gone from it`
    ));
    const ul = el("ul", "ragtt-cd-lone");
    for (const c of lone) {
      const side = c.state === "added" ? "now" : "then";
      ul.append(el(
        "li",
        `ragtt-cd-lone-item ragtt-${c.state}`,
        `${c.state} (#${c.state === "added" ? c.rankR : c.rankL} ${side}) ${c.source}: no counterpart`
      ));
    }
    box.append(ul);
  }
  return box;
}
function detail(d, sel, tag = "div") {
  const box = el(tag, "ragtt-cd-detail");
  box.append(el("div", "ragtt-cd-status", `${sel.length} selected`));
  const ch = d.chunks.find((c) => c.id === sel[0]);
  if (!ch) {
    box.append(el("div", "ragtt-cd-hint", "Click a chunk to see how it changed and why."));
    return box;
  }
  if (ch.state === "kept") {
    box.append(el("div", "ragtt-cd-hint", `Kept: rank #${ch.rankL} → #${ch.rankR}, score ${fmt(ch.scoreL)} → ${fmt(ch.scoreR)} (${signed(ch.scoreR - ch.scoreL)}); text unchanged.`));
  } else if (ch.pair) {
    const p = ch.pair;
    box.append(el("div", "ragtt-cd-hint", `Changed passage of ${p.right.source} (similarity ${p.similarity.toFixed(2)}): #${p.left.rankL} at ${versionLabel(d.left.version, d.names)} → #${p.right.rankR} at ${versionLabel(d.right.version, d.names)}`));
    box.append(chunkCard({
      id: p.right.id,
      text: p.right.text,
      runs: p.runs,
      terms: d.terms,
      tag: "div",
      cls: "ragtt-changed ragtt-expanded ragtt-cd-worddiff"
    }));
  } else {
    box.append(el("div", "ragtt-cd-hint", `${ch.state === "added" ? "Added" : "Removed"}: no counterpart from ${ch.source} ${ch.state === "added" ? "then" : "now"} (no passage of it is similar enough to pair).`));
  }
  const reason = d.reasons && (d.reasons[ch.id] || ch.pair && d.reasons[ch.pair.left.id]);
  box.append(el("div", "ragtt-cd-reason", reason ? `Why: ${reason}` : "Why: lineage is not available for this diff."));
  return box;
}
function headline(d) {
  const s = d.summary;
  const head = el("div", "ragtt-cd-head");
  head.append(
    el("span", "ragtt-cd-title", "Chunk diff"),
    el("span", "ragtt-cd-counts", `${s.changed} changed · ${s.added} added · ${s.removed} removed · ${s.kept} kept`),
    el("span", "ragtt-cd-metrics", `RBO ${s.rbo.toFixed(3)} · Jaccard ${s.jaccard.toFixed(3)}` + (s.answer_similarity ? ` · answer cosine ${s.answer_similarity.embedding_cosine.toFixed(3)}` : ""))
  );
  const notes = el("ul", "ragtt-cd-notes");
  for (const n of s.notes || []) notes.append(el("li", "", n));
  const out = [head];
  if (s.warning) out.push(el("div", "ragtt-cd-warning", `⚠ ${s.warning}`));
  out.push(notes);
  return out;
}
function answerDiff(d) {
  const s = d.summary, ops = s.answer_ops || "";
  if (!ops || ![...ops].some((op) => op !== "e")) return [];
  const runs = (
    /** @type {Array<[string, string]>} */
    [...ops].map((op, j) => [OPS[
      /** @type {"e"|"d"|"i"} */
      op
    ], s.answer_runs[j]])
  );
  const box = el("div", "ragtt-cd-answers");
  const made = Object.keys(s.generated || {}).map((side) => side === "left" ? "then" : "now");
  box.append(
    el("div", "ragtt-cd-section", `Answer, then → now${made.length ? ` (the ${made.join(" and ")} answer generated for this diff, logged as a replay)` : ""}`),
    chunkCard({
      id: "answer",
      text: d.right.answer || "",
      runs,
      terms: d.terms,
      tag: "div",
      cls: "ragtt-changed ragtt-expanded ragtt-cd-worddiff ragtt-cd-answer-diff"
    })
  );
  return [box];
}
function draw(root, model, clicked) {
  const d = decode(model.get("_data"));
  const sel = model.get("selected");
  const selected = new Set(sel);
  const cols = el("div", "ragtt-cd-cols");
  cols.append(column(d, "left", selected), column(d, "right", selected));
  const below = changes(d, selected);
  root.replaceChildren(...headline(d), cols, ...answerDiff(d), below);
  const scope = clicked.scope ? root.querySelector(`.${clicked.scope}`) : null;
  const cards = [...(scope || root).querySelectorAll(".ragtt-chunk")].map((c) => (
    /** @type {HTMLElement} */
    c
  ));
  const card = sel.length ? cards.find((c) => c.dataset.chunkId === sel[0] || c.dataset.leftId === sel[0]) : null;
  if (card) {
    const box = detail(d, sel, "li");
    box.classList.add("ragtt-cd-beside");
    card.after(box);
    root.dataset.detailAfter = sel[0];
  } else {
    root.append(detail(d, sel));
    delete root.dataset.detailAfter;
  }
}
function attachSelection(root, model, clicked) {
  const choose = (id, extend) => {
    const sel = model.get("selected");
    const next = extend ? sel.includes(id) ? sel.filter((x) => x !== id) : [...sel, id] : sel.length === 1 && sel[0] === id ? [] : [id];
    model.set("selected", next);
    model.save_changes();
  };
  const cardOf = (t) => {
    const li = t instanceof Element ? (
      /** @type {HTMLElement | null} */
      t.closest(".ragtt-chunk")
    ) : null;
    return li && root.contains(li) && li.dataset.chunkId && !li.classList.contains("ragtt-cd-worddiff") ? li : null;
  };
  const remember = (li) => {
    const scope = li.closest(".ragtt-cd-left, .ragtt-cd-right, .ragtt-cd-pairs");
    clicked.scope = scope ? ["ragtt-cd-left", "ragtt-cd-right", "ragtt-cd-pairs"].find((c) => scope.classList.contains(c)) || "" : "";
  };
  root.addEventListener("click", (e) => {
    const li = cardOf(e.target);
    if (li) remember(li);
    if (li) choose(
      /** @type {string} */
      li.dataset.chunkId,
      e.shiftKey || e.metaKey || e.ctrlKey
    );
  });
  root.addEventListener("keydown", (e) => {
    const li = cardOf(e.target);
    if (li && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      remember(li);
      choose(
        /** @type {string} */
        li.dataset.chunkId,
        e.shiftKey
      );
    }
  });
}
function render({ model, el: host }) {
  const root = el("div", "ragtt-chunk-diff tex2jax_ignore mathjax_ignore");
  host.append(root);
  const clicked = { scope: "" };
  const redraw = () => draw(root, model, clicked);
  attachSelection(root, model, clicked);
  model.on("change:selected", redraw);
  model.on("change:_data", redraw);
  redraw();
  return () => {
    model.off("change:selected", redraw);
    model.off("change:_data", redraw);
  };
}
var chunk_diff_default = { render };

// js/src/timeline.js
var KIND = { INGEST: 0, REMOVE: 1, SNAPSHOT: 2, QUERY: 3, REPLAY: 4 };
var ROW = 16;
var LABEL_W = 150;
var PAD = 8;
var MAX_DOC_LANES = 40;
var MAX_CLAIM_LANES = 40;
var MAX_CLAIMS_LISTED = 200;
var FLAG = { SUPERSEDED: 1, OPEN: 2 };
var LANE = { ENTITY: 0, TYPE: 1 };
var AXES = ["time", "versions"];
function decode2(data) {
  const focal = data.focal && {
    ...data.focal,
    offsets: typed(data.focal.result_offsets),
    resultChunks: typed(data.focal.result_chunks),
    scores: typed(data.focal.result_scores),
    byVersion: typed(data.focal.version_result),
    terms: queryTerms(data.focal.text)
  };
  const cl = data.claims;
  const claims = cl && {
    namespace: cl.namespace,
    lanes: cl.lanes,
    laneKind: typed(cl.lane_kind),
    ids: cl.ids,
    content: cl.content,
    type: cl.type,
    confidence: typed(cl.confidence),
    from: typed(cl.from),
    until: typed(cl.until),
    lane: typed(cl.lane),
    flags: typed(cl.flags),
    fromX: typed(cl.from_x),
    untilX: typed(cl.until_x),
    openAt: cl.open_at
  };
  const lay = data.layout;
  const ev = data.events;
  const names = data.labels || {};
  const labels = [...new Set(data.snapshots.map((s) => s.label))];
  const short = distinguishing(labels);
  return {
    t0: data.t0_ms,
    unit: data.t_unit_ms,
    claims,
    focal,
    names,
    shortOf: new Map(labels.map((l, i) => [l, short[i]])),
    layout: {
      auto: lay.auto,
      first: lay.first,
      slots: lay.slots,
      bounds: typed(lay.bounds),
      eventX: typed(lay.event_x),
      runs: typed(lay.runs),
      warpPos: typed(lay.warp_pos),
      warpX: typed(lay.warp_x),
      width: lay.width
    },
    versions: typed(data.versions.version),
    vt: typed(data.versions.t),
    ops: data.versions.operation,
    et: typed(ev.t),
    kind: typed(ev.kind),
    lane: typed(ev.lane),
    ev: typed(ev.version),
    docs: data.docs,
    presence: typed(data.presence),
    snapshots: data.snapshots
  };
}
function fmtTime(d, ticks) {
  const ms = d.t0 + ticks * d.unit;
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return `${(ms / 1e3).toPrecision(12)} s`;
  return date.toISOString().replace("T", " ").replace(".000Z", "Z").replace("Z", " UTC");
}
function posOfTicks(layout, ticks) {
  const b = layout.bounds, slots = layout.slots;
  let j = 0;
  for (let k = 0; k < slots; k++) if (b[k] <= ticks) j = k;
  const w = b[j + 1] - b[j];
  return j + (w > 0 ? Math.max(0, Math.min(1, (ticks - b[j]) / w)) : 0);
}
function warp(from, to, v) {
  let lo = 0, hi = from.length - 1;
  if (v <= from[0]) return to[0];
  if (v >= from[hi]) return to[hi];
  while (hi - lo > 1) {
    const mid = lo + hi >> 1;
    if (from[mid] <= v) lo = mid;
    else hi = mid;
  }
  const w = from[hi] - from[lo];
  return to[lo] + (w > 0 ? (v - from[lo]) / w * (to[hi] - to[lo]) : 0);
}
function runAt(layout, j) {
  const r = layout.runs;
  let lo = 0, hi = r.length / 2;
  while (lo < hi) {
    const mid = lo + hi >> 1;
    if (r[2 * mid + 1] <= j) lo = mid + 1;
    else hi = mid;
  }
  return lo < r.length / 2 && r[2 * lo] <= j ? [r[2 * lo], r[2 * lo + 1]] : null;
}
function ticksOfPos(layout, pos) {
  const b = layout.bounds;
  const j = Math.max(0, Math.min(layout.slots - 1, Math.floor(pos)));
  const f = Math.max(0, Math.min(1, pos - j));
  return Math.round(b[j] + f * (b[j + 1] - b[j]));
}
function stackLabels(g, marks, left, right, first = null) {
  const order = [...first ? [first] : [], ...[...marks].sort((a, b) => a.x - b.x).filter((m) => m !== first)];
  const lines = [];
  const free = (line, x0, x1) => x0 >= left && x1 <= right && line.every((b) => x1 + LABEL_GAP <= b.x0 || x0 >= b.x1 + LABEL_GAP);
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
      if (x0 !== void 0) {
        const box = { x0, x1: x0 + w, text, mark: m, row };
        lines[row].push(box);
        return box;
      }
    }
  }).sort((a, b) => a.x0 - b.x0);
}
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
  const d = decode2(model.get("_data"));
  return {
    model,
    d,
    root,
    focalText,
    axisBtn,
    controls,
    where: el("span", "ragtt-tl-where"),
    playBtn: (
      /** @type {HTMLButtonElement | null} */
      null
    ),
    scroller,
    canvas,
    cursor,
    info,
    docsPane,
    chunksPane,
    claimsPane,
    status,
    index: 0,
    // index into d.versions of the cursor
    cursorT: 0,
    // the cursor's time in ticks: a version's, or (with claims) wherever it was dragged
    cursorP: 0,
    // the same place on the version axis (slot units)
    /** @type {LabelBox[]} */
    snapBoxes: [],
    labelRows: 0,
    // lines the snapshot labels take beyond the snapshot lane's own
    /** @type {string | null} */
    claimsKey: null,
    // the claims listed now (redrawn only on change)
    placed: false,
    // whether the cursor has been placed since the data arrived
    /** @type {ReturnType<typeof setInterval> | null} */
    playing: null,
    /** @type {number[]} */
    docLanes: [],
    moreDocs: 0,
    /** @type {number[]} */
    claimLanes: [],
    moreClaims: 0,
    tLo: 0,
    tHi: 1,
    drawnIndex: -1
  };
}
function mode(V) {
  const a = V.model.get("axis");
  return AXES.includes(a) ? a : AXES.includes(V.d.layout.auto) ? V.d.layout.auto : "time";
}
function span(d) {
  let lo = Infinity, hi = -Infinity;
  const arrays = [d.vt, d.et];
  const c = d.claims;
  if (c) arrays.push(c.from, c.until.filter((_, i) => !(c.flags[i] & FLAG.OPEN)));
  for (const arr of arrays) for (let i = 0; i < arr.length; i++) {
    if (arr[i] < lo) lo = arr[i];
    if (arr[i] > hi) hi = arr[i];
  }
  if (!(hi > lo)) return [lo - 1, lo + 1];
  if (c && c.flags.some((f) => f & FLAG.OPEN)) hi += Math.max(1, Math.round((hi - lo) * 0.04));
  return [lo, hi];
}
var plotW = (V) => Math.max(40, V.scroller.clientWidth - LABEL_W - 2 * PAD);
var xOf = (V, ticks) => LABEL_W + PAD + (ticks - V.tLo) / (V.tHi - V.tLo) * plotW(V);
var ticksAt = (V, x) => Math.max(V.tLo, Math.min(V.tHi, V.tLo + (x - LABEL_W - PAD) / plotW(V) * (V.tHi - V.tLo)));
var xOfP = (V, pos) => {
  const l = V.d.layout;
  return LABEL_W + PAD + warp(l.warpPos, l.warpX, pos) / l.width * plotW(V);
};
var posAt = (V, x) => {
  const l = V.d.layout;
  return Math.max(0, Math.min(l.slots, warp(l.warpX, l.warpPos, (x - LABEL_W - PAD) / plotW(V) * l.width)));
};
var versionX = (V, i) => mode(V) === "time" ? xOf(V, V.d.vt[i]) : xOfP(V, V.d.layout.first + i);
var eventX = (V, i) => mode(V) === "time" ? xOf(V, V.d.et[i]) : xOfP(V, V.d.layout.eventX[i]);
var cursorX = (V) => mode(V) === "time" ? xOf(V, V.cursorT) : xOfP(V, V.cursorP);
function indexAtTicks(d, ticks) {
  let best = 0;
  for (let i = 0; i < d.vt.length; i++) if (d.vt[i] <= ticks) best = i;
  return best;
}
function chooseLanes(V) {
  const d = V.d;
  const counts = /* @__PURE__ */ new Map();
  for (let i = 0; i < d.lane.length; i++) if (d.lane[i] >= 0) counts.set(d.lane[i], (counts.get(d.lane[i]) || 0) + 1);
  const all = [...counts.keys()].sort((a, b) => a - b);
  V.docLanes = all.slice(0, MAX_DOC_LANES);
  V.moreDocs = all.length - V.docLanes.length;
  const nClaimLanes = d.claims ? d.claims.lanes.length : 0;
  V.claimLanes = [...Array(Math.min(nClaimLanes, MAX_CLAIM_LANES)).keys()];
  V.moreClaims = nClaimLanes - V.claimLanes.length;
}
function rows(V) {
  const d = V.d;
  const out = [{ name: "queries", style: "dim" }, { name: "snapshots", style: "dim" }];
  for (let r = 0; r < V.labelRows; r++) out.push({ name: "", style: "dim" });
  for (const doc of V.docLanes) out.push({ name: d.docs[doc], style: "fg", kind: "doc", key: doc });
  if (V.moreDocs > 0) out.push({ name: `+${V.moreDocs} more documents`, style: "dim" });
  if (d.claims) {
    out.push({ name: `claims · ${d.claims.namespace}`, style: "head" });
    for (const l of V.claimLanes) {
      const isType = d.claims.laneKind[l] === LANE.TYPE;
      out.push({
        name: isType ? `type: ${d.claims.lanes[l]}` : d.claims.lanes[l],
        style: isType ? "dim" : "fg",
        kind: "claim",
        key: l
      });
    }
    if (V.moreClaims > 0) out.push({ name: `+${V.moreClaims} more`, style: "dim" });
  }
  return out;
}
function colors(V) {
  return themeColors(V.root, {
    fg: ["--jp-ui-font-color1", "#333"],
    dim: ["--jp-ui-font-color2", "#777"],
    grid: ["--jp-border-color2", "#ddd"],
    bg: ["--jp-layout-color1", "#fff"],
    ingest: ["--jp-brand-color1", "#1976d2"],
    remove: ["--jp-error-color1", "#d32f2f"],
    snapshot: ["--jp-warn-color1", "#f57c00"],
    query: ["--jp-success-color1", "#388e3c"],
    replay: ["--jp-ui-font-color2", "#777"],
    font: ["--jp-ui-font-family", "system-ui, sans-serif"],
    claim: ["--jp-info-color1", "#0097a7"],
    cursor: ["--jp-brand-color1", "#1976d2"]
  });
}
var laneY = (lane) => lane * ROW;
function draw2(V) {
  const d = V.d, c = colors(V);
  const w = V.scroller.clientWidth || 600;
  const g = (
    /** @type {CanvasRenderingContext2D} */
    V.canvas.getContext("2d")
  );
  placeSnapshotLabels(V, g, c, w);
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
  const laneOfDoc = /* @__PURE__ */ new Map(), laneOfClaim = /* @__PURE__ */ new Map();
  rowList.forEach((row, i) => {
    if (row.kind === "doc") laneOfDoc.set(row.key, i);
    else if (row.kind === "claim") laneOfClaim.set(row.key, i);
  });
  drawClaims(V, g, c, laneOfClaim, w);
  for (let i = 0; i < d.kind.length; i++) {
    const k = d.kind[i];
    let lane, color;
    if (k === KIND.QUERY || k === KIND.REPLAY) {
      lane = 0;
      color = k === KIND.QUERY ? c.query : c.replay;
    } else if (k === KIND.SNAPSHOT) {
      lane = 1;
      color = c.snapshot;
    } else {
      lane = laneOfDoc.get(d.lane[i]);
      color = k === KIND.REMOVE ? c.remove : c.ingest;
      if (lane === void 0) continue;
    }
    g.fillStyle = color;
    g.fillRect(Math.round(eventX(V, i)) - 1, laneY(lane) + 3, 3, ROW - 7);
  }
  drawSnapshotLabels(V, g, c);
  drawAxisLabels(V, g, c, w, lanes);
  V.cursor.style.height = `${lanes * ROW}px`;
  V.drawnIndex = V.index;
  placeCursor(V);
  showAxis(V);
}
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
  if (mode(V) === "versions") {
    g.save();
    g.globalAlpha = 0.35;
    g.fillStyle = c.grid;
    const lay = V.d.layout;
    for (let j = lay.first; j < lay.slots; j += 2) {
      const run = runAt(lay, j);
      if (run) {
        j = run[1] - 1 + (run[1] - j) % 2;
        continue;
      }
      g.fillRect(xOfP(V, j), 0, xOfP(V, j + 1) - xOfP(V, j), lanes * ROW);
    }
    g.restore();
    drawRuns(V, g, c, lanes);
  }
  g.fillStyle = c.grid;
  const versionsAxis = mode(V) === "versions";
  for (let i = 0; i < V.d.vt.length; i++) {
    if (versionsAxis && runAt(V.d.layout, V.d.layout.first + i)) continue;
    g.fillRect(Math.round(versionX(V, i)), 0, 1, lanes * ROW);
  }
}
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
    for (let y = -Math.ceil(x1 - x0); y < h; y += 4) {
      g.moveTo(x0, y);
      g.lineTo(x1, y + (x1 - x0));
    }
    g.stroke();
    g.restore();
    g.save();
    g.fillStyle = c.dim;
    g.fillRect(Math.round(x0), 0, 1, h);
    g.fillRect(Math.round(x1) - 1, 0, 1, h);
    out.push({
      from: V.d.versions[r[k] - lay.first],
      to: V.d.versions[r[k + 1] - 1 - lay.first],
      x0: Math.round(x0 * 10) / 10,
      x1: Math.round(x1 * 10) / 10
    });
  }
  g.restore();
  V.root.dataset.compressed = JSON.stringify(out);
}
function placeSnapshotLabels(V, g, c, w) {
  const d = V.d, current = d.versions[V.index];
  g.font = `600 11px ${c.font}`;
  const marks = d.snapshots.filter((s) => s.event >= 0 && s.event < d.kind.length).map((s) => ({
    x: Math.round(eventX(V, s.event)),
    snap: s,
    text: s.version === current ? s.label : d.shortOf.get(s.label) || s.label
  }));
  const first = marks.filter((m) => m.snap.version === current && m.snap.label === d.names[String(current)]).pop();
  V.snapBoxes = stackLabels(g, marks, LABEL_W, w - PAD, first);
  V.labelRows = Math.max(0, ...V.snapBoxes.map((b) => b.row || 0));
}
function drawSnapshotLabels(V, g, c) {
  const d = V.d, current = d.versions[V.index];
  for (const b of V.snapBoxes) {
    const on = b.mark.snap.version === current, y = laneY(1 + (b.row || 0));
    if (b.row) {
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
    x0: Math.round(b.x0 * 10) / 10,
    x1: Math.round(b.x1 * 10) / 10,
    row: b.row || 0,
    text: b.text,
    label: b.mark.snap.label,
    short: d.shortOf.get(b.mark.snap.label),
    version: b.mark.snap.version
  })));
}
function drawAxisLabels(V, g, c, w, lanes) {
  const d = V.d, versionsAxis = mode(V) === "versions";
  g.fillStyle = c.dim;
  const axisMarks = versionsAxis ? [
    ...d.layout.first ? [{ x: xOfP(V, 0) - 4, text: "earlier" }] : [],
    ...Array.from(d.versions, (v, i) => ({ x: versionX(V, i) - 4, text: slotText(v, d.names, d.shortOf) })).filter((_, i) => !runAt(d.layout, d.layout.first + i)),
    ...runMarks(V)
  ] : [{ x: LABEL_W + PAD - 4, text: fmtTime(d, V.tLo) }];
  const axisBoxes = placeLabels(g, axisMarks, LABEL_W, w - PAD);
  const y = lanes * ROW + 9;
  if (!versionsAxis) {
    const end = fmtTime(d, V.tHi), ew = g.measureText(end).width;
    if (!axisBoxes.length || w - PAD - ew >= axisBoxes[0].x1 + LABEL_GAP) g.fillText(end, w - PAD - ew, y);
  }
  for (const b of axisBoxes) g.fillText(b.text, b.x0, y);
  V.root.dataset.axisLabels = JSON.stringify(axisBoxes.map((b) => b.text));
}
function runMarks(V) {
  const r = V.d.layout.runs, out = [];
  for (let k = 0; k < r.length; k += 2) out.push({ x: xOfP(V, r[k]), text: `⋯ ${(r[k + 1] - r[k]).toLocaleString("en")}` });
  return out;
}
function drawClaims(V, g, c, laneOfClaim, w) {
  const k = V.d.claims;
  if (!k) return;
  const right = w - PAD, versionsAxis = mode(V) === "versions";
  g.save();
  g.lineWidth = 1;
  for (let i = 0; i < k.ids.length; i++) {
    const lane = laneOfClaim.get(k.lane[i]);
    if (lane === void 0) continue;
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
    g.fillStyle = c.fg;
    g.fillRect(Math.round(x0), y - 1, 1, h + 2);
  }
  g.restore();
}
function placeCursor(V) {
  const d = V.d;
  V.cursor.style.left = `${Math.round(cursorX(V)) - 1}px`;
  V.cursor.setAttribute("aria-valuemin", String(d.versions[0]));
  V.cursor.setAttribute("aria-valuemax", String(d.versions[d.versions.length - 1]));
  V.cursor.setAttribute("aria-valuenow", String(d.versions[V.index]));
  V.cursor.setAttribute("aria-valuetext", versionLabel(d.versions[V.index], d.names));
}
function showAxis(V) {
  const m = mode(V);
  V.root.dataset.axis = m;
  V.axisBtn.textContent = m === "time" ? "Axis: time" : "Axis: versions";
  V.axisBtn.setAttribute("aria-label", m === "time" ? "axis: time; switch to one slot per version" : "axis: one slot per version; switch to time");
  V.axisBtn.title = m === "time" ? "Drawn at wall-clock time; click for one equal slot per index version" : "One equal slot per index version; click for wall-clock time";
}
function resultAt(d, i) {
  const f = d.focal;
  const r = f.byVersion[i];
  const out = [];
  for (let j = f.offsets[r]; j < f.offsets[r + 1]; j++) out.push({ chunk: f.resultChunks[j], score: f.scores[j] });
  return out;
}
function showPanes(V) {
  const d = V.d, v = d.versions[V.index];
  const label = versionLabel(v, d.names);
  V.where.textContent = `${label} (${V.index + 1} of ${d.versions.length})`;
  const labels = d.snapshots.filter((s) => s.version === v).map((s) => s.label);
  const early = V.cursorT < d.vt[0] ? "Before the first index version · " : "";
  V.info.textContent = `${early}Index version ${label} · ${fmtTime(d, d.vt[V.index])} · ${d.ops[V.index] || ""}` + (labels.length ? ` · snapshot ${labels.join(", ")}` : "") + (V.cursorT !== d.vt[V.index] ? ` · cursor at ${fmtTime(d, V.cursorT)}` : "");
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
function showChunks(V) {
  const d = V.d, v = d.versions[V.index], index = V.index;
  V.chunksPane.replaceChildren();
  if (!d.focal) {
    V.chunksPane.append(el("div", "ragtt-tl-empty", "No focal query: open the timeline of a query (%ragtt timeline QUERY_ID, or a logged query's timeline button) to see its chunks here."));
    return;
  }
  const now = resultAt(d, index);
  const before = index > 0 ? new Set(resultAt(d, index - 1).map((r) => r.chunk)) : /* @__PURE__ */ new Set();
  const nowIds = new Set(now.map((r) => r.chunk));
  const left = index > 0 ? [...before].filter((c) => !nowIds.has(c)).length : 0;
  V.chunksPane.append(el("div", "ragtt-tl-pane-title", `Chunks retrieved at ${versionLabel(v, d.names)} (${now.length})` + (index > 0 ? ` · ${left} left since ${versionLabel(d.versions[index - 1], d.names)}` : "")));
  const ol = el("ol", "ragtt-tl-chunklist");
  const selected = new Set(V.model.get("selected"));
  now.forEach((r, rank) => {
    const c = d.focal.chunks[r.chunk];
    const isNew = index > 0 && !before.has(r.chunk);
    const card = chunkCard({
      id: c.chunk_id,
      text: c.text,
      source: c.source,
      terms: d.focal.terms,
      meta: [["ragtt-rank", `#${rank + 1}`], ["ragtt-score", r.score.toFixed(4)]],
      badges: isNew ? ["new"] : [],
      cls: `${isNew ? "ragtt-new" : ""}${selected.has(c.chunk_id) ? " ragtt-selected" : ""}`.trim()
    });
    card.tabIndex = -1;
    card.addEventListener("click", () => toggle(V, c.chunk_id));
    ol.append(card);
  });
  if (!now.length) ol.append(el("li", "ragtt-tl-empty", "nothing retrieved at this version"));
  V.chunksPane.append(ol);
}
function claimsAt(d, ticks) {
  const k = d.claims, out = [];
  for (let i = 0; i < k.ids.length; i++) {
    if (k.from[i] <= ticks && (k.flags[i] & FLAG.OPEN || ticks < k.until[i])) out.push(i);
  }
  return out;
}
function showClaims(V) {
  const d = V.d, k = d.claims;
  V.claimsPane.hidden = !k;
  if (!k) return;
  const valid = claimsAt(d, V.cursorT);
  const key = `${valid.join(",")}@${fmtTime(d, V.cursorT)}`;
  if (key === V.claimsKey) return;
  V.claimsKey = key;
  V.claimsPane.replaceChildren(el(
    "div",
    "ragtt-tl-pane-title",
    `Claims valid at ${fmtTime(d, V.cursorT)} in ${k.namespace} (${valid.length})`
  ));
  const ol = el("ol", "ragtt-tl-claimlist");
  for (const i of valid.slice(0, MAX_CLAIMS_LISTED)) {
    const li = el("li", "ragtt-claim");
    li.dataset.assertionId = k.ids[i];
    const meta = el("div", "ragtt-claim-meta");
    meta.append(
      el("span", "ragtt-claim-entity", k.laneKind[k.lane[i]] === LANE.TYPE ? "(no entity)" : k.lanes[k.lane[i]]),
      el("span", "ragtt-claim-type", k.type[i]),
      el("span", "ragtt-claim-confidence", k.confidence[i].toFixed(2)),
      el("span", "ragtt-claim-window", `${fmtTime(d, k.from[i])} → ` + (k.flags[i] & FLAG.OPEN ? "open" : fmtTime(d, k.until[i])))
    );
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
function toggle(V, chunkId) {
  const sel = new Set(V.model.get("selected"));
  if (sel.has(chunkId)) sel.delete(chunkId);
  else sel.add(chunkId);
  V.model.set("selected", [...sel]);
  V.model.save_changes();
}
function go(V, i, { sync = true, ticks = null, pos = null } = {}) {
  const d = V.d;
  const next = Math.max(0, Math.min(d.versions.length - 1, i));
  const changed = next !== V.index;
  V.index = next;
  V.placed = true;
  V.cursorT = ticks === null ? d.vt[V.index] : ticks;
  V.cursorP = ticks === null ? d.layout.first + V.index : pos === null ? posOfTicks(d.layout, ticks) : pos;
  if (V.drawnIndex !== V.index && (d.snapshots.length || V.drawnIndex < 0)) draw2(V);
  else placeCursor(V);
  showPanes(V);
  showClaims(V);
  if (sync && changed && V.model.get("version") !== d.versions[V.index]) {
    V.model.set("version", d.versions[V.index]);
    V.model.save_changes();
  }
}
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
function hover(V, x, y) {
  const d = V.d;
  const inSnapLane = y >= laneY(1) && y < laneY(2 + V.labelRows);
  const line = Math.floor(y / ROW) - 1;
  const snap = inSnapLane && (V.snapBoxes.find((b) => (b.row || 0) === line && x >= b.x0 - 2 && x <= b.x1 + 2) || V.snapBoxes.find((b) => Math.abs(x - b.mark.x) <= 3));
  let tip = "";
  if (snap) tip = `snapshot ${snap.mark.snap.label} (v${snap.mark.snap.version})`;
  else if (inSnapLane) {
    const near = d.snapshots.find((s) => s.event >= 0 && s.event < d.kind.length && Math.abs(x - eventX(V, s.event)) <= 3);
    if (near) tip = `snapshot ${near.label} (v${near.version})`;
  }
  if (!tip && mode(V) === "versions" && x >= LABEL_W) {
    const slot = Math.min(d.layout.slots - 1, Math.floor(posAt(V, x)));
    const i = slot - d.layout.first, run = runAt(d.layout, slot);
    tip = i < 0 ? "before the first index version" : run ? `v${d.versions[run[0] - d.layout.first]} to v${d.versions[run[1] - 1 - d.layout.first]}: ${run[1] - run[0]} versions with no snapshot or query (compressed) · at the pointer ` + versionLabel(d.versions[i], d.names) : `${versionLabel(d.versions[i], d.names)} · ${fmtTime(d, d.vt[i])} · ${d.ops[i] || ""}`;
  }
  if (V.scroller.title !== tip) V.scroller.title = tip;
}
function fromModel(V) {
  const d = V.d, v = V.model.get("version");
  if (V.placed && d.versions[V.index] === v && d.claims) {
    placeCursor(V);
    showPanes(V);
    showClaims(V);
    return;
  }
  let i = d.versions.indexOf(v);
  if (i < 0) i = d.versions.length - 1;
  const openAt = !V.placed && d.claims && d.claims.openAt !== null && d.claims.openAt !== void 0 && indexAtTicks(d, d.claims.openAt) === i ? d.claims.openAt : null;
  go(V, i, { sync: false, ticks: openAt });
}
function buildControls(V) {
  const d = () => V.d;
  const add = (label, aria, fn) => {
    const b = button("ragtt-tl-btn", label, aria, fn);
    V.controls.append(b);
    return b;
  };
  add("|◀", "first version", () => go(V, 0));
  add("◀", "previous version", () => go(V, V.index - 1));
  V.playBtn = add("Play", "play", () => V.playing ? stop(V) : play(V));
  add("▶", "next version", () => go(V, V.index + 1));
  add("▶|", "latest version", () => go(V, d().versions.length - 1));
  V.controls.append(V.where);
  V.axisBtn.addEventListener("click", () => {
    V.model.set("axis", mode(V) === "time" ? "versions" : "time");
    V.model.save_changes();
  });
  V.root.addEventListener("keydown", (e) => {
    const moves = { ArrowLeft: V.index - 1, ArrowRight: V.index + 1, Home: 0, End: d().versions.length - 1 };
    if (!(e.key in moves)) return;
    e.preventDefault();
    e.stopPropagation();
    go(V, moves[e.key]);
  });
}
function play(V) {
  if (V.index >= V.d.versions.length - 1) go(V, 0);
  const b = (
    /** @type {HTMLButtonElement} */
    V.playBtn
  );
  b.textContent = "Pause";
  b.setAttribute("aria-label", "pause");
  V.playing = setInterval(() => V.index >= V.d.versions.length - 1 ? stop(V) : go(V, V.index + 1), 700);
}
function stop(V) {
  if (V.playing) clearInterval(V.playing);
  V.playing = null;
  const b = (
    /** @type {HTMLButtonElement} */
    V.playBtn
  );
  b.textContent = "Play";
  b.setAttribute("aria-label", "play");
}
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
  const up = (e) => {
    dragging = false;
    if (scroller.hasPointerCapture(e.pointerId)) scroller.releasePointerCapture(e.pointerId);
  };
  scroller.addEventListener("pointerup", up);
  scroller.addEventListener("pointercancel", up);
}
function showHead(V) {
  const f = V.d.focal;
  V.focalText.textContent = f ? `query ${f.query_id} at ${versionLabel(f.version, V.d.names)}: ${f.text}` : "";
}
function showStatus(V) {
  V.status.textContent = `${V.model.get("selected").length} selected`;
}
function render2({ model, el: host }) {
  const V = createView(model);
  host.append(V.root);
  buildControls(V);
  attachPointer(V);
  const onData = () => {
    V.d = decode2(model.get("_data"));
    V.claimsKey = null;
    V.placed = false;
    [V.tLo, V.tHi] = span(V.d);
    chooseLanes(V);
    V.drawnIndex = -1;
    fromModel(V);
    showHead(V);
  };
  const onVersion = () => fromModel(V);
  const onSelected = () => {
    showChunks(V);
    showStatus(V);
  };
  const onAxis = () => draw2(V);
  model.on("change:version", onVersion);
  model.on("change:selected", onSelected);
  model.on("change:_data", onData);
  model.on("change:axis", onAxis);
  const resize = new ResizeObserver(() => draw2(V));
  resize.observe(V.scroller);
  [V.tLo, V.tHi] = span(V.d);
  chooseLanes(V);
  showHead(V);
  fromModel(V);
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
var timeline_default = { render: render2 };

// js/src/history_matrix.js
var CELL = { NO_RUN: 0, FIRST: 1, SAME: 2, CHANGED: 3, UNKNOWN: 4 };
var QUANT = 65534;
var ABSENT = 65535;
var GUTTER = 200;
var AXIS_H = 22;
var PAD2 = 8;
var MAX_ROW = 22;
var MAX_PLOT_H = 560;
var LABEL_ROW = 11;
var FETCH_WAIT_MS = 4e3;
var STOPS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
var LUT = (() => {
  const lut = new Uint8Array(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = i / 255 * (STOPS.length - 1), k = Math.min(STOPS.length - 2, Math.floor(t)), f = t - k;
    for (let ch = 0; ch < 3; ch++) lut[i * 3 + ch] = Math.round(STOPS[k][ch] + f * (STOPS[k + 1][ch] - STOPS[k][ch]));
  }
  return lut;
})();
var cssColor = (v) => {
  const i = Math.max(0, Math.min(255, Math.round(v * 255))) * 3;
  return `rgb(${LUT[i]}, ${LUT[i + 1]}, ${LUT[i + 2]})`;
};
function decode3(d) {
  const versions = typed(d.columns.version);
  const nQ = d.questions.ids.length, nC = versions.length;
  const labels = (
    /** @type {(string | null)[]} */
    d.columns.labels
  );
  const named = [...new Set(labels.filter((l) => l))];
  const short = distinguishing(
    /** @type {string[]} */
    named
  );
  const names = { ...d.names || {} };
  labels.forEach((l, i) => {
    if (l && !names[String(versions[i])]) names[String(versions[i])] = l;
  });
  const un = d.unparseable;
  const unCell = typed(un.cell), unMetric = typed(un.metric);
  const unparseable = /* @__PURE__ */ new Map();
  for (let k = 0; k < unCell.length; k++) {
    const m = d.metrics[unMetric[k]];
    if (!unparseable.has(m)) unparseable.set(m, /* @__PURE__ */ new Map());
    unparseable.get(m)?.set(unCell[k], un.raw[k]);
  }
  const diffCells = typed(d.diffs.cell);
  const tl = d.timeline;
  const tlQuestions = typed(tl.question);
  const chunks = { ids: strings(d.chunks.ids), sources: d.chunks.sources, texts: strings(d.chunks.texts) };
  return {
    raw: d,
    nQ,
    nC,
    versions,
    labels,
    names,
    shortOf: new Map(named.map((l, i) => [
      /** @type {string} */
      l,
      short[i]
    ])),
    questions: d.questions,
    metrics: (
      /** @type {string[]} */
      d.metrics
    ),
    /** @type {Map<string, Float32Array>} */
    values: /* @__PURE__ */ new Map(),
    cell: typed(d.cell),
    runs: d.runs ? strings(d.runs) : null,
    unparseable,
    chunks,
    diffOf: new Map(Array.from(diffCells, (c, k) => [c, k])),
    timelineOf: new Map(Array.from(tlQuestions, (q, k) => [q, k])),
    embed: d.embed
  };
}
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
  return (
    /** @type {Float32Array} */
    v
  );
}
function previousRun(d, q, c) {
  for (let k = c - 1; k >= 0; k--) if (d.cell[q * d.nC + k] !== CELL.NO_RUN) return k;
  return -1;
}
var columnLabel = (d, c) => versionLabel(d.versions[c], d.names);
function createView2(model) {
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
  canvas.setAttribute("aria-label", "questions by index versions: arrow keys move, Enter opens the cell's diff, T the question's timeline");
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
  root.append(head, plot, readout, panel);
  return {
    model,
    root,
    picker,
    legend,
    counts,
    plot,
    canvas,
    tip,
    readout,
    panel,
    panelHead,
    panelBody,
    d: decode3(model.get("_data")),
    /** @type {HTMLCanvasElement | null} */
    image: null,
    imageMetric: "",
    geo: { left: GUTTER, top: AXIS_H, cellW: 1, cellH: 1, w: 0, h: 0 },
    focus: { q: 0, c: 0 },
    /** @type {(() => void) | null} */
    cleanup: null,
    /** @type {Map<string, any>} replies from the kernel, by request key */
    replies: /* @__PURE__ */ new Map(),
    /** @type {Map<string, ReturnType<typeof setTimeout>>} */
    waiting: /* @__PURE__ */ new Map(),
    /** @type {string} the request the panel waits for */
    want: "",
    /** @type {{key: string, title: string, onReply: (reply: any) => void} | null} */
    pending: null
  };
}
function colors2(V) {
  return themeColors(V.root, {
    fg: ["--jp-ui-font-color1", "#333"],
    dim: ["--jp-ui-font-color2", "#777"],
    bg: ["--jp-layout-color1", "#fff"],
    hatch: ["--jp-border-color1", "#bbb"],
    bad: ["--jp-error-color1", "#d32f2f"],
    focus: ["--jp-brand-color1", "#1976d2"],
    font: ["--jp-ui-font-family", "system-ui, sans-serif"]
  });
}
function cellImage(V, metric) {
  const d = V.d, values = valuesOf(d, metric);
  const img = document.createElement("canvas");
  img.width = Math.max(1, d.nC);
  img.height = Math.max(1, d.nQ);
  const g = (
    /** @type {CanvasRenderingContext2D} */
    img.getContext("2d")
  );
  const data = g.createImageData(img.width, img.height);
  const px = data.data;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== v) continue;
    const k = Math.max(0, Math.min(255, Math.round(v * 255))) * 3, o = i * 4;
    px[o] = LUT[k];
    px[o + 1] = LUT[k + 1];
    px[o + 2] = LUT[k + 2];
    px[o + 3] = 255;
  }
  g.putImageData(data, 0, 0);
  return img;
}
function hatch(g, c) {
  const tile = document.createElement("canvas");
  tile.width = tile.height = 6;
  const t = (
    /** @type {CanvasRenderingContext2D} */
    tile.getContext("2d")
  );
  t.fillStyle = c.bg;
  t.fillRect(0, 0, 6, 6);
  t.strokeStyle = c.hatch;
  t.beginPath();
  t.moveTo(0, 6);
  t.lineTo(6, 0);
  t.stroke();
  return (
    /** @type {CanvasPattern} */
    g.createPattern(tile, "repeat")
  );
}
function draw3(V) {
  const d = V.d, c = colors2(V), metric = V.model.get("metric");
  const w = V.plot.clientWidth || 800;
  const cellH = Math.max(1, Math.min(MAX_ROW, Math.floor(MAX_PLOT_H / Math.max(1, d.nQ))));
  const plotW2 = Math.max(40, w - GUTTER - PAD2), cellW = plotW2 / Math.max(1, d.nC);
  const h = AXIS_H + d.nQ * cellH + 4;
  const dpr = window.devicePixelRatio || 1;
  V.canvas.width = Math.round(w * dpr);
  V.canvas.height = Math.round(h * dpr);
  V.canvas.style.width = `${w}px`;
  V.canvas.style.height = `${h}px`;
  V.geo = { left: GUTTER, top: AXIS_H, cellW, cellH, w, h };
  Object.assign(V.canvas.dataset, { cellW: String(cellW), cellH: String(cellH), left: String(GUTTER), top: String(AXIS_H) });
  const g = (
    /** @type {CanvasRenderingContext2D} */
    V.canvas.getContext("2d")
  );
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  g.font = `11px ${c.font}`;
  g.textBaseline = "middle";
  const H = d.nQ * cellH;
  g.fillStyle = hatch(g, c);
  g.fillRect(GUTTER, AXIS_H, plotW2, H);
  if (V.imageMetric !== metric || !V.image) {
    V.image = cellImage(V, metric);
    V.imageMetric = metric;
  }
  g.imageSmoothingEnabled = false;
  g.drawImage(V.image, 0, 0, V.image.width, V.image.height, GUTTER, AXIS_H, plotW2, H);
  drawUnparseable(V, g, c, metric);
  drawQuestions(V, g, c);
  drawAxis(V, g, c);
  const f = V.focus;
  g.strokeStyle = c.focus;
  g.lineWidth = 2;
  g.strokeRect(GUTTER + f.c * cellW - 1, AXIS_H + f.q * cellH - 1, Math.max(2, cellW) + 2, Math.max(2, cellH) + 2);
  V.root.dataset.metric = metric;
}
function drawUnparseable(V, g, c, metric) {
  const cells = V.d.unparseable.get(metric);
  if (!cells) return;
  const { cellW, cellH } = V.geo;
  g.strokeStyle = c.bad;
  g.fillStyle = c.bad;
  g.lineWidth = 1.5;
  for (const cell of cells.keys()) {
    const x = GUTTER + cell % V.d.nC * cellW, y = AXIS_H + Math.floor(cell / V.d.nC) * cellH;
    if (cellW < 5 || cellH < 5) {
      g.fillRect(x, y, Math.max(2, cellW), Math.max(2, cellH));
      continue;
    }
    g.beginPath();
    g.moveTo(x + 2, y + 2);
    g.lineTo(x + cellW - 2, y + cellH - 2);
    g.moveTo(x + cellW - 2, y + 2);
    g.lineTo(x + 2, y + cellH - 2);
    g.stroke();
  }
}
function drawQuestions(V, g, c) {
  const d = V.d, { cellH } = V.geo;
  g.fillStyle = c.dim;
  if (cellH < LABEL_ROW) {
    g.fillText(`${d.nQ} questions`, 4, AXIS_H / 2);
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
function drawAxis(V, g, c) {
  const d = V.d, { cellW } = V.geo;
  const marks = Array.from(d.versions, (v, i) => ({
    x: GUTTER + i * cellW + Math.min(cellW / 2, 4),
    text: slotText(v, d.names, d.shortOf),
    column: i
  }));
  const f = marks[V.focus.c];
  const first = f ? { ...f, text: columnLabel(d, f.column) } : null;
  const boxes = placeLabels(g, marks.filter((m) => m !== f), GUTTER, V.geo.w - PAD2, first);
  g.fillStyle = c.dim;
  for (const b of boxes) {
    g.fillStyle = b.mark === first ? c.focus : c.dim;
    g.fillText(b.text, b.x0, AXIS_H / 2);
    g.fillRect(Math.round(b.mark.x), AXIS_H - 4, 1, 4);
  }
  V.root.dataset.axisLabels = JSON.stringify(boxes.map((b) => b.text));
}
function hit(V, e) {
  const r = V.canvas.getBoundingClientRect();
  const x = e.clientX - r.left, y = e.clientY - r.top, { cellW, cellH } = V.geo;
  const q = Math.floor((y - AXIS_H) / cellH);
  if (q < 0 || q >= V.d.nQ) return null;
  if (x < GUTTER) return { q, c: -1 };
  const c = Math.floor((x - GUTTER) / cellW);
  return c >= 0 && c < V.d.nC ? { q, c } : null;
}
function describe(V, q, c) {
  const d = V.d, at = q * d.nC + c, metric = V.model.get("metric");
  const v = valuesOf(d, metric)[at], state = d.cell[at];
  const raw = d.unparseable.get(metric)?.get(at);
  const value = raw !== void 0 ? `${metric}: unparseable verdict: ${raw}` : state === CELL.NO_RUN ? `${metric}: no run` : v !== v ? `${metric}: absent (nothing to score it against)` : `${metric}: ${v.toFixed(3)}`;
  const lines = [d.questions.texts[q], `${columnLabel(d, c)} · ${d.raw.columns.at[c]}`, value];
  if (state !== CELL.NO_RUN) lines.push(d.runs ? `query ${d.runs.get(at)}` : "query id: not in this view's state (too many cells)");
  const prev = previousRun(d, q, c);
  if (state === CELL.SAME) lines.push(`same chunks as at ${columnLabel(d, prev)}`);
  else if (state === CELL.CHANGED) lines.push(`chunks changed since ${columnLabel(d, prev)}: click for the diff`);
  else if (state === CELL.FIRST) lines.push("the question's first evaluated run");
  else if (state === CELL.UNKNOWN) lines.push(`not compared with ${columnLabel(d, prev)} here: a click asks the kernel`);
  return lines;
}
function onHover(V, e) {
  const at = hit(V, e);
  if (!at) {
    V.tip.hidden = true;
    return;
  }
  const lines = at.c < 0 ? [V.d.questions.texts[at.q], `${V.d.questions.ids[at.q]} · click for its timeline`] : describe(V, at.q, at.c);
  V.tip.replaceChildren(...lines.map((l, i) => el("div", i ? "ragtt-hm-tip-line" : "ragtt-hm-tip-title", l)));
  const r = V.plot.getBoundingClientRect();
  const x = e.clientX - r.left, y = e.clientY - r.top;
  V.tip.style.left = `${Math.min(x + 14, Math.max(0, r.width - 320))}px`;
  V.tip.style.top = `${y + 16}px`;
  V.tip.hidden = false;
}
function showReadout(V) {
  const { q, c } = V.focus;
  V.readout.textContent = V.d.nQ && V.d.nC ? describe(V, q, c).join(" · ") : "This matrix has no cells.";
}
function panelText(V, state, title, text) {
  if (V.cleanup) {
    V.cleanup();
    V.cleanup = null;
  }
  V.panel.hidden = false;
  V.root.dataset.panel = state;
  panelTitle(V, title);
  V.panelBody.replaceChildren(...text ? [el("p", "ragtt-hm-note", text)] : []);
}
function panelTitle(V, title) {
  V.panelHead.replaceChildren(
    el("span", "ragtt-hm-panel-title", title),
    button("ragtt-hm-close", "close", "close the panel", () => {
      closePanel(V);
      V.model.set("selected", {});
      V.model.save_changes();
    })
  );
}
function closePanel(V) {
  if (V.cleanup) {
    V.cleanup();
    V.cleanup = null;
  }
  V.panel.hidden = true;
  V.want = "";
  delete V.root.dataset.panel;
}
function mount(V, view, state, kind, title) {
  if (V.cleanup) {
    V.cleanup();
    V.cleanup = null;
  }
  V.panel.hidden = false;
  V.root.dataset.panel = kind;
  panelTitle(V, title);
  const host = el("div", "ragtt-hm-sub");
  V.panelBody.replaceChildren(host);
  const model = createModel(state, { reply: async () => [] });
  const cleanup = view.render({ model, el: host });
  V.cleanup = typeof cleanup === "function" ? cleanup : null;
}
function fullDiff(d, data) {
  const rows2 = typed(data.chunks.rows);
  const ch = { ...data.chunks };
  delete ch.rows;
  ch.ids = Array.from(rows2, (r) => d.chunks.ids.get(r));
  ch.sources = Array.from(rows2, (r) => d.chunks.sources[r]);
  ch.texts = Array.from(rows2, (r) => d.chunks.texts.get(r));
  return { ...data, chunks: ch };
}
function fullTimeline(d, base, focal) {
  let chunks = focal.chunks;
  if (!chunks) {
    const rows2 = typed(focal.rows);
    chunks = Array.from(rows2, (r) => ({ chunk_id: d.chunks.ids.get(r), source: d.chunks.sources[r], text: d.chunks.texts.get(r) }));
  }
  const f = { ...focal, chunks };
  delete f.rows;
  return { ...base, focal: f };
}
function openCell(V, q, c) {
  const d = V.d, at = q * d.nC + c, state = d.cell[at], prev = previousRun(d, q, c);
  const where = `${d.questions.texts[q]} · ${columnLabel(d, c)}`;
  if (state === CELL.NO_RUN) return panelText(V, "none", where, "No run for this question at this version.");
  if (state === CELL.FIRST || prev < 0) {
    return panelText(V, "first", where, "The question's first evaluated run: there is no earlier column to diff it against.");
  }
  if (state === CELL.SAME) {
    return panelText(V, "same", where, `Same chunks, in the same order, as at ${columnLabel(d, prev)}: nothing changed to diff (the scores may differ).`);
  }
  const title = `Chunk diff · ${d.questions.texts[q]} · ${columnLabel(d, prev)} → ${columnLabel(d, c)}`;
  const k = d.diffOf.get(at);
  if (k !== void 0) {
    return mount(V, chunk_diff_default, { _data: fullDiff(d, d.raw.diffs.data[k]), selected: [] }, "diff", title);
  }
  const ids = d.runs ? { left: d.runs.get(q * d.nC + prev), right: d.runs.get(at) } : {};
  ask(V, { type: "diff", key: `diff ${q} ${c}`, ...ids, question: q, column: c, previous: prev }, title, (reply) => {
    if (reply.same) return panelText(V, "same", where, `Same chunks as at ${columnLabel(d, prev)}: nothing changed to diff.`);
    mount(V, chunk_diff_default, { _data: reply.data, selected: [] }, "diff", title);
  }, `This diff is not in the widget's state (the state holds ${d.diffOf.size} diffs; its bound left ${d.embed.diffs_left_out} out) and no kernel answered: open the notebook with a live kernel, or build the widget with a larger embed_limit.`);
}
function openQuestion(V, q) {
  const d = V.d;
  let c = d.nC - 1;
  while (c >= 0 && d.cell[q * d.nC + c] === CELL.NO_RUN) c--;
  const title = `Timeline · ${d.questions.texts[q]}`;
  if (c < 0) return panelText(V, "none", title, "This question has no run in the matrix, so no timeline.");
  const k = d.timelineOf.get(q), base = d.raw.timeline.base;
  const show = (data) => mount(
    V,
    timeline_default,
    { _data: data, version: data.focal.version, axis: "auto", selected: [] },
    "timeline",
    title
  );
  if (k !== void 0 && base) return show(fullTimeline(d, base, d.raw.timeline.focal[k]));
  const id = d.runs ? { query_id: d.runs.get(q * d.nC + c) } : {};
  ask(
    V,
    { type: "timeline", key: `timeline ${q}`, ...id, question: q, column: c },
    title,
    (reply) => show(fullTimeline(d, reply.base, reply.focal)),
    d.embed.timelines ? `This question's timeline is not in the widget's state (its bound left ${d.embed.timelines_left_out} out) and no kernel answered: open the notebook with a live kernel, or build the widget with a larger embed_limit.` : "This question's timeline is not in the widget's state (timelines are precomputed by ragtt report --execute, HistoryMatrix(..., embed_timelines=True) or widget.embed_timelines()) and no kernel answered."
  );
}
function ask(V, content, title, onReply, missing) {
  const key = content.key;
  V.want = key;
  const known = V.replies.get(key);
  if (known) return known.error ? panelText(V, "error", title, known.error) : onReply(known);
  panelText(V, "waiting", title, "Asking the kernel…");
  V.pending = { key, title, onReply };
  if (V.waiting.has(key)) return;
  try {
    V.model.send(content);
  } catch {
  }
  V.waiting.set(key, setTimeout(() => {
    V.waiting.delete(key);
    if (V.want === key && !V.replies.has(key)) panelText(V, "missing", title, missing);
  }, FETCH_WAIT_MS));
}
function onMessage(V, msg, buffers) {
  if (!msg || msg.type !== "diff" && msg.type !== "timeline") return;
  const reply = joinBuffers(msg, buffers || []);
  const key = String(msg.key);
  clearTimeout(V.waiting.get(key));
  V.waiting.delete(key);
  V.replies.set(key, reply);
  const p = V.pending;
  if (p && V.want === key) {
    if (reply.error) panelText(V, "error", p.title, reply.error);
    else p.onReply(reply);
  }
}
function focusCell(V, q, c) {
  V.focus = { q: Math.max(0, Math.min(V.d.nQ - 1, q)), c: Math.max(0, Math.min(V.d.nC - 1, c)) };
  draw3(V);
  showReadout(V);
}
function select(V, sel) {
  V.model.set("selected", sel);
  V.model.save_changes();
}
function fromSelected(V) {
  const sel = V.model.get("selected") || {};
  if (typeof sel.question !== "number" || sel.question < 0 || sel.question >= V.d.nQ) return closePanel(V);
  if (typeof sel.column === "number" && sel.column >= 0 && sel.column < V.d.nC) {
    if (V.focus.q !== sel.question || V.focus.c !== sel.column) focusCell(V, sel.question, sel.column);
    openCell(V, sel.question, sel.column);
  } else {
    openQuestion(V, sel.question);
  }
}
function attach(V) {
  V.canvas.addEventListener("mousemove", (e) => onHover(V, e));
  V.canvas.addEventListener("mouseleave", () => {
    V.tip.hidden = true;
  });
  V.canvas.addEventListener("click", (e) => {
    const at = hit(V, e);
    if (!at) return;
    if (at.c < 0) {
      select(V, { question: at.q });
      return;
    }
    focusCell(V, at.q, at.c);
    select(V, { question: at.q, column: at.c });
  });
  V.canvas.addEventListener("keydown", (e) => {
    const { q, c } = V.focus;
    const keys = {
      ArrowLeft: () => focusCell(V, q, c - 1),
      ArrowRight: () => focusCell(V, q, c + 1),
      ArrowUp: () => focusCell(V, q - 1, c),
      ArrowDown: () => focusCell(V, q + 1, c),
      Home: () => focusCell(V, q, 0),
      End: () => focusCell(V, q, V.d.nC - 1),
      Enter: () => select(V, { question: q, column: c }),
      t: () => select(V, { question: q }),
      Escape: () => select(V, {})
    };
    const fn = keys[e.key];
    if (fn && V.d.nQ && V.d.nC) {
      e.preventDefault();
      fn();
    }
  });
  V.picker.addEventListener("change", () => {
    V.model.set("metric", V.picker.value);
    V.model.save_changes();
  });
}
function showHead2(V) {
  const d = V.d, metric = V.model.get("metric");
  V.picker.replaceChildren(...d.metrics.map((m) => {
    const o = el("option", "", m);
    o.value = m;
    return o;
  }));
  V.picker.value = metric;
  const ramp = el("span", "ragtt-hm-ramp");
  ramp.style.background = `linear-gradient(to right, ${[0, 0.25, 0.5, 0.75, 1].map(cssColor).join(", ")})`;
  const un = d.unparseable.get(metric)?.size || 0;
  V.legend.replaceChildren(
    el("span", "", "0"),
    ramp,
    el("span", "", "1"),
    el("span", "ragtt-hm-absent", ""),
    el("span", "", "absent"),
    ...un ? [el("span", "ragtt-hm-bad", "×"), el("span", "", `unparseable (${un})`)] : []
  );
  V.counts.textContent = `${d.nQ} questions × ${d.nC} versions`;
}
function render3({ model, el: host }) {
  const V = createView2(model);
  host.append(V.root);
  attach(V);
  const onData = () => {
    V.d = decode3(model.get("_data"));
    V.image = null;
    V.replies.clear();
    showHead2(V);
    draw3(V);
    showReadout(V);
  };
  const onMetric = () => {
    showHead2(V);
    draw3(V);
    showReadout(V);
  };
  const onSelected = () => fromSelected(V);
  const onMsg = (msg, buffers) => onMessage(V, msg, buffers);
  const events = (
    /** @type {Array<[string, (...args: any[]) => void]>} */
    [
      ["change:_data", onData],
      ["change:metric", onMetric],
      ["change:selected", onSelected],
      ["msg:custom", onMsg]
    ]
  );
  for (const [name, fn] of events) model.on(name, fn);
  let lastW = -1;
  const resize = new ResizeObserver(() => {
    const now = V.plot.clientWidth;
    if (now && now !== lastW) {
      lastW = now;
      draw3(V);
    }
  });
  resize.observe(V.plot);
  showHead2(V);
  draw3(V);
  showReadout(V);
  V.root.dataset.painted = "1";
  fromSelected(V);
  return () => {
    resize.disconnect();
    if (V.cleanup) V.cleanup();
    for (const t of V.waiting.values()) clearTimeout(t);
    for (const [name, fn] of events) model.off(name, fn);
  };
}
var history_matrix_default = { render: render3 };
export {
  history_matrix_default as default
};
