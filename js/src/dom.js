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
