// The "RAG history" panel: a project picker, the snapshots and versions (two picked: their
// drift), the evaluation matrices the log holds, the PDF sources, the logged queries (newest
// first, searchable, a virtualized list paged from the server; two picked: their diff) and a
// query box. Every text from a project (queries, answers, labels, sources, questions) goes in
// as textContent only.
//
// Rows stay put while the lists load: a project's lists are painted together, in one task,
// once all of them answered (a list arriving later would push the query rows down under the
// pointer), and every list is keyed (dom.js `keyed`): painting one again keeps the nodes of
// the rows that did not change, so a click that began on a row is never lost to a repaint.
import { Widget } from '@lumino/widgets';

import { Api, Evaluation, Listing, LoggedQuery, QueryPage, Source, Version, query } from './api';
import { matrixAbout } from './tab';
import { el, button, keyed } from '../../js/src/dom.js';
import { counted } from '../../js/src/labels.js';

const ROW = 52; // px, the list's fixed row height (sidebar.css)
const PAGE = 100; // queries a request fetches

/** Opens a tab; `about` says what it shows, in words (its title). */
export interface Opener {
  open(project: string, widget: string, args: Record<string, string>, about?: string): void;
  diffWithNow(project: string, queryId: string, text: string, latest: number, about: string): Promise<void>;
}

/** "how do I… · v3 → v8" for two runs of one question, else "how do I… → what is…". */
function pairAbout(left: { text: string; version: number }, right: { text: string; version: number | string }): string {
  return left.text === right.text
    ? `${left.text} · v${left.version} → v${right.version}`
    : `${left.text} → ${right.text}`;
}

export class HistoryPanel extends Widget {
  project = '';
  selected: string | null = null;
  latest = 0; // the project's newest version: what "now" means
  private runs = new Map<string, LoggedQuery>(); // query id -> the run, for the rows fetched
  private versionNames = new Map<number, string>(); // version -> "v3 flask-0.10"
  private total = 0;
  private pages = new Map<number, LoggedQuery[]>();
  private pending = new Set<number>();
  private search = '';
  private generation = 0;
  private picker = el('select', 'jp-mod-styled ragtt-history-project');
  private status = el('div', 'ragtt-history-status');
  private snapshots = el('ul', 'ragtt-history-snapshots');
  private scroll = el('div', 'ragtt-history-scroll');
  private spacer = el('div', 'ragtt-history-spacer');
  private ask = el('form', 'ragtt-history-ask');
  private count = el('div', 'ragtt-history-meta ragtt-history-count');
  private evaluations = el('ul', 'ragtt-history-evaluations');
  private evaluationsHead = el('h3', '', 'Evaluation matrix');
  private pdfs = el('ul', 'ragtt-history-pdfs');
  private pdfsHead = el('h3', '', 'PDF sources');
  private versionPicks: number[] = []; // two versions picked: their drift
  private runPicks: LoggedQuery[] = []; // two runs picked: their diff
  private driftButton: HTMLButtonElement;
  private diffPicked: HTMLButtonElement;
  private diffNow: HTMLButtonElement;
  private relisting: Promise<void> | null = null; // changed(): the listing under way
  private relistAgain = false;

