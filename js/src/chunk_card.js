// @ts-check
// The chunk card, the same in every widget: the query's terms highlighted (text nodes in a
// <mark class="ragtt-hl">, never HTML), the text scrolled to its best-matching sentence (or,
// in a diff, to the first changed run), and a toggle that expands it to the full chunk.
//
// Test hook: the card's `data-best` is the index of the sentence (or run) it scrolled to.

import { el } from "./dom.js";

const STOP = new Set(("a an and are as at be by can do does for from how i if in is it its of on or so "
  + "that the their then there these this to was what when where which who why will with you your my me "
  + "we our have has had not no yes").split(" "));
const WORD = /[\p{L}\p{N}_]+/gu;
const OP_CLASS = { delete: "ragtt-wd-del", insert: "ragtt-wd-ins" };

/**
 * What a card shows.
 * @typedef {object} CardSpec
 * @property {string} id chunk id (the card's `data-chunk-id`)
 * @property {string} text the chunk's text (ignored when `runs` is given)
 * @property {Array<[string, string]>} [meta] [class, text] spans before the source, e.g. rank, score
 * @property {string} [source]
 * @property {string[]} [badges] short words after the source ("new", "changed")
 * @property {string[]} [terms] query terms to highlight (see `queryTerms`)
 * @property {Array<[string, string]>} [runs] a word diff as grouped runs [op, text], op equal/delete/insert
 * @property {string} [cls] extra classes
 * @property {"li" | "div"} [tag]
 */

/**
 * The words of a query worth highlighting: lowercase, no stop words, no single letters.
 * @param {string | null | undefined} query
 * @returns {string[]}
 */
export function queryTerms(query) {
  const out = new Set();
  for (const m of String(query || "").toLowerCase().matchAll(WORD)) {
    if (m[0].length > 1 && !STOP.has(m[0])) out.add(m[0]);
  }
  return [...out];
}

/**
 * The term a word matches, if any: the same word, or (terms of 4+ letters) a word that starts
 * with it or that it starts with, so "refund" finds "refunds" and "refunded".
 * @param {string} word lowercase
 * @param {string[]} terms
 * @returns {string | null}
 */
function matchTerm(word, terms) {
  for (const t of terms) {
    if (word === t) return t;
    if (t.length >= 4 && word.length >= 4 && (word.startsWith(t) || t.startsWith(word))) return t;
  }
  return null;
}

/**
 * Split text into sentences (ending at . ! ? before a space, or at a line break), keeping every
 * character, so the pieces join back to the text.
 * @param {string} text
 * @returns {string[]}
 */
export function sentences(text) {
  const out = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const end = c === "\n" || (".!?".includes(c) && (i + 1 === text.length || /\s/.test(text[i + 1])));
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

/**
 * Append `text` to `parent` as text nodes, each term-matching word in a mark; returns the
 * distinct terms and the hits found.
 * @param {Node} parent
 * @param {string} text
 * @param {string[]} terms
 * @returns {{distinct: number, hits: number}}
 */
export function appendHighlighted(parent, text, terms) {
  let last = 0, hits = 0;
  const seen = new Set();
  if (terms.length) {
    for (const m of text.matchAll(WORD)) {
      const t = matchTerm(m[0].toLowerCase(), terms);
      if (!t) continue;
      const at = /** @type {number} */ (m.index);
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

/**
 * Fill `body` with the text's sentences (or the diff's runs); returns the piece to scroll to.
 * @param {HTMLElement} body
 * @param {CardSpec} spec
 * @param {string[]} terms
 * @returns {{target: HTMLElement | null, index: number}}
 */
function fillBody(body, spec, terms) {
  let best = null, bestIndex = -1, bestScore = [0, 0];
  if (spec.runs) {
    spec.runs.forEach(([op, text], i) => {
      const cls = OP_CLASS[op];
      const node = el(op === "delete" ? "del" : op === "insert" ? "ins" : "span", cls || "ragtt-wd-eq");
      appendHighlighted(node, text, terms);
      body.append(node);
      if (cls && !best) { best = node; bestIndex = i; }
    });
    return { target: best, index: bestIndex };
  }
  sentences(spec.text).forEach((s, i) => {
    const node = el("span", "ragtt-sentence");
    const { distinct, hits } = appendHighlighted(node, s, terms);
    body.append(node);
    if (distinct > bestScore[0] || (distinct === bestScore[0] && hits > bestScore[1])) {
      best = node; bestIndex = i; bestScore = [distinct, hits];
    }
  });
  return { target: best, index: bestIndex };
}

/**
 * Scroll a collapsed card's text so `target` is at its top (after layout: the card must be in
 * the page), and show the toggle only when there is more to see.
 * @param {HTMLElement} card
 */
export function reveal(card) {
  const body = /** @type {HTMLElement | null} */ (card.querySelector(".ragtt-chunk-text"));
  const toggle = /** @type {HTMLElement | null} */ (card.querySelector(".ragtt-card-toggle"));
  if (!body || !toggle) return;
  const expanded = card.classList.contains("ragtt-expanded");
  const idx = Number(card.dataset.best);
  const target = idx >= 0 ? /** @type {HTMLElement | undefined} */ (body.children[idx]) : undefined;
  body.scrollTop = !expanded && target ? Math.max(0, target.offsetTop - 2) : 0;
  toggle.hidden = !expanded && body.scrollHeight <= body.clientHeight + 1;
}

/**
 * A chunk card (see the module's header).
 * @param {CardSpec} spec
 * @returns {HTMLElement}
 */
export function chunkCard(spec) {
  const card = el(spec.tag || "li", `ragtt-chunk${spec.cls ? ` ${spec.cls}` : ""}`);
  card.dataset.chunkId = spec.id;
  const meta = el("div", "ragtt-chunk-meta");
  for (const [cls, text] of spec.meta || []) meta.append(el("span", cls, text));
  if (spec.source !== undefined) meta.append(el("span", "ragtt-source", spec.source));
  for (const b of spec.badges || []) meta.append(el("span", `ragtt-badge ragtt-badge-${b.replace(/[^a-z0-9-]/gi, "")}`, b));
  const open = card.classList.contains("ragtt-expanded");
  const toggle = el("button", "ragtt-card-toggle", open ? "less" : "more");
  toggle.type = "button";
  toggle.setAttribute("aria-expanded", String(open));
  toggle.addEventListener("click", (e) => {
    e.stopPropagation();  // expanding is not selecting
    const open = card.classList.toggle("ragtt-expanded");
    toggle.textContent = open ? "less" : "more";
    toggle.setAttribute("aria-expanded", String(open));
    reveal(card);
  });
  meta.append(toggle);
  const body = el("div", "ragtt-chunk-text");
  const { index } = fillBody(body, spec, spec.terms || []);
  card.dataset.best = String(index);
  card.append(meta, body);
  requestAnimationFrame(() => { if (card.isConnected) reveal(card); });
  return card;
}
