// @ts-check
// The anywidget model interface (get/set/on/off/save_changes/send) without a widget manager,
// so the notebook widgets render in a plain page: over ragtt serve's REST API (the /ui
// dashboard, the JupyterLab tabs: state from GET /ui/api/model/{widget}, what a view sends
// answered by POST .../msg), and from the saved widget state of an exported report.

import { fromBase64 } from "./wire.js";

/** @typedef {import("./types.js").Model} Model */

/**
 * Buffers arrive as `{"$buffer": base64}`; the views want ArrayBuffers.
 * @param {any} value
 * @returns {any}
 */
export function unwire(value) {
  if (Array.isArray(value)) return value.map(unwire);
  if (value === null || typeof value !== "object") return value;
  if (typeof value.$buffer === "string") return fromBase64(value.$buffer);
  /** @type {Record<string, any>} */
  const out = {};
  for (const [k, v] of Object.entries(value)) out[k] = unwire(v);
  return out;
}

/**
 * A model holding `state` locally. `set` fires `change:NAME` (as anywidget's does);
 * `save_changes` hands the names set since the last save to `onSave` (there is no kernel
 * object to sync); `send` posts the message and fires `msg:custom` with each reply.
 * @param {Record<string, any>} state the widget's traits, already unwired
 * @param {{reply: (content: any) => Promise<{content: any, buffers: any[]}[]>, onSave?: (changed: Record<string, any>) => void}} hooks
 * @returns {Model}
 */
export function createModel(state, hooks) {
  const values = { ...state };
  /** @type {Map<string, Set<(...args: any[]) => void>>} */
  const listeners = new Map();
  /** @type {Set<string>} */
  const dirty = new Set();
  /** @param {string} event @param {...any} args */
  const emit = (event, ...args) => { for (const fn of [...(listeners.get(event) || [])]) fn(...args); };
  return {
    get: (name) => values[name],
    set: (name, value) => { values[name] = value; dirty.add(name); emit(`change:${name}`, value); },
    on: (event, fn) => {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event)?.add(fn);
    },
    off: (event, fn) => { if (fn) listeners.get(event)?.delete(fn); else listeners.delete(event); },
    save_changes: () => {
      /** @type {Record<string, any>} */
      const changed = {};
      for (const name of dirty) changed[name] = values[name];
      dirty.clear();
      if (hooks.onSave) hooks.onSave(changed);
    },
    send: (content) => {
      hooks.reply(content).then(
        (replies) => { for (const r of replies) emit("msg:custom", unwire(r.content), unwire(r.buffers || [])); },
        (err) => console.warn("ragtt: a widget message got no answer:", err),
      );
    },
  };
}
