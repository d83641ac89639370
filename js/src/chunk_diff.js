// @ts-check
// ragtt ChunkDiff: two runs side by side with rank arrows and score deltas; below them the
// changed passages, each one card with its word diff in grouped runs (one deletion run, one
// insertion run per edit); a click on any chunk says how it changed and why, right under the
// card clicked (not at the foot of the widget, a screen away).
// Untrusted text reaches the DOM only as text (the shared chunk card).

import { el } from "./dom.js";
import { typed } from "./wire.js";
import { versionLabel } from "./labels.js";
import { changedWords, chunkCard, queryTerms } from "./chunk_card.js";

/** @typedef {import("./types.js").Model} Model */

const OPS = { e: "equal", d: "delete", i: "insert" };

/** @param {number} x */
const fmt = (x) => (Number.isFinite(x) ? x.toFixed(4) : "");
/** @param {number} x */
const signed = (x) => (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(4);

/**
 * @typedef {object} Chunk
 * @property {number} i
 * @property {string} id
 * @property {string} source
 * @property {string} text
 * @property {number} rankL
 * @property {number} rankR
 * @property {number} scoreL
 * @property {number} scoreR
 * @property {"kept" | "removed" | "added" | "changed"} state
 * @property {Pair | null} pair
 */
/**
 * @typedef {object} Pair
 * @property {Chunk} left
 * @property {Chunk} right
 * @property {number} similarity
 * @property {Array<[string, string]>} runs
 */

/** @param {any} d the `_data` trait */
function decode(d) {
  const c = d.chunks;
  const [rl, rr, sl, sr] = [typed(c.rank_left), typed(c.rank_right), typed(c.score_left), typed(c.score_right)];
  /** @type {Chunk[]} */
  const chunks = c.ids.map((/** @type {string} */ id, /** @type {number} */ i) => ({
    i, id, source: c.sources[i], text: c.texts[i], rankL: rl[i], rankR: rr[i], scoreL: sl[i], scoreR: sr[i],
    state: rl[i] && rr[i] ? "kept" : rl[i] ? "removed" : "added", pair: null,
  }));
  const pl = typed(d.pairs.left), pr = typed(d.pairs.right), sim = typed(d.pairs.similarity);
  /** @type {Pair[]} */
  const pairs = [];
  for (let k = 0; k < pl.length; k++) {
    const runs = /** @type {Array<[string, string]>} */ (
      [...d.pairs.ops[k]].map((op, j) => [OPS[/** @type {"e"|"d"|"i"} */ (op)], d.pairs.runs[k][j]]));
    const pair = { left: chunks[pl[k]], right: chunks[pr[k]], similarity: sim[k], runs };
    for (const ch of [pair.left, pair.right]) { ch.state = "changed"; ch.pair = pair; }
    pairs.push(pair);
  }
  return { ...d, chunks, pairs, terms: queryTerms(d.left.query), names: d.labels || {} };
}

/** @typedef {ReturnType<typeof decode>} Data */

/** A chunk's card in one run's column. @param {Data} d @param {Chunk} ch @param {"left" | "right"} side
 * @param {Set<string>} selected */
function columnCard(d, ch, side, selected) {
  const rank = side === "left" ? ch.rankL : ch.rankR;
  /** @type {Array<[string, string]>} */
  const meta = [["ragtt-rank", `#${rank}`]];
  if (ch.state === "kept" && side === "right") {
    const moved = ch.rankL - ch.rankR;
    meta.push([`ragtt-move ${moved > 0 ? "ragtt-up" : moved < 0 ? "ragtt-down" : ""}`,
      moved > 0 ? `▲${moved}` : moved < 0 ? `▼${-moved}` : "="]);
    meta.push(["ragtt-score", `${fmt(ch.scoreR)} (${signed(ch.scoreR - ch.scoreL)})`]);
  } else {
    meta.push(["ragtt-score", fmt(side === "left" ? ch.scoreL : ch.scoreR)]);
  }
  // a changed passage's card marks the words its edit took out (then) or put in (now), and
  // scrolls to them
  const changed = ch.pair ? side === "left" ? { words: changedWords(ch.pair.runs, "delete", ch.text), cls: "ragtt-wd-del" }
    : { words: changedWords(ch.pair.runs, "insert", ch.text), cls: "ragtt-wd-ins" } : undefined;
  const card = chunkCard({
    id: ch.id, text: ch.text, source: ch.source, meta, terms: d.terms, changed,
    badges: ch.state === "kept" ? [] : [ch.state],
    cls: `ragtt-${ch.state}${selected.has(ch.id) ? " ragtt-selected" : ""}`,
  });
  card.tabIndex = 0;
  card.setAttribute("role", "button");
  return card;
}

/** One run's column: its version, query, chunks by rank and answer.
 * @param {Data} d @param {"left" | "right"} side @param {Set<string>} selected */
function column(d, side, selected) {
  const run = d[side];
  const col = el("div", `ragtt-cd-col ragtt-cd-${side}`);
  const head = el("div", "ragtt-cd-colhead");
  head.append(el("span", "ragtt-cd-when", side === "left" ? "Then" : "Now"),
    el("span", "ragtt-cd-version", `index ${versionLabel(run.version, d.names)}`), el("code", "ragtt-cd-id", run.id));
  col.append(head, el("div", "ragtt-cd-query", run.query));
  const ol = el("ol", "ragtt-cd-list");
  const key = side === "left" ? "rankL" : "rankR";
  d.chunks.filter((c) => c[key] > 0).sort((a, b) => a[key] - b[key])
    .forEach((c) => ol.append(columnCard(d, c, side, selected)));
  col.append(ol);
  if (run.answer !== null && run.answer !== undefined) {
    col.append(el("div", "ragtt-cd-answer-title", "Answer"), el("div", "ragtt-cd-answer", run.answer));
  }
  return col;
}

/** The card of a changed passage: one card, the word diff in runs. @param {Data} d @param {Pair} p
 * @param {Set<string>} selected */
function pairCard(d, p, selected) {
  const card = chunkCard({
    id: p.right.id, text: p.right.text, source: p.right.source, runs: p.runs, terms: d.terms,
    meta: [["ragtt-rank", `#${p.left.rankL} → #${p.right.rankR}`],
      ["ragtt-cd-similarity", `similarity ${p.similarity.toFixed(2)}`]],
    badges: ["changed"], tag: "li",
    cls: `ragtt-changed ragtt-cd-pair${selected.has(p.right.id) || selected.has(p.left.id) ? " ragtt-selected" : ""}`,
  });
  card.dataset.leftId = p.left.id;
  card.tabIndex = 0;
  card.setAttribute("role", "button");
  return card;
}

/** Below the columns: every changed passage, then the chunks with no counterpart.
 * @param {Data} d @param {Set<string>} selected */
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
    box.append(el("div", "ragtt-cd-section",
      `No counterpart (${lone.length}): passages that are new in the now run or gone from it`));
    const ul = el("ul", "ragtt-cd-lone");
    for (const c of lone) {
      const side = c.state === "added" ? "now" : "then";
      ul.append(el("li", `ragtt-cd-lone-item ragtt-${c.state}`,
        `${c.state} (#${c.state === "added" ? c.rankR : c.rankL} ${side}) ${c.source}: no counterpart`));
    }
    box.append(ul);
  }
  return box;
}

