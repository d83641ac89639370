// @ts-check
// The wire format's decoders: binary buffers `{dtype, shape, view}` (ragtt/views/wire.py) back
// into typed arrays, packed strings (UTF-8 bytes + offsets, or hex ids as raw bytes), base64
// text into bytes, and buffers put back into the state they were taken out of.

/** @typedef {import("./types.js").Buffer} Buffer */

const TYPES = {
  int16: Int16Array, uint16: Uint16Array, uint8: Uint8Array, int32: Int32Array, float32: Float32Array,
};

/**
 * Rebuild a typed array from a `{dtype, shape, view}` buffer; unknown dtypes fail loudly.
 * @param {Buffer} buf
 * @returns {any} an Int16Array, Uint16Array, Uint8Array, Int32Array or Float32Array
 */
export function typed(buf) {
  const T = TYPES[buf && buf.dtype];
  if (!T) throw new Error(`ragtt: unsupported buffer dtype ${buf && buf.dtype}`);
  const v = buf.view;
  const bytes = v instanceof ArrayBuffer ? v : v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength);
  const arr = new T(bytes);
  if (arr.length !== buf.shape[0]) throw new Error(`ragtt: buffer length ${arr.length} != shape ${buf.shape[0]}`);
  return arr;
}

/**
 * Strings packed as UTF-8 bytes + int32 offsets (or hex ids as raw bytes), decoded one at a time.
 * @param {{hex?: Buffer, width?: number, bytes?: Buffer, offsets?: Buffer}} packed
 * @returns {{length: number, get: (i: number) => string}}
 */
export function strings(packed) {
  if (packed.hex) {
    const raw = typed(packed.hex), width = packed.width || 1;
    const hex = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
    return {
      length: raw.length / width,
      get: (i) => { let s = ""; for (let k = i * width; k < (i + 1) * width; k++) s += hex[raw[k]]; return s; },
    };
  }
  const bytes = typed(packed.bytes), off = typed(packed.offsets);
  const dec = new TextDecoder();
  return { length: off.length - 1, get: (i) => dec.decode(bytes.subarray(off[i], off[i + 1])) };
}

/**
 * A message's buffers put back where Python's `split_buffers` (ragtt/views/wire.py) took them
 * out: each `{"$ref": k}` becomes buffer `k`.
 * @param {any} value the message's content
 * @param {any[]} buffers the message's buffers (ArrayBuffers or DataViews)
 * @returns {any}
 */
export function joinBuffers(value, buffers) {
  if (Array.isArray(value)) return value.map((v) => joinBuffers(v, buffers));
  if (value === null || typeof value !== "object") return value;
  if (typeof value.$ref === "number" && Object.keys(value).length === 1) return buffers[value.$ref];
  /** @type {Record<string, any>} */
  const out = {};
  for (const [k, v] of Object.entries(value)) out[k] = joinBuffers(v, buffers);
  return out;
}

/**
 * The bytes that `text` holds in base64.
 * @param {string} text
 * @returns {ArrayBuffer}
 */
export function fromBase64(text) {
  const raw = atob(text);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes.buffer;
}

/**
 * Buffers put back into `state` where the Jupyter widget protocol took them out: buffer `k`
 * replaces the value at `paths[k]` (keys and list indices), as a DataView, as the widget
 * manager's `put_buffers` puts them. `state` is changed in place.
 * @param {Record<string, any>} state
 * @param {(string | number)[][]} paths
 * @param {ArrayBuffer[]} buffers
 */
export function putBuffers(state, paths, buffers) {
  paths.forEach((path, k) => {
    let at = state;
    for (const key of path.slice(0, -1)) at = at[key];
    at[path[path.length - 1]] = new DataView(buffers[k]);
  });
}
