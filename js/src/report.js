// @ts-check
// An exported report's ragtt widgets, rendered without the Jupyter widget manager. The report
// template inlines this module (instead of the manager's embed bundle, RequireJS and anywidget)
// when every widget view the notebook shows is one of ragtt's (ragtt_nb.report_widgets decides
// it at export time). It reads the saved widget state (the `widget-state+json` script tag), puts
// each model's base64 buffers back at their paths as the manager would, and renders each
// `widget-view+json` output's model with the code its state saved (`_esm`, `_css`) over the
// small model of model_shim.js, the one the /ui dashboard and the JupyterLab tabs use. There
// is no kernel: what a view sends gets no answer (the views say what the state lacks).

import { el } from "./dom.js";
import { createModel } from "./model_shim.js";
import { fromBase64, putBuffers } from "./wire.js";

/** @typedef {import("./types.js").Model} Model */
/** @typedef {{state: Record<string, any>, buffers?: {path: (string | number)[], data: string, encoding: string}[]}} Saved */

const STATE = "application/vnd.jupyter.widget-state+json";
const VIEW = "application/vnd.jupyter.widget-view+json";

/** A model's traits with its buffers back in place. @param {Saved} saved */
function traits(saved) {
  const buffers = saved.buffers || [];
  const odd = buffers.find((b) => b.encoding !== "base64");
  if (odd) throw new Error(`a buffer in an encoding this report cannot read: ${odd.encoding}`);
  putBuffers(saved.state, buffers.map((b) => b.path), buffers.map((b) => fromBase64(b.data)));
  return saved.state;
}

/** @type {Map<string, Promise<any>>} a widget's code (its `_esm` text) -> its module */
const modules = new Map();

/** The module a model's saved code defines, imported once per distinct code. @param {string} esm */
function load(esm) {
  let module = modules.get(esm);
  if (!module) {
    const url = URL.createObjectURL(new Blob([esm], { type: "text/javascript" }));
    module = import(url).finally(() => URL.revokeObjectURL(url));
    modules.set(esm, module);
  }
  return module;
}

/** @type {Set<string>} */
const styled = new Set();

/** A model's saved CSS, once in the page (as text: a style element's content). @param {string | undefined} css */
function style(css) {
  if (!css || styled.has(css)) return;
  styled.add(css);
  document.head.append(el("style", "", css));
}

/** Render the view that `tag` (a widget-view+json script) stands for, just before it.
 * @param {HTMLScriptElement} tag @param {Record<string, Saved>} saved @param {Map<string, Model>} models */
async function mount(tag, saved, models) {
  const host = el("div", "ragtt-report-view");
  tag.before(host);
  host.dataset.state = "loading";
  try {
    const id = JSON.parse(tag.textContent || "{}").model_id;
    if (!saved[id]) throw new Error(`the saved widget state has no model ${id}`);
    let model = models.get(id);
    if (!model) {
      model = createModel(traits(saved[id]), { reply: async () => [] });
      models.set(id, model);
    }
    host.dataset.modelId = id;
    const module = await load(model.get("_esm"));
    style(model.get("_css"));
    await module.default.render({ model, el: host });
    host.dataset.state = "ready";
  } catch (err) {
    host.dataset.state = "error";
    host.replaceChildren(el("p", "ragtt-report-error", `Could not show this widget: ${String(err)}`));
  }
}

async function main() {
  const tag = document.querySelector(`script[type="${STATE}"]`);
  const saved = tag ? JSON.parse(tag.textContent || "{}").state || {} : {};
  /** @type {Map<string, Model>} */
  const models = new Map();  // a model shown twice is one model: its views stay in step
  const views = /** @type {HTMLScriptElement[]} */ ([...document.querySelectorAll(`script[type="${VIEW}"]`)]);
  await Promise.all(views.map((view) => mount(view, saved, models)));
}

main();
