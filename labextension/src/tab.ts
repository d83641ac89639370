// A main-area tab showing one ragtt widget: the notebook's own view code (js/src/<widget>.js)
// over the model shim the /ui dashboard uses (js/src/model_shim.js), its state from the
// server extension. An "Insert in notebook" button writes the equivalent %ragtt line.
import { Widget } from '@lumino/widgets';

import { Api, query } from './api';
// The same view modules the notebook widgets and `ragtt serve`'s /ui load.
import { createModel, unwire } from '../../js/src/model_shim.js';
import { el, button } from '../../js/src/dom.js';
import { counted } from '../../js/src/labels.js';
import { typed } from '../../js/src/wire.js';
import timeline, { AXIS_TRAITS } from '../../js/src/timeline.js';
import chunkDiff from '../../js/src/chunk_diff.js';
import driftScatter, { COLOR_BY } from '../../js/src/drift_scatter.js';
import pdfOverlay, { SCALE } from '../../js/src/pdf_overlay.js';

import historyMatrix from '../../js/src/history_matrix.js';

type View = { render: (ctx: { model: unknown; el: HTMLElement }) => unknown };
const VIEWS: Record<string, View> = {
  timeline: timeline as View,
  chunk_diff: chunkDiff as View,
  drift_scatter: driftScatter as View,
  pdf_overlay: pdfOverlay as View,
  history_matrix: historyMatrix as View,
};
const TITLES: Record<string, string> = {
  timeline: 'Timeline', chunk_diff: 'Diff', drift_scatter: 'Drift', pdf_overlay: 'PDF',
  history_matrix: 'Matrix',
};
// A tab's label holds at most LABEL_CHARS of what it shows: its start and its end (where two
// diffs or matrices of one question or dataset differ: "… v3 → v9 (now)", "… (@ 6 versions)").
// The caption (the tooltip) holds the whole.
const LABEL_CHARS = 40;
const LABEL_TAIL = 15;

/** `text` cut in the middle to LABEL_CHARS, "…" where the cut is. */
export function cutMiddle(text: string): string {
  if (text.length <= LABEL_CHARS) return text;
  const head = text.slice(0, LABEL_CHARS - LABEL_TAIL - 1).trimEnd();
  return `${head}…${text.slice(-LABEL_TAIL).trimStart()}`;
}

export interface TabSpec {
  project: string;
  widget: string;
  args: Record<string, string>;
  /** What the tab shows, in words (a query's text, "v3 flask-0.10 → v8"...), from whoever
   *  opened it: its title. Not part of what the tab is (`specKey`). */
  about?: string;
  /** Where its user left the widget (VIEW_TRAITS: the version scrubbed to, the cell opened...),
   *  saved with the tab's restore args so a reload returns there. Not part of what the tab is. */
  view?: Record<string, unknown>;
}

// The traits of a widget that say where its user left it, small and meaningful across a reload
// (the data stays the server's): what a tab saves of what its view saves (model.save_changes),
// each with what it may hold given the server's state (the widget's traits, unwired). A saved
// value comes from a workspace that may be stale or edited (a page the PDF no longer has, a
// metric no longer evaluated, a version pruned since): one that does not fit keeps the server's.
type State = Record<string, any>;
const isIndex = (v: unknown, length: number): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) < length;
const VIEW_TRAITS: Record<string, Record<string, (value: unknown, state: State) => boolean>> = {
  timeline: {
    version: (v, s) => Number.isInteger(v) && typed(s._data.versions.version).includes(v),
    axis: (v) => AXIS_TRAITS.includes(v as string),
  },
  history_matrix: {
    selected: (v, s) => {  // {} (none open), {question} (its timeline) or {question, column} (a cell)
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
      const { question, column, ...rest } = v as Record<string, unknown>;
      if (Object.keys(rest).length) return false;
      if (question === undefined) return column === undefined;
      const d = s._data;
      return isIndex(question, d.questions.ids.length) && (column === undefined || isIndex(column, d.columns.version.shape[0]));
    },
    metric: (v, s) => typeof v === 'string' && (s._data.metrics as string[]).includes(v),
  },
  drift_scatter: { color_by: (v) => COLOR_BY.includes(v as string) },
  pdf_overlay: {
    page: (v, s) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= s._data.page_count,
    scale: (v) => v === 0 || (typeof v === 'number' && v >= SCALE.min && v <= SCALE.max),  // 0: the widget's width
  },
};