  constructor(private api: Api, private opener: Opener) {
    super();
    this.id = 'ragtt-history';
    this.title.label = 'RAG history';
    this.title.caption = 'ragtt: the RAG history of a project';
    this.addClass('ragtt-history');
    this.picker.setAttribute('aria-label', 'project');
    this.picker.addEventListener('change', () => void this.showProject(this.picker.value));
    const filter = el('input', 'jp-mod-styled ragtt-history-search');
    filter.type = 'search';
    filter.placeholder = 'Search logged queries';
    filter.setAttribute('aria-label', 'search logged queries');
    filter.addEventListener('input', () => { this.search = filter.value; void this.reload(); });
    const input = el('input', 'jp-mod-styled');
    input.placeholder = 'Ask the index…';
    input.setAttribute('aria-label', 'query text');
    this.ask.append(input, el('button', 'jp-Button jp-mod-styled', 'Query'));
    this.ask.addEventListener('submit', (e) => { e.preventDefault(); void this.runQuery(input); });
    this.scroll.append(this.spacer);
    this.scroll.setAttribute('role', 'list');
    this.scroll.addEventListener('scroll', () => this.paint());
    this.status.setAttribute('role', 'status');
    this.driftButton = button('jp-Button jp-mod-styled', 'Drift', 'open the drift between the two picked versions',
      () => this.openDrift());
    this.diffPicked = button('jp-Button jp-mod-styled', 'Diff picked', 'diff the two picked runs', () => this.openDiff());
    this.diffNow = button('jp-Button jp-mod-styled', 'Diff with now', 'diff the selected query with a replay now', () => {
      void this.diffWithNow().catch((err) => this.say(String(err), true));
    });
    const versionActions = el('div', 'ragtt-history-actions');
    versionActions.append(this.driftButton, el('span', 'ragtt-history-meta', 'pick two versions'));
    const actions = el('div', 'ragtt-history-actions');
    actions.append(
      button('jp-Button jp-mod-styled', 'Timeline', 'open the selected query\'s timeline', () => this.openSelected()),
      this.diffNow,
      this.diffPicked,
    );
    this.node.append(
      el('h3', '', 'Project'), this.picker, this.status,
      el('h3', '', 'Snapshots and versions'), this.snapshots, versionActions,
      this.evaluationsHead, this.evaluations,
      this.pdfsHead, this.pdfs,
      el('h3', '', 'Ask'), this.ask,
      el('h3', '', 'Logged queries'), filter, this.count, this.scroll, actions,
    );
    this.syncButtons();
  }

  /** The lab setting readOnly: no query box, and no "Diff with now" (its replay is logged). */
  set readOnly(on: boolean) {
    this.ask.hidden = on;
    this.node.dataset.readOnly = on ? 'true' : 'false';
    this.syncButtons();
  }

  get readOnly(): boolean {
    return this.node.dataset.readOnly === 'true';
  }

  private syncButtons(): void {
    this.driftButton.disabled = this.versionPicks.length !== 2;
    this.diffPicked.disabled = this.runPicks.length !== 2;
    this.diffNow.disabled = this.readOnly;
    this.diffNow.title = this.readOnly ? 'read-only: a replay now would be logged' : '';
  }

  say(text: string, error = false): void {
    this.status.textContent = text;
    this.status.title = text; // one line, cut with an ellipsis (sidebar.css): the whole of it on hover
    this.status.classList.toggle('ragtt-history-error', error);
  }

  /** Reload the project list; show `prefer` (else the current one, else the first). */
  async refresh(prefer = ''): Promise<void> {
    const listing = await this.api.request<Listing>('projects');
    const names = listing.projects.includes(prefer) || !prefer ? listing.projects : [...listing.projects, prefer];
    this.picker.replaceChildren(...names.map((p) => { const o = el('option', '', p); o.value = p; return o; }));
    const chosen = [prefer, this.project].find((p) => p && names.includes(p)) || names[0] || '';
    if (!chosen) { this.say('No ragtt project under this server\'s root yet.'); return; }
    await this.showProject(chosen);
  }

