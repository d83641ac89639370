// @ts-check
// The /ui dashboard of `ragtt serve`: the four notebook widgets (their own bundles, loaded
// from the server) over the REST API, with a query box, the logged queries (searchable),
// the snapshots and a diff picker. Every request goes to the server that served the page;
// every text from the project (queries, labels, sources) goes in as textContent only.
// The logged runs (live queries, replays, golden runs) are grouped by question, each run with
// its time, id and kind; the diff opens on two runs of one question.

import { el, button } from "./dom.js";
import { counted } from "./labels.js";
import { createModel, unwire } from "./model_shim.js";

/** @typedef {{query_id: string, text: string, ts: string, index_version: number, kind: string, original_query_id: string | null, replays?: LoggedQuery[]}} LoggedQuery */
/** @typedef {{version: number, operation: string, label: string | null}} Version */
/** @typedef {{source: string, pdf: boolean}} Source */

const PANELS = [
  ["timeline", "Timeline"], ["chunk_diff", "Chunk diff"], ["drift_scatter", "Drift"], ["pdf_overlay", "PDF overlay"],
  ["history_matrix", "History matrix"],
];
const token = new URLSearchParams(location.hash.slice(1)).get("token");

/** A request to the server itself, with the bearer token when the page was given one. @param {string} path @param {RequestInit} [init] */
async function api(path, init = {}) {
  const headers = new Headers(init.headers);
  if (token) headers.set("Authorization", `Bearer ${token}`);
  if (init.body) headers.set("Content-Type", "application/json");
  const response = await fetch(new URL(path, location.origin), { ...init, headers });
  const body = await response.json();
  if (!response.ok) throw new Error(typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail));
  return body;
}

/** @param {Record<string, string | number | null | undefined>} params */
function search(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== "") q.set(k, String(v));
  return q.toString();
}

/** @typedef {{root: HTMLElement, status: HTMLElement, hosts: Record<string, HTMLElement>, cleanups: Record<string, () => void>, queries: LoggedQuery[], versions: Version[], sources: Source[], pickers: Record<string, HTMLSelectElement>, list: HTMLElement, snapshots: HTMLElement, answer: HTMLElement, listed: number}} UI */

/** @param {UI} ui @param {string} text @param {boolean} [error] */
function say(ui, text, error = false) {
  ui.status.textContent = text;
  ui.status.classList.toggle("ragtt-ui-error", error);
}

/** Render `widget` with its model state from the server, replacing what its panel showed. @param {UI} ui @param {string} widget @param {Record<string, string | number | null>} args */
async function mount(ui, widget, args) {
  const host = ui.hosts[widget];
  host.dataset.state = "loading";
  // The newest mount of a panel wins: the page's first mounts are still loading when a click
  // mounts again, and one that answers late must not replace what the click showed.
  const ticket = String(Number(host.dataset.mount || 0) + 1);
  host.dataset.mount = ticket;
  const superseded = () => host.dataset.mount !== ticket;
  try {
    const state = unwire(await api(`/ui/api/model/${widget}?${search(args)}`));
    const module = await import(new URL(`./${widget}.js`, import.meta.url).href);
    if (superseded()) return;
    if (ui.cleanups[widget]) ui.cleanups[widget]();
    host.replaceChildren();
    const model = createModel(state, {
      reply: async (content) => api(`/ui/api/model/${widget}/msg`, { method: "POST", body: JSON.stringify({ args, content }) }),
      onSave: (changed) => { host.dataset.saved = JSON.stringify(changed); },
    });
    const cleanup = module.default.render({ model, el: host });
    ui.cleanups[widget] = typeof cleanup === "function" ? cleanup : () => {};
    host.dataset.state = "ready";
    host.dataset.args = JSON.stringify(args);
  } catch (err) {
    if (superseded()) return;
    host.dataset.state = "error";
    host.replaceChildren(el("p", "ragtt-ui-error", `Could not show the ${widget.replace("_", " ")}: ${String(err)}`));
  }
}

/** @param {HTMLSelectElement} select @param {[string, string][]} options value, text */
function fill(select, options) {
  const keep = select.value;
  select.replaceChildren(...options.map(([value, text]) => { const o = el("option", "", text); o.value = value; return o; }));
  if (options.some(([v]) => v === keep)) select.value = keep;
}

/** A question as the runs of it are grouped: case and spacing do not matter. @param {string} text */
const questionKey = (text) => text.trim().toLowerCase().replace(/\s+/g, " ");

