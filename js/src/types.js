// @ts-check
// Types shared by the widget modules (JSDoc only; this module exports nothing at run time).

/**
 * The narrow model interface anywidget hands a view.
 * @typedef {object} Model
 * @property {(name: string) => any} get
 * @property {(name: string, value: any) => void} set
 * @property {(event: string, fn: (...args: any[]) => void) => void} on
 * @property {(event: string, fn?: (...args: any[]) => void) => void} off
 * @property {() => void} save_changes
 * @property {(msg: any, callbacks?: any, buffers?: any[]) => void} send
 */

/**
 * What anywidget passes to `render`.
 * @typedef {object} RenderProps
 * @property {Model} model
 * @property {HTMLElement} el
 */

/**
 * A binary buffer as the Python side sends it (ragtt/views/wire.py's `array`).
 * @typedef {object} Buffer
 * @property {string} dtype
 * @property {number[]} shape
 * @property {ArrayBuffer | ArrayBufferView} view
 */

export {};