  /** Show `project`: its versions, matrices, PDF sources and queries, painted together. */
  async showProject(project: string): Promise<void> {
    if (project !== this.project) { // another project: nothing of the last one stays clickable
      this.project = project;
      this.versionPicks = [];
      this.runPicks = [];
      this.total = 0;
      for (const list of [this.snapshots, this.evaluations, this.pdfs, this.spacer]) list.replaceChildren();
      this.scroll.scrollTop = 0;
      this.evaluationsHead.hidden = this.evaluations.hidden = this.pdfsHead.hidden = this.pdfs.hidden = true;
      this.count.textContent = '';
      this.syncButtons();
    }
    this.picker.value = project;
    this.node.dataset.project = project;
    delete this.node.dataset.painted; // set again once this project's lists are drawn
    this.say(`Loading ${project}…`);
    const [versions, evaluations, sources, queries] = await Promise.allSettled([
      this.api.project<Version[]>(project, 'ui/versions'),
      this.api.project<Evaluation[]>(project, 'ui/evaluations'),
      this.api.project<Source[]>(project, 'ui/sources'),
      this.firstPage(),
    ]);
    if (this.project !== project) return; // the picker moved on meanwhile
    if (versions.status === 'fulfilled') {
      this.latest = versions.value.length ? versions.value[versions.value.length - 1].version : 0;
      this.showVersions(versions.value.slice().reverse());
    }
    if (evaluations.status === 'fulfilled') this.showEvaluations(evaluations.value);
    if (sources.status === 'fulfilled') this.showPdfs(sources.value.filter((x) => x.pdf).map((x) => x.source));
    if (queries.status === 'fulfilled') queries.value();
    const failed = [versions, evaluations, sources, queries].find((r) => r.status === 'rejected');
    if (failed) this.say(String(failed.reason), true);
    else this.say(`${project}: ${versions.status === 'fulfilled' ? counted(versions.value.length, 'version') : '? versions'}, ${counted(this.total, 'query', 'queries')}`);
  }

  /** Something wrote to `project` (a magic in a kernel): list it again if it is the one shown.
   *  One listing at a time, and one more after it for whatever wrote meanwhile: a cell writing
   *  in a loop costs two listings, not one per write. Unchanged rows keep their nodes. */
  changed(project: string): void {
    if (project !== this.project) return;
    if (this.relisting) {
      this.relistAgain = true;
      return;
    }
    this.relisting = this.showProject(project)
      .catch((err) => this.say(String(err), true))
      .finally(() => {
        this.relisting = null;
        if (this.relistAgain) {
          this.relistAgain = false;
          this.changed(project);
        }
      });
  }

  private showVersions(versions: Version[]): void {
    const project = this.project;
    for (const v of versions) this.versionNames.set(v.version, `v${v.version}${v.label ? ` ${v.label}` : ''}`);
    keyed(this.snapshots, versions, {
      key: (v) => `${project}:${v.version}`,
      make: (v) => this.versionItem(v),
      update: (item, v) => {
        const box = item.querySelector<HTMLInputElement>('.ragtt-history-pick');
        if (box) box.checked = this.versionPicks.includes(v.version);
      },
    });
  }

  private versionItem(v: Version): HTMLElement {
    const item = el('li', v.label ? 'ragtt-history-snapshot' : 'ragtt-history-version');
    item.dataset.version = String(v.version);
    const committed = v.committed_at ? String(v.committed_at).slice(0, 19).replace('T', ' ') : '';
    const when = v.as_of ? `as of ${String(v.as_of).slice(0, 10)}` : committed;
    let what = v.operation;
    if (v.changed) what += ` +${v.changed.chunks_added}/−${v.changed.chunks_removed} ${v.changed.chunks_added + v.changed.chunks_removed === 1 ? 'chunk' : 'chunks'} (${counted(v.changed.documents.length, 'document')})`;
    const pick = el('input', 'ragtt-history-pick');
    pick.type = 'checkbox';
    pick.setAttribute('aria-label', `pick v${v.version} for a drift`);
    pick.addEventListener('change', () => {
      this.versionPicks = pick.checked ? [...this.versionPicks, v.version].slice(-2) : this.versionPicks.filter((x) => x !== v.version);
      for (const box of this.snapshots.querySelectorAll<HTMLInputElement>('.ragtt-history-pick')) {
        box.checked = this.versionPicks.includes(Number(box.closest('li')?.dataset.version));
      }
      this.syncButtons();
    });
    // two lines, each wrapping at the panel's width rather than cut: "v3 flask-0.10 · as of
    // 2013-06-13", then what the ingest changed (sidebar.css)
    const name = `v${v.version}${v.label ? ` ${v.label}` : ''}`;
    const label = el('label', '');
    const head = el('span', 'ragtt-history-vhead');
    head.append(el('span', 'ragtt-history-vname', name), ' · ', el('span', 'ragtt-history-vwhen', when));
    label.append(pick, head, el('span', 'ragtt-history-vwhat', what));
    label.title = `${name} · ${when} · ${what}${v.as_of ? ` (committed ${committed} UTC)` : ''}`;
    item.append(label);
    return item;
  }

