// Generated from js/src/chunk_diff.js by js/build.mjs (./dev build): edit the sources, not this file.

// js/src/chunk_diff.js
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
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== void 0 && text !== null) node.textContent = String(text);
  return node;
}
var fmt = (x) => Number.isFinite(x) ? x.toFixed(4) : "";
var signed = (x) => (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(4);
function render({ model, el: host }) {
  const root = el("div", "ragtt-chunk-diff");
  host.append(root);
  let d, chunks;
  function decode() {
    d = model.get("_data");
    const c = d.chunks;
    chunks = c.ids.map((id, i) => ({ i, id, source: c.sources[i], text: c.texts[i] }));
    const [rl, rr, sl, sr] = [typed(c.rank_left), typed(c.rank_right), typed(c.score_left), typed(c.score_right)];
    for (const ch of chunks) {
      ch.rankL = rl[ch.i];
      ch.rankR = rr[ch.i];
      ch.scoreL = sl[ch.i];
      ch.scoreR = sr[ch.i];
      ch.state = ch.rankL && ch.rankR ? "kept" : ch.rankL ? "removed" : "added";
    }
  }
  function card(ch, side) {
    const li = el("li", `ragtt-chunk ragtt-${ch.state}`);
    li.dataset.chunkId = ch.id;
    li.tabIndex = 0;
    li.setAttribute("role", "button");
    if (model.get("selected").includes(ch.id)) li.classList.add("ragtt-selected");
    const meta = el("div", "ragtt-chunk-meta");
    const rank = side === "left" ? ch.rankL : ch.rankR;
    meta.append(el("span", "ragtt-rank", `#${rank}`));
    if (ch.state === "kept" && side === "right") {
      const moved = ch.rankL - ch.rankR;
      const arrow = moved > 0 ? `▲${moved}` : moved < 0 ? `▼${-moved}` : "=";
      meta.append(el("span", `ragtt-move ${moved > 0 ? "ragtt-up" : moved < 0 ? "ragtt-down" : ""}`, arrow));
      meta.append(el("span", "ragtt-score", `${fmt(ch.scoreR)} (${signed(ch.scoreR - ch.scoreL)})`));
    } else {
      meta.append(el("span", "ragtt-score", fmt(side === "left" ? ch.scoreL : ch.scoreR)));
    }
    if (ch.state !== "kept") meta.append(el("span", "ragtt-badge", ch.state));
    meta.append(el("span", "ragtt-source", ch.source));
    li.append(meta, el("div", "ragtt-chunk-text", ch.text));
    return li;
  }
  function column(side) {
    const run = d[side];
    const col = el("div", `ragtt-cd-col ragtt-cd-${side}`);
    const head = el("div", "ragtt-cd-colhead");
    head.append(
      el("span", "ragtt-cd-when", side === "left" ? "Then" : "Now"),
      el("span", "ragtt-cd-version", `index v${run.version}`),
      el("code", "ragtt-cd-id", run.id)
    );
    col.append(head, el("div", "ragtt-cd-query", run.query));
    const ol = el("ol", "ragtt-cd-list");
    const key = side === "left" ? "rankL" : "rankR";
    chunks.filter((c) => c[key] > 0).sort((a, b) => a[key] - b[key]).forEach((c) => ol.append(card(c, side)));
    col.append(ol);
    if (run.answer !== null && run.answer !== void 0) {
      col.append(el("div", "ragtt-cd-answer-title", "Answer"), el("div", "ragtt-cd-answer", run.answer));
    }
    return col;
  }
  function detail() {
    const box = el("div", "ragtt-cd-detail");
    const sel = model.get("selected");
    box.append(el("div", "ragtt-cd-status", `${sel.length} selected`));
    const ch = chunks.find((c) => c.id === sel[0]);
    if (!ch) {
      box.append(el("div", "ragtt-cd-hint", "Click a chunk to see how it changed."));
      return box;
    }
    const reason = d.reasons && d.reasons[ch.id];
    if (ch.state === "kept") {
      box.append(el(
        "div",
        "ragtt-cd-hint",
        `Kept: rank #${ch.rankL} → #${ch.rankR}, score ${fmt(ch.scoreL)} → ${fmt(ch.scoreR)} (${signed(ch.scoreR - ch.scoreL)}); text unchanged.`
      ));
    } else {
      const wd = d.word_diffs[ch.id];
      const head = wd && wd.counterpart ? `${ch.state === "added" ? "Added" : "Removed"} chunk vs its nearest counterpart from ${ch.source} ${ch.state === "added" ? "then" : "now"} (similarity ${wd.similarity.toFixed(2)})` : `${ch.state === "added" ? "Added" : "Removed"} chunk: ${wd ? wd.note : "no counterpart"}`;
      box.append(el("div", "ragtt-cd-hint", head));
      const pre = el("div", "ragtt-worddiff");
      if (wd) {
        for (let i = 0; i < wd.ops.length; i++) {
          const op = wd.ops[i];
          const tag = op === "+" ? "ins" : op === "-" ? "del" : "span";
          pre.append(el(tag, op === "=" ? "" : `ragtt-wd-${op === "+" ? "ins" : "del"}`, wd.segments[i]));
        }
      }
      box.append(pre);
    }
    box.append(el("div", "ragtt-cd-reason", reason ? `Why: ${reason}` : "Why: lineage is not available for this diff."));
    return box;
  }
  function draw() {
    decode();
    const s = d.summary;
    const head = el("div", "ragtt-cd-head");
    head.append(
      el("span", "ragtt-cd-title", "Chunk diff"),
      el("span", "ragtt-cd-counts", `+${s.added} added · −${s.removed} removed · ${s.kept} kept`),
      el("span", "ragtt-cd-metrics", `RBO ${s.rbo.toFixed(3)} · Jaccard ${s.jaccard.toFixed(3)}` + (s.answer_similarity ? ` · answer cosine ${s.answer_similarity.embedding_cosine.toFixed(3)}` : ""))
    );
    const cols = el("div", "ragtt-cd-cols");
    cols.append(column("left"), column("right"));
    const notes = el("ul", "ragtt-cd-notes");
    for (const n of s.notes || []) notes.append(el("li", "", n));
    root.replaceChildren(head, notes, cols, detail());
  }
  function choose(id, extend) {
    const sel = model.get("selected");
    const next = extend ? sel.includes(id) ? sel.filter((x) => x !== id) : [...sel, id] : sel.length === 1 && sel[0] === id ? [] : [id];
    model.set("selected", next);
    model.save_changes();
  }
  const onClick = (e) => {
    const li = e.target.closest(".ragtt-chunk");
    if (li && root.contains(li)) choose(li.dataset.chunkId, e.shiftKey || e.metaKey || e.ctrlKey);
  };
  const onKey = (e) => {
    const li = e.target.closest && e.target.closest(".ragtt-chunk");
    if (li && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      choose(li.dataset.chunkId, e.shiftKey);
    }
  };
  root.addEventListener("click", onClick);
  root.addEventListener("keydown", onKey);
  model.on("change:selected", draw);
  model.on("change:_data", draw);
  draw();
  return () => {
    model.off("change:selected", draw);
    model.off("change:_data", draw);
  };
}
var chunk_diff_default = { render };
export {
  chunk_diff_default as default
};
