// @ts-check
// Version labels: "flask-1.0 (v6)" where a snapshot names the version, plain "v6" otherwise;
// the distinguishing part of labels that share a prefix ("flask-0.1", "flask-0.2" -> "0.1", "0.2");
// and their placement on one line of a canvas axis without overlaps (the Timeline's and the
// HistoryMatrix's version axes). Counts in words: "1 query", "2 queries". Times in UTC, a
// midnight (a release date) as its date alone, in every widget alike.

/** Where a shared prefix or suffix may be cut: after (or before) one of these. */
const SEPARATORS = "-_ ./:@";
/** CSS px between two labels on one line. */
export const LABEL_GAP = 6;

/**
 * A count with its noun, singular for one (ragtt.values.counted's, in Python).
 * @param {number} n @param {string} one @param {string} [many] the plural (default: `one` + "s")
 */
export function counted(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * A time in UTC as every widget writes it: a midnight (a dated ingest's `as_of`, e.g. a release
 * date) as its date alone ("2016-05-29"), else "2026-12-03 22:44:15 UTC" (its milliseconds when
 * it has some).
 * @param {number} ms milliseconds since the epoch
 * @returns {string}
 */
export function timeText(ms) {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return `${(ms / 1000).toPrecision(12)} s`;  // beyond what Date holds
  const iso = date.toISOString();
  if (ms % 86_400_000 === 0) return iso.slice(0, 10);
  return iso.replace("T", " ").replace(".000Z", "Z").replace("Z", " UTC");
}

/** An ISO 8601 time with a zone, as the wire carries one ("2016-05-29T00:00:00.000000Z"). */
const ISO_TIME = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:?\d\d)$/;

/**
 * An ISO 8601 time from the wire as `timeText` writes it, to the second ("2016-05-29" for a
 * midnight); any other text (a version number, nothing) as it is.
 * @param {string} text
 * @returns {string}
 */
export function isoTimeText(text) {
  const m = ISO_TIME.exec(text);
  const ms = m ? Date.parse(`${m[1]}${m[2]}`) : NaN;
  return Number.isNaN(ms) ? text : timeText(ms);
}

/**
 * The one form a version takes in every widget (ragtt.results.version_label's, in Python).
 * @param {number} version
 * @param {Record<string, string> | undefined | null} names version (as a string) -> the snapshot
 *   label that names it (`Project.version_labels()`)
 * @returns {string}
 */
export function versionLabel(version, names) {
  const name = names && names[String(version)];
  return name ? `${name} (v${version})` : `v${version}`;
}

/**
 * A version's text on a version axis: its snapshot label's distinguishing part (`shortOf`,
 * from `distinguishing`) where a snapshot names it, else "v6".
 * @param {number} version
 * @param {Record<string, string>} names version (as a string) -> snapshot label
 * @param {Map<string, string>} shortOf label -> its distinguishing part
 * @returns {string}
 */
export function slotText(version, names, shortOf) {
  const name = names[String(version)];
  return name ? shortOf.get(name) || name : `v${version}`;
}

/**
 * The part of each label that tells it from the others: a prefix (and a suffix) that all of
 * them share is dropped, cut at a separator so "flask-0.1" and "flask-0.10" keep "0.1" and
 * "0.10". One label, or labels with nothing in common, come back whole.
 * @param {string[]} labels
 * @returns {string[]}
 */
export function distinguishing(labels) {
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

/** @param {string[]} xs */
function commonPrefix(xs) {
  let p = xs[0];
  for (const x of xs) while (!x.startsWith(p)) p = p.slice(0, -1);
  return p;
}

/**
 * Shorten `s` until `ok(s)` holds (or it is empty).
 * @param {string} s
 * @param {(s: string) => boolean} ok
 * @param {(s: string) => string} step
 */
function cutAt(s, ok, step) {
  while (s && !ok(s)) s = step(s);
  return s;
}

/**
 * @typedef {{x: number, text: string, [key: string]: any}} Mark
 * @typedef {{x0: number, x1: number, text: string, mark: Mark, row?: number}} LabelBox
 */

/** Place labels on one line without overlaps: each right of its mark (up to the next mark),
 *  else left of it, cut with "…" when only part fits, skipped when not even that does.
 *  `first` (the cursor's label) is placed before the others, in full, and they make room.
 * @param {CanvasRenderingContext2D} g @param {Mark[]} marks @param {number} left @param {number} right
 * @param {Mark | null} [first]
 * @returns {LabelBox[]} */
export function placeLabels(g, marks, left, right, first = null) {
  const sorted = [...marks].sort((a, b) => a.x - b.x);
  const minW = g.measureText("ab…").width;
  /** @type {LabelBox[]} */
  const boxes = [];
  /** @type {LabelBox | null} */
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
    const limit = Math.min(right, k + 1 < sorted.length ? sorted[k + 1].x - 3 : Infinity,
      held && before ? held.x0 - LABEL_GAP : Infinity);
    const full = g.measureText(m.text).width;
    const rightRoom = m.x + 4 >= floor ? limit - (m.x + 4) : -1;
    const leftRoom = m.x - 4 - floor;
    let side, room;
    if (full <= rightRoom) { side = "right"; room = full; }
    else if (full <= leftRoom) { side = "left"; room = full; }
    else if (Math.max(rightRoom, leftRoom) >= minW) {
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
