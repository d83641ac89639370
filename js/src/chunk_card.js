// @ts-check
// The chunk card, the same in every widget: the query's terms highlighted (text nodes in a
// <mark class="ragtt-hl">, never HTML), the text scrolled to its best-matching sentence (or,
// in a diff, to the stretch with the most changed words, a line of context above it), and a
// toggle that expands it to the full chunk.
//
// Test hook: the card's `data-best` is the index of the sentence (or run) it scrolled to; in a
// diff, each changed stretch carries its number of changed words in `data-weight`.

import { el } from "./dom.js";

const STOP = new Set(("a an and are as at be by can do does for from how i if in is it its of on or so "
  + "that the their then there these this to was what when where which who why will with you your my me "
  + "we our have has had not no yes").split(" "));
const WORD = /[\p{L}\p{N}_]+/gu;
const TOKEN = /\S+/g;  // the words a word diff compares (ragtt.timetravel.passages.word_runs)
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
 * @property {{words: Set<number>, cls: string}} [changed] the words of `text` (their indexes, see
 *   `changedWords`) a diff changed, marked with `cls`; the card scrolls to them
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
 * The words of one side of a word diff that it changed: the indexes, in that side's `text`, of
 * the whitespace-separated words in its delete runs ("then") or insert runs ("now"). None when
 * the runs diff other text than `text` (a pair diffed by its subject's entry, past the chunk).
 * @param {Array<[string, string]>} runs
 * @param {"delete" | "insert"} op
 * @param {string} text
 * @returns {Set<number>}
 */
export function changedWords(runs, op, text) {
  const out = new Set();
  let at = 0;
  for (const [o, run] of runs) {
    if (o !== "equal" && o !== op) continue;
    const n = (run.match(TOKEN) || []).length;
    if (o === op) for (let k = 0; k < n; k++) out.add(at + k);
    at += n;
  }
  return at === (text.match(TOKEN) || []).length ? out : new Set();
}

/**
 * A word diff's runs as shown: an edit stays inline in its sentence. A replaced run's own line
 * break, and a line break just before a replacement, show as a space (the texts wrapped their
 * lines at different words: "Python\n3.6" vs "Python 3.5\nand" reads "Python [3.5] {3.6} and");
 * blank lines are kept.
 * @param {Array<[string, string]>} runs
 * @returns {Array<[string, string]>}
 */
function inlineRuns(runs) {
  const soft = (/** @type {string} */ t) => t.replace(/\s+$/, (ws) => (!ws.includes("\n") || /\n[ \t]*\n/.test(ws) ? ws : " "));
  return runs.map(([op, text], i) => {
    const next = runs[i + 1]?.[0], after = runs[i + 2]?.[0];
    const replaced = op === "delete" && next === "insert";
    const beforeReplacement = op === "equal" && next === "delete" && after === "insert";
    return [op, replaced || beforeReplacement ? soft(text) : text];
  });
}

/**
 * Append `text`'s words from the `first`-th on to `node`, each stretch of `changed` words in a
 * span of class `cls` with its word count in `data-weight`; returns the index of the next word.
 * @param {HTMLElement} node
 * @param {string} text
 * @param {number} first
 * @param {{words: Set<number>, cls: string}} changed
 * @param {string[]} terms
 * @returns {number}
 */
function appendChanged(node, text, first, changed, terms) {
  let last = 0, word = first, open = -1, end = 0, n = 0;
  const flush = () => {
    if (open < 0) return;
    if (open > last) appendHighlighted(node, text.slice(last, open), terms);
    const span = el("span", changed.cls);
    span.dataset.weight = String(n);
    appendHighlighted(span, text.slice(open, end), terms);
    node.append(span);
    last = end;
    open = -1;
    n = 0;
  };
  for (const m of text.matchAll(TOKEN)) {
    const at = /** @type {number} */ (m.index);
    if (changed.words.has(word)) {
      if (open < 0) open = at;
      end = at + m[0].length;
      n++;
    } else {
      flush();
    }
    word++;
  }
  flush();
  if (last < text.length) appendHighlighted(node, text.slice(last), terms);
  return word;
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
    let most = 0;
    inlineRuns(spec.runs).forEach(([op, text], i) => {
      const cls = OP_CLASS[op];
      const node = el(op === "delete" ? "del" : op === "insert" ? "ins" : "span", cls || "ragtt-wd-eq");
      appendHighlighted(node, text, terms);
      body.append(node);
      if (!cls) return;
      const words = (text.match(TOKEN) || []).length;
      node.dataset.weight = String(words);
      if (words > most) { most = words; best = node; bestIndex = i; }
    });
    return { target: best, index: bestIndex };
  }
  const changed = spec.changed && spec.changed.words.size ? spec.changed : null;
  let word = 0;
  sentences(spec.text).forEach((s, i) => {
    const node = el("span", "ragtt-sentence");
    if (changed) word = appendChanged(node, s, word, changed, terms);
    const { distinct, hits } = changed ? { distinct: 0, hits: 0 } : appendHighlighted(node, s, terms);
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
  const changes = /** @type {HTMLElement[]} */ ([...body.querySelectorAll("[data-weight]")]);
  body.scrollTop = expanded ? 0 : changes.length ? changedWindow(body, changes)
    : target ? Math.max(0, target.offsetTop - 2) : 0;
  toggle.hidden = !expanded && body.scrollHeight <= body.clientHeight + 1;
}

/**
 * Where a collapsed diff card's text scrolls to: the window (the body's height) holding the
 * most changed words, starting at a change's line or, if that holds as many, a line above it
 * (the start of the sentence the change sits in), never cut right at a change.
 * @param {HTMLElement} body
 * @param {HTMLElement[]} changes
 * @returns {number}
 */
function changedWindow(body, changes) {
  const line = parseFloat(getComputedStyle(body).lineHeight) || 20;
  let most = 0, top = 0;
  for (const from of changes) {
    for (const start of [Math.max(0, from.offsetTop - line), from.offsetTop]) {
      let words = 0;
      for (const c of changes) {
        if (c.offsetTop >= start && c.offsetTop + line <= start + body.clientHeight + 1) words += Number(c.dataset.weight);
      }
      if (words > most) { most = words; top = start; }
    }
  }
  return top;
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