/** How the first selected chunk changed, and why. @param {Data} d @param {string[]} sel
 * @param {"div" | "li"} [tag] "li" when it goes in a list, under the card clicked */
function detail(d, sel, tag = "div") {
  const box = el(tag, "ragtt-cd-detail");
  box.append(el("div", "ragtt-cd-status", `${sel.length} selected`));
  const ch = d.chunks.find((c) => c.id === sel[0]);
  if (!ch) {
    box.append(el("div", "ragtt-cd-hint", "Click a chunk to see how it changed and why."));
    return box;
  }
  if (ch.state === "kept") {
    box.append(el("div", "ragtt-cd-hint", `Kept: rank #${ch.rankL} → #${ch.rankR}, score ${fmt(ch.scoreL)} → `
      + `${fmt(ch.scoreR)} (${signed(ch.scoreR - ch.scoreL)}); text unchanged.`));
  } else if (ch.pair) {
    const p = ch.pair;
    box.append(el("div", "ragtt-cd-hint", `Changed passage of ${p.right.source} (similarity ${p.similarity.toFixed(2)}): `
      + `#${p.left.rankL} at ${versionLabel(d.left.version, d.names)} → #${p.right.rankR} at ${versionLabel(d.right.version, d.names)}`));
    box.append(chunkCard({ id: p.right.id, text: p.right.text, runs: p.runs, terms: d.terms, tag: "div",
      cls: "ragtt-changed ragtt-expanded ragtt-cd-worddiff" }));
  } else {
    box.append(el("div", "ragtt-cd-hint", `${ch.state === "added" ? "Added" : "Removed"}: no counterpart from `
      + `${ch.source} ${ch.state === "added" ? "then" : "now"} (no passage of it is similar enough to pair).`));
  }
  const reason = d.reasons && (d.reasons[ch.id] || (ch.pair && d.reasons[ch.pair.left.id]));
  box.append(el("div", "ragtt-cd-reason", reason ? `Why: ${reason}` : "Why: lineage is not available for this diff."));
  return box;
}