  /** The two picked versions' drift (older first). */
  openDrift(): void {
    if (this.versionPicks.length !== 2) return this.say('Pick two versions for a drift.', true);
    const [a, b] = this.versionPicks.slice().sort((x, y) => x - y);
    const name = (v: number) => this.versionNames.get(v) ?? `v${v}`;
    this.opener.open(this.project, 'drift_scatter', { a: String(a), b: String(b) }, `${name(a)} → ${name(b)}`);
  }

  /** The matrices the log holds (read back when opened, never evaluated); none: no section. */
  private showEvaluations(evaluations: Evaluation[]): void {
    this.evaluationsHead.hidden = this.evaluations.hidden = evaluations.length === 0;
    const project = this.project;
    const titles = evaluationTitles(evaluations);
    keyed(this.evaluations, evaluations, {
      key: (e) => `${project}:${e.evaluation_id}`,
      sig: (e) => `${JSON.stringify(e)} ${titles.get(e.evaluation_id)}`, // a title changes as namesakes come
      make: (e) => {
        const item = el('li', 'ragtt-history-evaluation');
        item.dataset.evaluation = e.evaluation_id;
        const args: Record<string, string> = { evaluation: e.evaluation_id, at: e.versions.join(',') };
        if (e.source) args.dataset = e.source;
        if (e.mode) args.mode = e.mode;
        if (e.top_k !== null && e.top_k !== undefined) args.top_k = String(e.top_k);
        const name = titles.get(e.evaluation_id) ?? e.evaluation_id;
        item.append(button('ragtt-history-link', name, `open the history matrix of ${name}`,
          () => this.opener.open(project, 'history_matrix', args, matrixAbout(name, e.versions.length))));
        const plan = planText(e);
        item.append(el('span', 'ragtt-history-meta',
          ` ${counted(e.questions, 'question')} × ${counted(e.versions.length, 'version')}${plan ? ` · ${plan}` : ''}`));
        return item;
      },
    });
  }

  private showPdfs(sources: string[]): void {
    this.pdfsHead.hidden = this.pdfs.hidden = sources.length === 0;
    const project = this.project;
    keyed(this.pdfs, sources, { key: (source) => `${project}:${source}`, make: (source) => {
      const item = el('li', 'ragtt-history-pdf');
      item.append(button('ragtt-history-link', source, `open the PDF ${source}`,
        () => this.opener.open(project, 'pdf_overlay', { source }, source)));
      return item;
    } });
  }

  /** Start the query list over (a search, a new run): its first page, then paint. */
  async reload(): Promise<void> {
    const paint = await this.firstPage();
    this.scroll.scrollTop = 0;
    paint();
  }

  /** Fetch the query list's first page; the function returned paints it (unless a newer
   *  fetch started meanwhile), so a caller can paint it together with other lists. */
  private async firstPage(): Promise<() => void> {
    const generation = ++this.generation;
    const project = this.project;
    const first = await this.api.project<QueryPage>(project, `ui/queries?${query({ search: this.search, limit: PAGE })}`);
    return () => {
      if (generation !== this.generation || project !== this.project) return;
      this.pages.clear();
      this.pending.clear();
      this.total = first.total;
      this.pages.set(0, first.queries);
      for (const q of first.queries) this.runs.set(q.query_id, q);
      // what is counted: the queries listed, and the evaluations' runs, shown in their matrices
      const runs = first.evaluation_runs
        ? ` · ${counted(first.evaluation_runs, this.search ? 'matching evaluation run' : 'evaluation run')} (in their matrices)`
        : '';
      this.count.textContent = `${counted(first.total, this.search ? 'matching query' : 'query', this.search ? 'matching queries' : 'queries')}, newest first${runs}`;
      this.spacer.style.height = `${first.total * ROW}px`;
      this.paint();
      this.node.dataset.painted = project; // a test and bench hook: this project's lists are up
    };
  }

  private row(index: number): LoggedQuery | undefined {
    return this.pages.get(Math.floor(index / PAGE) * PAGE)?.[index % PAGE];
  }

