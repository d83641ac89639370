// A main-area tab showing one ragtt widget: the notebook's own view code (js/src/<widget>.js)
// over the model shim the /ui dashboard uses (js/src/model_shim.js), its state from the
// server extension. An "Insert in notebook" button writes the equivalent %ragtt line.
import { Widget } from '@lumino/widgets';

import { Api, query } from './api';
// The same view modules the notebook widgets and `ragtt serve`'s /ui load.
import { createModel, unwire } from '../../js/src/model_shim.js';
import { el, button } from '../../js/src/dom.js';
import timeline from '../../js/src/timeline.js';
import chunkDiff from '../../js/src/chunk_diff.js';
import driftScatter from '../../js/src/drift_scatter.js';
import pdfOverlay from '../../js/src/pdf_overlay.js';

type View = { render: (ctx: { model: unknown; el: HTMLElement }) => unknown };
const VIEWS: Record<string, View> = {
  timeline: timeline as View,
  chunk_diff: chunkDiff as View,
  drift_scatter: driftScatter as View,
  pdf_overlay: pdfOverlay as View,
};
const TITLES: Record<string, string> = {
  timeline: 'Timeline', chunk_diff: 'Chunk diff', drift_scatter: 'Drift', pdf_overlay: 'PDF',
};

export interface TabSpec {
  project: string;
  widget: string;
  args: Record<string, string>;
}

/** The %ragtt line that shows the same thing in a notebook. */
export function magicLine(spec: TabSpec): string {
  const a = spec.args;
  if (spec.widget === 'timeline') return `%ragtt timeline ${a.query_id ?? ''}`.trim();
  if (spec.widget === 'chunk_diff') return `%ragtt diff ${a.left} ${a.right}`;
  if (spec.widget === 'drift_scatter') return `%ragtt drift ${a.a} ${a.b}`;
  return `%ragtt pdf ${JSON.stringify(a.source ?? '')}`;
}

export class RagttTab extends Widget {
  readonly spec: TabSpec;
  private cleanup: () => void = () => undefined;

  constructor(api: Api, spec: TabSpec, insert: (line: string) => void) {
    super();
    this.spec = spec;
    this.id = `ragtt-${spec.widget}-${Object.values(spec.args).join('-')}`.replace(/[^\w-]/g, '_');
    this.addClass('ragtt-tab');
    this.title.label = `${TITLES[spec.widget] ?? spec.widget} · ${spec.project}`;
    this.title.caption = magicLine(spec);
    this.title.closable = true;
    const bar = el('div', 'ragtt-tab-bar');
    bar.append(
      button('jp-Button jp-mod-styled ragtt-insert', 'Insert in notebook', 'insert the %ragtt line in the notebook',
        () => insert(magicLine(spec))),
      el('code', '', magicLine(spec)),
    );
    const host = el('div', 'ragtt-tab-host');
    host.dataset.widget = spec.widget;
    this.node.append(bar, host);
    void this.mount(api, host);
  }

  private async mount(api: Api, host: HTMLElement): Promise<void> {
    const { project, widget, args } = this.spec;
    host.dataset.state = 'loading';
    try {
      const state = unwire(await api.project(project, `ui/model/${widget}?${query(args)}`));
      const model = createModel(state, {
        reply: (content: unknown) =>
          api.project(project, `ui/model/${widget}/msg`, { method: 'POST', body: JSON.stringify({ args, content }) }),
      });
      const done = VIEWS[widget].render({ model, el: host });
      this.cleanup = typeof done === 'function' ? (done as () => void) : () => undefined;
      host.dataset.state = 'ready';
    } catch (err) {
      host.dataset.state = 'error';
      host.replaceChildren(el('p', 'ragtt-history-error', `Could not show the ${widget}: ${String(err)}`));
    }
  }

  dispose(): void {
    this.cleanup();
    super.dispose();
  }
}