/** Every run the list names, newest first: each listed run and its replays (the server lists a
 * replay under the run it belongs to). @param {LoggedQuery[]} listed */
const allRuns = (listed) => listed.flatMap((q) => [q, ...(q.replays ?? [])])
  .sort((a, b) => (a.ts < b.ts ? 1 : a.ts > b.ts ? -1 : 0));

/** Runs grouped by question, newest question first, each group's runs newest first. @param {LoggedQuery[]} runs */
function byQuestion(runs) {
  /** @type {Map<string, LoggedQuery[]>} */
  const groups = new Map();
  for (const q of runs) {
    const key = questionKey(q.text || "");
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)?.push(q);
  }
  return [...groups.values()];
}

/** "2026-12-03 09:41:07" (UTC) from the log's time. @param {string} ts */
const when = (ts) => String(ts).replace("T", " ").replace(/\.\d+/, "").replace(/(Z|[+-]00:?00)$/, "");

/** One run of a question: its time, id, kind and version, and what to open it in. @param {UI} ui @param {LoggedQuery} q */
function runItem(ui, q) {
  const item = el("li", `ragtt-ui-run ragtt-ui-${q.kind}`);
  item.dataset.queryId = q.query_id;
  item.dataset.kind = q.kind;
  const id = el("code", "ragtt-ui-id", q.query_id.slice(0, 10));
  id.title = q.query_id;
  const at = el("span", "ragtt-ui-when", when(q.ts));
  at.title = `${q.ts} (UTC)`;
  item.append(at, id, el("span", "ragtt-ui-kind", q.kind),
    el("span", "ragtt-ui-dim", ` v${q.index_version}`),
    button("ragtt-ui-small", "timeline", `timeline of ${q.text}`, () => mount(ui, "timeline", { query_id: q.query_id })),
    button("ragtt-ui-small", "then", `diff from ${q.text}`, () => { ui.pickers.left.value = q.query_id; }),
    button("ragtt-ui-small", "now", `diff to ${q.text}`, () => { ui.pickers.right.value = q.query_id; }));
  return item;
}

/** One question of the list: its text, how many runs, and the runs. @param {UI} ui @param {LoggedQuery[]} runs */
function questionItem(ui, runs) {
  const item = el("li", "ragtt-ui-query");
  item.dataset.queryId = runs[0].query_id;  // its newest run
  const head = el("div", "ragtt-ui-query-head");
  head.append(el("span", "ragtt-ui-query-text", runs[0].text),
    el("span", "ragtt-ui-count", runs.length > 1 ? ` ×${runs.length}` : ""));
  const list = el("ul", "ragtt-ui-runs");
  list.append(...runs.map((q) => runItem(ui, q)));
  item.append(head, list);
  return item;
}

/** The logged queries with all of `text`'s words. The newest listing wins: typing sends one
 * request per keystroke, and one answered late must not replace what a later one listed.
 * @param {UI} ui @param {string} text */
async function showQueries(ui, text) {
  const ticket = ++ui.listed;
  const found = allRuns(/** @type {LoggedQuery[]} */ (await api(`/ui/api/queries?${search({ search: text })}`)));
  if (ticket !== ui.listed) return;
  ui.list.replaceChildren(...byQuestion(found).map((runs) => questionItem(ui, runs)));
  if (!found.length) ui.list.append(el("li", "ragtt-ui-dim", text ? "No logged query has all those words." : "No queries yet."));
}

/** Reload the project's lists (queries, versions, snapshots, sources) into the pickers. @param {UI} ui @param {string} filter */
async function refresh(ui, filter) {
  const [queries, versions, sources] = await Promise.all([api("/ui/api/queries"), api("/ui/api/versions"), api("/ui/api/sources")]);
  ui.queries = allRuns(queries); ui.versions = versions; ui.sources = sources;
  const qs = ui.queries.map((q) => /** @type {[string, string]} */ ([q.query_id,
    `${q.text} · ${q.kind} ${q.query_id.slice(0, 10)} · v${q.index_version} · ${when(q.ts)}`]));
  fill(ui.pickers.left, qs);
  fill(ui.pickers.right, qs);
  const vs = ui.versions.map((v) => /** @type {[string, string]} */ ([String(v.version), v.label ? `v${v.version} ${v.label}` : `v${v.version}`]));
  fill(ui.pickers.a, vs);
  fill(ui.pickers.b, vs);
  fill(ui.pickers.source, ui.sources.filter((s) => s.pdf).map((s) => [s.source, s.source]));
  const snaps = ui.versions.filter((v) => v.label);
  ui.snapshots.replaceChildren(...snaps.map((v) => el("li", "ragtt-ui-snapshot", `${v.label} (v${v.version})`)));
  if (!snaps.length) ui.snapshots.append(el("li", "ragtt-ui-dim", "No snapshots yet."));
  await showQueries(ui, filter);
}

