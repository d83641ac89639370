// @ts-check
// The one DOM helper. Untrusted text (documents, queries, labels) goes in as textContent only.

/**
 * An element with a class and (untrusted-safe) text.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [cls]
 * @param {unknown} [text] set as textContent (never parsed as HTML); null/undefined: none
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

/**
 * A button with a label, an accessible name and a click handler.
 * @param {string} cls
 * @param {string} label
 * @param {string} aria
 * @param {(e: MouseEvent) => void} onClick
 * @returns {HTMLButtonElement}
 */
export function button(cls, label, aria, onClick) {
  const b = el("button", cls, label);
  b.type = "button";
  b.setAttribute("aria-label", aria);
  b.addEventListener("click", onClick);
  return b;
}

/**
 * Theme colours: Jupyter's CSS variables where they are set (light and dark), else fallbacks.
 * @param {Element} root
 * @param {Record<string, [string, string]>} spec name -> [css variable, fallback]
 * @returns {Record<string, string>}
 */
export function themeColors(root, spec) {
  const cs = getComputedStyle(root);
  /** @type {Record<string, string>} */
  const out = {};
  for (const [name, [variable, fallback]] of Object.entries(spec)) {
    out[name] = cs.getPropertyValue(variable).trim() || fallback;
  }
  return out;
}

/**
 * Make `parent`'s children the nodes of `items`, in order, keyed by `key(item)`. A child whose
 * key and `sig(item)` are unchanged is kept, the same node (`update` brings its state up to
 * date): a list painted again never replaces a row under the user's pointer, so a click that
 * began on it still lands. A changed item's node is made again; a gone one is removed.
 * @template T
 * @param {HTMLElement} parent
 * @param {T[]} items
 * @param {{key: (item: T) => string, make: (item: T) => HTMLElement, sig?: (item: T) => string, update?: (node: HTMLElement, item: T) => void}} how
 *   `sig` defaults to the item's JSON
 * @returns {HTMLElement[]} the nodes, in order
 */
export function keyed(parent, items, how) {
  const sig = how.sig || ((item) => JSON.stringify(item));
  /** @type {Map<string, HTMLElement>} */
  const old = new Map();
  for (const child of [...parent.children]) {
    if (child instanceof HTMLElement && child.dataset.key !== undefined && !old.has(child.dataset.key)) {
      old.set(child.dataset.key, child);
    } else {
      child.remove();
    }
  }
  const nodes = items.map((item) => {
    const k = how.key(item);
    const s = sig(item);
    const kept = old.get(k);
    old.delete(k);
    if (kept && kept.dataset.sig === s) {
      if (how.update) how.update(kept, item);
      return kept;
    }
    kept?.remove(); // its item changed: the new node takes its place
    const node = how.make(item);
    node.dataset.key = k;
    node.dataset.sig = s;
    if (how.update) how.update(node, item);
    return node;
  });
  for (const gone of old.values()) gone.remove();
  // Move only what is out of place: a node already where it belongs is not touched.
  let at = parent.firstElementChild;
  for (const node of nodes) {
    if (node === at) at = node.nextElementSibling;
    else parent.insertBefore(node, at);
  }
  return nodes;
}

/** `text` appended to `parent` as text, with a line-break opportunity (<wbr>) after each
 * "/", "_", "-" and ".": a path or name wraps at its separators, not mid-word (with CSS
 * `overflow-wrap: break-word`, a part alone wider than its box still breaks inside).
 * @param {HTMLElement} parent @param {string} text */
export function appendBreakable(parent, text) {
  text.split(/(?<=[/_.-])/).forEach((part, i) => {
    if (i) parent.append(document.createElement("wbr"));
    parent.append(part);
  });
  return parent;
}