/** The headline: changed / added / removed / kept, and the overlap metrics. @param {Data} d */
function headline(d) {
  const s = d.summary;
  const head = el("div", "ragtt-cd-head");
  head.append(el("span", "ragtt-cd-title", "Chunk diff"),
    el("span", "ragtt-cd-counts", `${s.changed} changed · ${s.added} added · ${s.removed} removed · ${s.kept} kept`),
    el("span", "ragtt-cd-metrics", `RBO ${s.rbo.toFixed(3)} · Jaccard ${s.jaccard.toFixed(3)}`
      + (s.answer_similarity ? ` · answer cosine ${s.answer_similarity.embedding_cosine.toFixed(3)}` : "")));
  const notes = el("ul", "ragtt-cd-notes");
  for (const n of s.notes || []) notes.append(el("li", "", n));
  /** @type {HTMLElement[]} */
  const out = [head];
  if (s.warning) out.push(el("div", "ragtt-cd-warning", `⚠ ${s.warning}`));
  out.push(notes);
  return out;
}

/** Then vs now answer as one word diff (deleted and inserted runs), under the columns; an
 * answer this diff generated for a run that had none says so. @param {Data} d */
function answerDiff(d) {
  const s = d.summary, ops = s.answer_ops || "";
  if (!ops || ![...ops].some((op) => op !== "e")) return [];
  const runs = /** @type {Array<[string, string]>} */ ([...ops].map((op, j) => [OPS[/** @type {"e"|"d"|"i"} */ (op)], s.answer_runs[j]]));
  const box = el("div", "ragtt-cd-answers");
  const made = Object.keys(s.generated || {}).map((side) => (side === "left" ? "then" : "now"));
  box.append(el("div", "ragtt-cd-section", `Answer, then → now${made.length ? ` (the ${made.join(" and ")} answer generated for this diff, logged as a replay)` : ""}`),
    chunkCard({ id: "answer", text: d.right.answer || "", runs, terms: d.terms, tag: "div",
      cls: "ragtt-changed ragtt-expanded ragtt-cd-worddiff ragtt-cd-answer-diff" }));
  return [box];
}

/** @param {HTMLElement} root @param {Model} model @param {{scope: string}} clicked where the
 * last click was (a column or the changed passages), so the detail goes under that card */
function draw(root, model, clicked) {
  const d = decode(model.get("_data"));
  const sel = model.get("selected");
  const selected = new Set(sel);
  const cols = el("div", "ragtt-cd-cols");
  cols.append(column(d, "left", selected), column(d, "right", selected));
  const below = changes(d, selected);
  root.replaceChildren(...headline(d), cols, ...answerDiff(d), below);
  const scope = clicked.scope ? root.querySelector(`.${clicked.scope}`) : null;
  const cards = [...(scope || root).querySelectorAll(".ragtt-chunk")].map((c) => /** @type {HTMLElement} */ (c));
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

/** Click (shift/ctrl/cmd: add) or Enter/Space on a card selects it.
 * @param {HTMLElement} root @param {Model} model @param {{scope: string}} clicked */
function attachSelection(root, model, clicked) {
  const choose = (/** @type {string} */ id, /** @type {boolean} */ extend) => {
    const sel = model.get("selected");
    const next = extend ? (sel.includes(id) ? sel.filter((/** @type {string} */ x) => x !== id) : [...sel, id])
      : (sel.length === 1 && sel[0] === id ? [] : [id]);
    model.set("selected", next);  // fires change:selected, which redraws
    model.save_changes();
  };
  const cardOf = (/** @type {EventTarget | null} */ t) => {
    const li = t instanceof Element ? /** @type {HTMLElement | null} */ (t.closest(".ragtt-chunk")) : null;
    return li && root.contains(li) && li.dataset.chunkId && !li.classList.contains("ragtt-cd-worddiff") ? li : null;
  };
  const remember = (/** @type {HTMLElement} */ li) => {
    const scope = li.closest(".ragtt-cd-left, .ragtt-cd-right, .ragtt-cd-pairs");
    clicked.scope = scope ? ["ragtt-cd-left", "ragtt-cd-right", "ragtt-cd-pairs"].find((c) => scope.classList.contains(c)) || "" : "";
  };
  root.addEventListener("click", (e) => {
    const li = cardOf(e.target);
    if (li) remember(li);
    if (li) choose(/** @type {string} */ (li.dataset.chunkId), e.shiftKey || e.metaKey || e.ctrlKey);
  });
  root.addEventListener("keydown", (e) => {
    const li = cardOf(e.target);
    if (li && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      remember(li);
      choose(/** @type {string} */ (li.dataset.chunkId), e.shiftKey);
    }
  });
}

/** @param {import("./types.js").RenderProps} props */
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

export default { render };