/** @param {string} label @param {HTMLElement} control */
function field(label, control) {
  const row = el("label", "ragtt-ui-field", label);
  row.append(control);
  return row;
}

/** The side bar: ask, search, the lists and the pickers. @param {UI} ui */
function sidebar(ui) {
  const side = el("aside", "ragtt-ui-side");
  const ask = el("form", "ragtt-ui-ask");
  const input = el("input", "ragtt-ui-input");
  input.name = "text"; input.placeholder = "Ask the index…"; input.setAttribute("aria-label", "query text");
  ask.append(input, el("button", "", "Query"));
  ask.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!input.value.trim()) return;
    try {
      ui.answer.replaceChildren(el("span", "ragtt-ui-dim", "Asking…"));
      const res = await api("/query", { method: "POST", body: JSON.stringify({ text: input.value }) });
      say(ui, `Logged query ${res.query_id} at v${res.index_version}.`);
      showAnswer(ui, res);
      await refresh(ui, filter.value);
      const earlier = ui.queries.filter((q) => q.query_id !== res.query_id && questionKey(q.text) === questionKey(res.text));
      if (earlier.length) ui.pickers.left.value = earlier[earlier.length - 1].query_id;  // the first run of it
      ui.pickers.right.value = res.query_id;
      await mount(ui, "timeline", { query_id: res.query_id });
    } catch (err) { ui.answer.replaceChildren(); say(ui, String(err), true); }
  });
  const filter = el("input", "ragtt-ui-input");
  filter.type = "search"; filter.placeholder = "Search logged queries"; filter.setAttribute("aria-label", "search logged queries");
  filter.addEventListener("input", () => { showQueries(ui, filter.value).catch((err) => say(ui, String(err), true)); });
  const diff = button("", "Diff", "diff the two queries", () => mount(ui, "chunk_diff", { left: ui.pickers.left.value, right: ui.pickers.right.value }));
  const drift = button("", "Drift", "drift between the two versions", () => mount(ui, "drift_scatter", { a: ui.pickers.a.value, b: ui.pickers.b.value }));
  const open = button("", "Open", "open the PDF", () => mount(ui, "pdf_overlay", { source: ui.pickers.source.value, query_id: ui.pickers.right.value }));
  side.append(el("h2", "", "Ask"), ask, ui.answer, el("h2", "", "Logged queries"), filter, ui.list,
    el("h2", "", "Diff two runs"), field("then", ui.pickers.left), field("now", ui.pickers.right), diff,
    el("h2", "", "Snapshots"), ui.snapshots, field("from", ui.pickers.a), field("to", ui.pickers.b), drift,
    el("h2", "", "PDF"), field("source", ui.pickers.source), open, el("h2", "", "Evaluate"), evaluation(ui));
  return side;
}

/** The answer to what was asked, under the box: text only (it quotes the documents).
 * @param {UI} ui @param {any} res the query's JSON */
function showAnswer(ui, res) {
  const answer = res.answer === null || res.answer === undefined ? null : res.answer;
  const text = typeof answer === "string" ? answer : answer && typeof answer.text === "string" ? answer.text : null;
  ui.answer.replaceChildren(
    el("div", "ragtt-ui-answer-text", text === null ? "(no answer was generated)" : text),
    el("div", "ragtt-ui-dim", `${res.query_id.slice(0, 10)} · v${res.index_version}`
      + `${res.chunks ? ` · ${counted(res.chunks.length, "chunk")}` : ""}`));
}

/** The evaluation form: a question set (a path on the server, as POST /evaluate takes it) at
 *  the versions asked for; evaluated (and logged), then shown as the history matrix. @param {UI} ui */