  /** Draw only the rows in view (and a few more); fetch the pages they need. */
  private paint(): void {
    const top = this.scroll.scrollTop;
    const height = this.scroll.clientHeight || 400;
    const first = Math.max(0, Math.floor(top / ROW) - 5);
    const last = Math.min(this.total, Math.ceil((top + height) / ROW) + 5);
    const rows: { q: LoggedQuery; index: number }[] = [];
    const seen = new Set<string>(); // a run logged between two page fetches shifts the pages by one
    for (let i = first; i < last; i++) {
      const q = this.row(i);
      if (!q) { this.fetch(Math.floor(i / PAGE) * PAGE); continue; }
      if (seen.has(q.query_id)) continue;
      seen.add(q.query_id);
      rows.push({ q, index: i });
    }
    keyed(this.spacer, rows, {
      key: (r) => r.q.query_id,
      sig: (r) => JSON.stringify(r.q),
      make: (r) => this.queryRow(r.q),
      update: (row, r) => {
        row.style.top = `${r.index * ROW}px`;
        row.classList.toggle('ragtt-selected', r.q.query_id === this.selected);
        const pick = row.querySelector<HTMLInputElement>('.ragtt-history-pick');
        if (pick) pick.checked = this.runPicks.some((p) => p.query_id === r.q.query_id);
      },
    });
  }

  private fetch(offset: number): void {
    if (this.pending.has(offset) || this.pages.has(offset)) return;
    this.pending.add(offset);
    const generation = this.generation;
    this.api.project<QueryPage>(this.project, `ui/queries?${query({ search: this.search, offset, limit: PAGE })}`)
      .then((page) => {
        if (generation !== this.generation) return;
        this.pages.set(offset, page.queries);
        for (const q of page.queries) this.runs.set(q.query_id, q);
        this.paint();
      })
      .catch((err) => this.say(String(err), true))
      .finally(() => this.pending.delete(offset));
  }

  /** A query's row; `paint` places it and marks it selected or picked. */
  private queryRow(q: LoggedQuery): HTMLElement {
    const project = this.project;
    const row = el('div', 'ragtt-history-row');
    row.dataset.queryId = q.query_id;
    row.setAttribute('role', 'listitem');
    row.tabIndex = 0;
    const when = String(q.ts).slice(0, 19).replace('T', ' ');
    row.dataset.kind = q.kind;
    // A replay is listed under the run it replays (the server's list): the row says how many.
    const replays = q.replays.length;
    const meta = el('div', 'ragtt-history-meta');
    // first: the meta line is cut at the panel's edge. A replay's row says so once: "replay ·",
    // and with replays of its own "replay · ↻ 1 more replay ·" (not "↻ 1 replay · replay")
    if (q.kind === 'replay') meta.append('replay · ');
    if (replays) {
      const marker = el('span', 'ragtt-history-replays',
        `↻ ${counted(replays, q.kind === 'replay' ? 'more replay' : 'replay')} · `);
      marker.title = q.replays.map((r) => `replay at v${r.index_version}, ${String(r.ts).slice(0, 19).replace('T', ' ')}`).join('\n');
      meta.append(marker);
    }
    meta.append(`${q.mode ?? '?'} · v${q.index_version} · ${when}`);
    row.append(
      el('div', 'ragtt-history-text', q.text),
      meta,
      answerPreview(q),
    );
    row.title = q.text;
    const pick = el('input', 'ragtt-history-pick');
    pick.type = 'checkbox';
    pick.setAttribute('aria-label', `pick this run for a diff: ${q.text}`);
    pick.addEventListener('click', (e) => e.stopPropagation());
    pick.addEventListener('change', () => {
      const others = this.runPicks.filter((p) => p.query_id !== q.query_id);
      this.runPicks = pick.checked ? [...others, q].slice(-2) : others;
      this.paint();
      this.syncButtons();
    });
    row.prepend(pick);
    row.addEventListener('click', () => {
      this.selected = q.query_id;
      this.paint();
      this.opener.open(project, 'timeline', { query_id: q.query_id }, q.text);
    });
    return row;
  }

