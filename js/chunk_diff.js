// Generated from js/src/chunk_diff.js by js/build.mjs (./dev build): edit the sources, not this file.

// js/src/dom.js
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== void 0 && text !== null) node.textContent = String(text);
  return node;
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
export {
  chunk_diff_default as default
};
