// @ts-check
// Version labels: "flask-1.0 (v6)" where a snapshot names the version, plain "v6" otherwise;
// and the distinguishing part of labels that share a prefix ("flask-0.1", "flask-0.2" -> "0.1", "0.2").

/** Where a shared prefix or suffix may be cut: after (or before) one of these. */
const SEPARATORS = "-_ ./:@";

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