/** The entries of `traits` that are `widget`'s view traits; given the server's `state`, only
 *  those whose value fits it (a check that cannot read the state fails: the server's value). */
export function viewOf(widget: string, traits: Record<string, unknown>, state?: State): Record<string, unknown> {
  const checks = VIEW_TRAITS[widget] ?? {};
  const fits = (name: string, value: unknown): boolean => {
    if (!Object.hasOwn(checks, name)) return false;
    if (!state) return true;
    if (!(name in state)) return false;
    try {
      return checks[name](value, state);
    } catch {
      return false;
    }
  };
  return Object.fromEntries(Object.entries(traits).filter(([name, value]) => fits(name, value)));
}

/** What a tab is: two specs of one key show the same thing (one tab), whatever they are called. */
export function specKey(spec: TabSpec): string {
  return JSON.stringify({ project: spec.project, widget: spec.widget, args: spec.args });
}

/** A matrix tab's words: its dataset and how many versions it shows ("flask (@ 6 versions)"). */
export function matrixAbout(name: string, versions: number): string {
  return `${name} (@ ${counted(versions, 'version')})`;
}

/** What a tab shows, in words, from its arguments alone (when its opener said nothing). */
function aboutFromArgs(spec: TabSpec): string {
  const a = spec.args;
  const id = (x: string | undefined) => (x ?? '?').slice(0, 10);
  switch (spec.widget) {
    case 'timeline': return a.query_id ? `query ${id(a.query_id)}` : 'index history';
    case 'chunk_diff': return `${id(a.left)} → ${id(a.right)}`;
    case 'drift_scatter': return `v${a.a} → v${a.b}`;
    case 'pdf_overlay': return a.source ?? '';
    case 'history_matrix': {
      const name = a.dataset ? a.dataset.split('/').pop()!.replace(/\.jsonl?$/, '') : a.evaluation ?? '';
      return a.at ? matrixAbout(name, a.at.split(',').length) : name;
    }
    default: return Object.values(a).join(' ');
  }
}

/** The tab's label ("Timeline · how do I…a blueprint") and caption (the whole text, the project and
 *  the %ragtt line). Lumino draws both as text: no markup in a query or a name is parsed. */
export function tabTitle(spec: TabSpec, line: string | null): { label: string; caption: string } {
  const kind = TITLES[spec.widget] ?? spec.widget;
  const about = (spec.about || aboutFromArgs(spec)).replace(/\s+/g, ' ').trim();
  const caption = [`${kind} · ${about}`, `project: ${spec.project}`, line].filter(Boolean).join('\n');
  return { label: `${kind} · ${cutMiddle(about)}`, caption };
}

/** One word of a %ragtt line as the magic's shlex.split reads it back: bare when plain, else
 *  single-quoted (a quote inside closes, adds an escaped one, reopens). */
export function word(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'"'"'`)}'`;
}

/** The %ragtt line that shows the same thing in a notebook (its parser: ragtt_nb.magics);
 *  null when there is none (an evaluation of a dataset the log names no file for). */
export function magicLine(spec: TabSpec): string | null {
  const a = spec.args;
  const option = (flag: string, value: string | undefined) => (value ? ` ${flag} ${word(value)}` : '');
  switch (spec.widget) {
    case 'timeline':
      return `%ragtt timeline${a.query_id ? ` ${word(a.query_id)}` : ''}`;
    case 'chunk_diff':
      return `%ragtt diff --left ${word(a.left)} --right ${word(a.right)}`;
    case 'drift_scatter':
      return `%ragtt drift ${word(a.a)} ${word(a.b)}`;
    case 'pdf_overlay':
      return `%ragtt pdf ${word(a.source)}${option('--query', a.query_id)}`;
    case 'history_matrix':  // the same dataset, versions and plan: the same evaluation, read back
      if (!a.dataset) return null;
      return `%ragtt eval ${word(a.dataset)}${option('--at', a.at)}${option('--mode', a.mode)}${option('--top-k', a.top_k)}`;
    default:
      return null;
  }
}