function evaluation(ui) {
  const form = el("form", "ragtt-ui-evaluate");
  const dataset = el("input", "ragtt-ui-input");
  dataset.name = "dataset"; dataset.placeholder = "questions.jsonl, a golden suite or a BEIR folder";
  dataset.setAttribute("aria-label", "question set path on the server");
  const at = el("input", "ragtt-ui-input");
  at.name = "at"; at.value = "snapshots"; at.setAttribute("aria-label", "versions to evaluate at");
  form.append(field("questions", dataset), field("at", at), el("button", "", "Evaluate"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!dataset.value.trim()) return;
    const args = { dataset: dataset.value.trim(), at: at.value.trim() || "snapshots" };
    try {
      say(ui, "Evaluating…");
      const res = await api("/evaluate", { method: "POST", body: JSON.stringify({ dataset: args.dataset, at: [args.at] }) });
      say(ui, `Evaluated ${counted(res.questions.length, "question")} at ${counted(res.columns.length, "version")}.`);
      await mount(ui, "history_matrix", args);
    } catch (err) { say(ui, String(err), true); }
  });
  return form;
}

/** What opens first: the newest query's timeline, a diff of two runs of one question (the
 * newest question asked more than once: its first and its latest live run), the first and last
 * versions' drift, the first PDF. @param {UI} ui */
async function opening(ui) {
  const newest = ui.queries[0];
  const jobs = [mount(ui, "timeline", { query_id: newest ? newest.query_id : null })];
  const repeated = byQuestion(ui.queries).find((runs) => runs.length > 1);
  if (repeated) {
    const live = repeated.filter((q) => q.kind === "live");  // the latest live run, else the latest run
    const [now, then] = [live.length > 1 ? live[0] : repeated[0], repeated[repeated.length - 1]];
    ui.pickers.left.value = then.query_id;
    ui.pickers.right.value = now.query_id;
    jobs.push(mount(ui, "chunk_diff", { left: then.query_id, right: now.query_id }));
  } else if (newest) {
    ui.hosts.chunk_diff.replaceChildren(el("p", "ragtt-ui-dim",
      "No question has been asked twice yet: ask one again (or replay it at another version) to diff two runs of it."));
  }
  if (ui.versions.length > 1) {
    const last = ui.versions[ui.versions.length - 1];
    const labelled = ui.versions.find((v) => v.label && v !== last);  // the first snapshot, else the first version
    ui.pickers.a.value = String((labelled || ui.versions[0]).version);
    ui.pickers.b.value = String(last.version);
    jobs.push(mount(ui, "drift_scatter", { a: ui.pickers.a.value, b: ui.pickers.b.value }));
  }
  ui.hosts.history_matrix.append(el("p", "ragtt-ui-dim", "Evaluate a question set (the form at the left) to see "
    + "each question's metrics at every version here."));
  const pdf = ui.sources.find((s) => s.pdf);
  if (pdf) jobs.push(mount(ui, "pdf_overlay", { source: pdf.source, query_id: newest ? newest.query_id : null }));
  else ui.hosts.pdf_overlay.append(el("p", "ragtt-ui-dim", "No PDF in this project yet."));
  await Promise.all(jobs);
}

async function main() {
  const root = el("div", "ragtt-ui");
  /** @type {UI} */
  const ui = {
    root, status: el("p", "ragtt-ui-status"), hosts: {}, cleanups: {}, queries: [], versions: [], sources: [],
    pickers: Object.fromEntries(["left", "right", "a", "b", "source"].map((k) => {
      const s = el("select", "ragtt-ui-select"); s.name = k; return [k, s];
    })),
    list: el("ul", "ragtt-ui-list ragtt-ui-queries"), snapshots: el("ul", "ragtt-ui-list ragtt-ui-snapshots"),
    answer: el("div", "ragtt-ui-answer"), listed: 0,
  };
  ui.answer.setAttribute("aria-live", "polite");
  ui.status.setAttribute("role", "status");
  const main = el("main", "ragtt-ui-main");
  for (const [widget, title] of PANELS) {
    const panel = el("section", "ragtt-ui-panel");
    panel.append(el("h2", "", title));
    ui.hosts[widget] = el("div", "ragtt-ui-host");
    ui.hosts[widget].dataset.widget = widget;
    panel.append(ui.hosts[widget]);
    main.append(panel);
  }
  const head = el("header", "ragtt-ui-head");
  head.append(el("h1", "", "ragtt"), ui.status);
  root.append(head, el("div", "ragtt-ui-body"));
  root.lastElementChild?.append(sidebar(ui), main);
  document.body.append(root);
  try {
    const health = await api("/health");
    say(ui, `Project ${health.project} · ragtt ${health.ragtt}`);
    await refresh(ui, "");
    await opening(ui);
    root.dataset.ready = "1";
  } catch (err) { say(ui, String(err), true); }
}

main();