  /** The two picked runs' diff, the older on the left. */
  openDiff(): void {
    if (this.runPicks.length !== 2) return this.say('Pick two runs for a diff.', true);
    const [left, right] = this.runPicks.slice().sort((x, y) => (x.ts < y.ts ? -1 : x.ts > y.ts ? 1 : 0));
    const about = pairAbout({ text: left.text, version: left.index_version }, { text: right.text, version: right.index_version });
    this.opener.open(this.project, 'chunk_diff', { left: left.query_id, right: right.query_id }, about);
  }

  openSelected(): void {
    const id = this.selected ?? this.row(0)?.query_id;
    if (id) this.opener.open(this.project, 'timeline', { query_id: id }, this.runs.get(id)?.text);
  }

  /** The selected (else newest) query asked again at the newest version, diffed with how it ran. */
  async diffWithNow(): Promise<void> {
    const id = this.current();
    if (!id) return this.say('No logged query to diff yet.', true);
    const run = this.runs.get(id);
    const text = run?.text ?? '';
    const about = pairAbout({ text, version: run?.index_version ?? 0 }, { text, version: `${this.latest} (now)` });
    await this.opener.diffWithNow(this.project, id, text, this.latest, about);
  }

  /** The newest logged query's id (what the palette's commands act on without a selection). */
  current(): string | null {
    return this.selected ?? this.row(0)?.query_id ?? null;
  }

  private async runQuery(input: HTMLInputElement): Promise<void> {
    const text = input.value;
    if (!text.trim() || !this.project) return;
    try {
      const res = await this.api.project<{ query_id: string; index_version: number }>(this.project, 'query', {
        method: 'POST', body: JSON.stringify({ text, generate: false }),
      });
      this.say(`Logged query ${res.query_id} at v${res.index_version}.`);
      this.selected = res.query_id;
      await this.reload();
      this.opener.open(this.project, 'timeline', { query_id: res.query_id }, text);
    } catch (err) {
      this.say(String(err), true);
    }
  }
}

/** An evaluation's plan, as its row says it ("vector top 4"); '' when it named none. */
function planText(e: Evaluation): string {
  return [e.mode, e.top_k ? `top ${e.top_k}` : ''].filter(Boolean).join(' ');
}

/** Each evaluation's row title (and its tab's): its dataset's name, and where two evaluations
 *  share one, what tells them apart (their plan, metrics, question count: those that differ
 *  among them), else the short form of their ids. (Their version counts the row and the tab
 *  say anyway.) */
export function evaluationTitles(evaluations: Evaluation[]): Map<string, string> {
  const facets: ((e: Evaluation) => string)[] = [
    (e) => planText(e) || 'default plan',
    (e) => e.metrics.join(', '),
    (e) => counted(e.questions, 'question'),
  ];
  const byName = new Map<string, Evaluation[]>();
  for (const e of evaluations) {
    const name = e.dataset ?? e.evaluation_id;
    byName.set(name, [...(byName.get(name) ?? []), e]);
  }
  const titles = new Map<string, string>();
  for (const [name, group] of byName) {
    const differ = group.length > 1 ? facets.filter((f) => new Set(group.map(f)).size > 1) : [];
    const titled = group.map((e) => [name, ...differ.map((f) => f(e))].join(' · '));
    const clash = new Set(titled).size < titled.length || (group.length > 1 && !differ.length);
    group.forEach((e, i) => titles.set(e.evaluation_id, clash ? `${titled[i]} · ${e.evaluation_id.slice(0, 12)}` : titled[i]));
  }
  return titles;
}

/** A run's answer, as its row previews it: the start of what it says, an extractive answer
 *  (quoted from the chunks, no model) marked by a badge before it. */
function answerPreview(q: LoggedQuery): HTMLElement {
  const line = el('div', 'ragtt-history-answer', q.answer ?? (q.kind === 'replay' ? '(retrieval only)' : '(no answer)'));
  if (q.extractive) {
    const badge = el('span', 'ragtt-history-badge', 'extractive');
    badge.title = 'no generation model configured: quoted from the retrieved chunks';
    line.prepend(badge, ' ');
  }
  line.title = q.answer ?? '';
  return line;
}