// How long a tab waits for its widget's state: a diff may generate two answers first, on a
// server that shares two loaded cores with the browser. Past it, the tab says so (error).
export const MODEL_WAIT_S = 120;

export class RagttTab extends Widget {
  readonly spec: TabSpec;
  readonly line: string | null; // what "Insert in notebook" writes
  private cleanup: () => void = () => undefined;
  private mounts = 0;

  /** `viewed` is told when the tab's `spec.view` changed (the tracker saves it for a reload). */
  constructor(private api: Api, spec: TabSpec, insert: (line: string) => void, private viewed: (tab: RagttTab) => void) {
    super();
    this.spec = { ...spec, ...(spec.view ? { view: viewOf(spec.widget, spec.view) } : {}) };
    this.id = `ragtt-${spec.widget}-${Object.values(spec.args).join('-')}`.replace(/[^\w-]/g, '_');
    this.addClass('ragtt-tab');
    this.node.tabIndex = -1; // focusable: an activated tab takes the focus (below)
    const line = (this.line = magicLine(spec));
    Object.assign(this.title, tabTitle(spec, line));
    this.title.closable = true;
    const bar = el('div', 'ragtt-tab-bar');
    const insertButton = button('jp-Button jp-mod-styled ragtt-insert', 'Insert in notebook',
      'insert the %ragtt line in the notebook', () => { if (line) insert(line); });
    insertButton.disabled = line === null;
    if (line === null) insertButton.title = 'the log names no dataset file for this evaluation: no %ragtt line shows it';
    bar.append(insertButton, el('code', 'ragtt-tab-line', line ?? ''));
    const host = el('div', 'ragtt-tab-host');
    host.dataset.widget = spec.widget;
    this.node.append(bar, host);
    void this.mount(host);
  }

  /** Fetch the widget's state and render it. The host ends `ready` or `error` (with the
   *  reason, and a button to try again), never loading for good: the request is bounded. */
  private async mount(host: HTMLElement): Promise<void> {
    const { project, widget, args } = this.spec;
    const ticket = ++this.mounts; // a retry supersedes what an earlier mount would still show
    host.dataset.state = 'loading';
    host.replaceChildren(el('p', 'ragtt-tab-loading', `Loading the ${TITLES[widget] ?? widget} from the server…`));
    try {
      const state = unwire(await this.api.project(project, `ui/model/${widget}?${query(args)}`, {}, MODEL_WAIT_S));
      if (ticket !== this.mounts || this.isDisposed) return;
      // where the user left it (a restored tab): over the server's state, its own traits only,
      // each where it fits that state
      Object.assign(state, viewOf(widget, this.spec.view ?? {}, state));
      const view = VIEWS[widget];
      if (!view) throw new Error(`no view named ${widget} (one of ${Object.keys(VIEWS).join(', ')})`);
      const model = createModel(state, {
        reply: (content: unknown) => this.api.project(project, `ui/model/${widget}/msg`,
          { method: 'POST', body: JSON.stringify({ args, content }) }, MODEL_WAIT_S),
        onSave: (changed: Record<string, unknown>) => {
          const moved = viewOf(widget, changed);
          if (!Object.keys(moved).length) return;
          this.spec.view = { ...this.spec.view, ...moved };
          this.viewed(this);
        },
      });
      host.replaceChildren();
      const done = await view.render({ model, el: host });
      this.cleanup = typeof done === 'function' ? (done as () => void) : () => undefined;
      host.dataset.state = 'ready';
    } catch (err) {
      if (ticket !== this.mounts || this.isDisposed) return;
      this.cleanup();
      this.cleanup = () => undefined;
      host.dataset.state = 'error';
      const retry = button('jp-Button jp-mod-styled ragtt-tab-retry', 'Try again', `load the ${widget} again`,
        () => void this.mount(host));
      host.replaceChildren(el('p', 'ragtt-history-error', `Could not show the ${widget}: ${String(err)}`), retry);
    }
  }

  /** Activating the tab focuses it, so it becomes the shell's (and the tracker's) current
   *  widget, as JupyterLab's own panels do; without it the last notebook stayed current. */
  protected onActivateRequest(): void {
    if (!this.node.contains(document.activeElement)) this.node.focus();
  }

  dispose(): void {
    this.cleanup();
    super.dispose();
  }
}
