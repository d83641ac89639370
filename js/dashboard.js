// Generated from js/src/dashboard.js by js/build.mjs (./dev build): edit the sources, not this file.

// js/src/dom.js
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== void 0 && text !== null) node.textContent = String(text);
  return node;
}
function button(cls, label, aria, onClick) {
  const b = el("button", cls, label);
  b.type = "button";
  b.setAttribute("aria-label", aria);
  b.addEventListener("click", onClick);
  return b;
}

// js/src/model_shim.js
function unwire(value) {
  if (Array.isArray(value)) return value.map(unwire);
  if (value === null || typeof value !== "object") return value;
  if (typeof value.$buffer === "string") {
    const raw = atob(value.$buffer);
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes.buffer;
  }
  const out = {};
  for (const [k, v] of Object.entries(value)) out[k] = unwire(v);
  return out;
}
function createModel(state, hooks) {
  const values = { ...state };
  const listeners = /* @__PURE__ */ new Map();
  const dirty = /* @__PURE__ */ new Set();
  const emit = (event, ...args) => {
    for (const fn of [...listeners.get(event) || []]) fn(...args);
  };
  return {
    get: (name) => values[name],
    set: (name, value) => {
      values[name] = value;
      dirty.add(name);
      emit(`change:${name}`, value);
    },
    on: (event, fn) => {
      if (!listeners.has(event)) listeners.set(event, /* @__PURE__ */ new Set());
      listeners.get(event)?.add(fn);
    },
    off: (event, fn) => {
      if (fn) listeners.get(event)?.delete(fn);
      else listeners.delete(event);
    },
    save_changes: () => {
      const changed = {};
      for (const name of dirty) changed[name] = values[name];
      dirty.clear();
      if (hooks.onSave) hooks.onSave(changed);
    },
    send: (content) => {
      hooks.reply(content).then(
        (replies) => {
          for (const r of replies) emit("msg:custom", unwire(r.content), unwire(r.buffers || []));
        },
        (err) => console.warn("ragtt: a widget message got no answer:", err)
      );
    }
  };
}

// js/src/dashboard.js
var PANELS = [
  ["timeline", "Timeline"],
  ["chunk_diff", "Chunk diff"],
  ["drift_scatter", "Drift"],
  ["pdf_overlay", "PDF overlay"],
  ["history_matrix", "History matrix"]
];
var token = new URLSearchParams(location.hash.slice(1)).get("token");
async function api(path, init = {}) {
  const headers = new Headers(init.headers);
  if (token) headers.set("Authorization", `Bearer ${token}`);
  if (init.body) headers.set("Content-Type", "application/json");
  const response = await fetch(new URL(path, location.origin), { ...init, headers });
  const body = await response.json();
  if (!response.ok) throw new Error(typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail));
  return body;
}
function search(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== void 0 && v !== "") q.set(k, String(v));
  return q.toString();
}
function say(ui, text, error = false) {
  ui.status.textContent = text;
  ui.status.classList.toggle("ragtt-ui-error", error);
}
async function mount(ui, widget, args) {
  const host = ui.hosts[widget];
  host.dataset.state = "loading";
  try {
    const state = unwire(await api(`/ui/api/model/${widget}?${search(args)}`));
    const module = await import(new URL(`./${widget}.js`, import.meta.url).href);
    if (ui.cleanups[widget]) ui.cleanups[widget]();
    host.replaceChildren();
    const model = createModel(state, {
      reply: async (content) => api(`/ui/api/model/${widget}/msg`, { method: "POST", body: JSON.stringify({ args, content }) }),
      onSave: (changed) => {
        host.dataset.saved = JSON.stringify(changed);
      }
    });
    const cleanup = module.default.render({ model, el: host });
    ui.cleanups[widget] = typeof cleanup === "function" ? cleanup : () => {
    };
    host.dataset.state = "ready";
    host.dataset.args = JSON.stringify(args);
  } catch (err) {
    host.dataset.state = "error";
    host.replaceChildren(el("p", "ragtt-ui-error", `Could not show the ${widget.replace("_", " ")}: ${String(err)}`));
  }
}
function fill(select, options) {
  const keep = select.value;
  select.replaceChildren(...options.map(([value, text]) => {
    const o = el("option", "", text);
    o.value = value;
    return o;
  }));
  if (options.some(([v]) => v === keep)) select.value = keep;
}
var questionKey = (text) => text.trim().toLowerCase().replace(/\s+/g, " ");
function byQuestion(runs) {
  const groups = /* @__PURE__ */ new Map();
  for (const q of runs) {
    const key = questionKey(q.text || "");
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)?.push(q);
  }
  return [...groups.values()];
}
var when = (ts) => String(ts).replace("T", " ").replace(/\.\d+/, "").replace(/(Z|[+-]00:?00)$/, "");
function runItem(ui, q) {
  const item = el("li", `ragtt-ui-run ragtt-ui-${q.kind}`);
  item.dataset.queryId = q.query_id;
  item.dataset.kind = q.kind;
  const id = el("code", "ragtt-ui-id", q.query_id.slice(0, 10));
  id.title = q.query_id;
  const at = el("span", "ragtt-ui-when", when(q.ts));
  at.title = `${q.ts} (UTC)`;
  item.append(
    at,
    id,
    el("span", "ragtt-ui-kind", q.kind),
    el("span", "ragtt-ui-dim", ` v${q.index_version}`),
    button("ragtt-ui-small", "timeline", `timeline of ${q.text}`, () => mount(ui, "timeline", { query_id: q.query_id })),
    button("ragtt-ui-small", "then", `diff from ${q.text}`, () => {
      ui.pickers.left.value = q.query_id;
    }),
    button("ragtt-ui-small", "now", `diff to ${q.text}`, () => {
      ui.pickers.right.value = q.query_id;
    })
  );
  return item;
}
function questionItem(ui, runs) {
  const item = el("li", "ragtt-ui-query");
  item.dataset.queryId = runs[0].query_id;
  const head = el("div", "ragtt-ui-query-head");
  head.append(
    el("span", "ragtt-ui-query-text", runs[0].text),
    el("span", "ragtt-ui-count", runs.length > 1 ? ` ×${runs.length}` : "")
  );
  const list = el("ul", "ragtt-ui-runs");
  list.append(...runs.map((q) => runItem(ui, q)));
  item.append(head, list);
  return item;
}
async function showQueries(ui, text) {
  const found = (
    /** @type {LoggedQuery[]} */
    await api(`/ui/api/queries?${search({ search: text })}`)
  );
  ui.list.replaceChildren(...byQuestion(found).map((runs) => questionItem(ui, runs)));
  if (!found.length) ui.list.append(el("li", "ragtt-ui-dim", text ? "No logged query has all those words." : "No queries yet."));
}
async function refresh(ui, filter) {
  const [queries, versions, sources] = await Promise.all([api("/ui/api/queries"), api("/ui/api/versions"), api("/ui/api/sources")]);
  ui.queries = queries;
  ui.versions = versions;
  ui.sources = sources;
  const qs = ui.queries.map((q) => (
    /** @type {[string, string]} */
    [
      q.query_id,
      `${q.text} · ${q.kind} ${q.query_id.slice(0, 10)} · v${q.index_version} · ${when(q.ts)}`
    ]
  ));
  fill(ui.pickers.left, qs);
  fill(ui.pickers.right, qs);
  const vs = ui.versions.map((v) => (
    /** @type {[string, string]} */
    [String(v.version), v.label ? `v${v.version} ${v.label}` : `v${v.version}`]
  ));
  fill(ui.pickers.a, vs);
  fill(ui.pickers.b, vs);
  fill(ui.pickers.source, ui.sources.filter((s) => s.pdf).map((s) => [s.source, s.source]));
  const snaps = ui.versions.filter((v) => v.label);
  ui.snapshots.replaceChildren(...snaps.map((v) => el("li", "ragtt-ui-snapshot", `${v.label} (v${v.version})`)));
  if (!snaps.length) ui.snapshots.append(el("li", "ragtt-ui-dim", "No snapshots yet."));
  await showQueries(ui, filter);
}
function field(label, control) {
  const row = el("label", "ragtt-ui-field", label);
  row.append(control);
  return row;
}
function sidebar(ui) {
  const side = el("aside", "ragtt-ui-side");
  const ask = el("form", "ragtt-ui-ask");
  const input = el("input", "ragtt-ui-input");
  input.name = "text";
  input.placeholder = "Ask the index…";
  input.setAttribute("aria-label", "query text");
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
      if (earlier.length) ui.pickers.left.value = earlier[earlier.length - 1].query_id;
      ui.pickers.right.value = res.query_id;
      await mount(ui, "timeline", { query_id: res.query_id });
    } catch (err) {
      ui.answer.replaceChildren();
      say(ui, String(err), true);
    }
  });
  const filter = el("input", "ragtt-ui-input");
  filter.type = "search";
  filter.placeholder = "Search logged queries";
  filter.setAttribute("aria-label", "search logged queries");
  filter.addEventListener("input", () => {
    showQueries(ui, filter.value).catch((err) => say(ui, String(err), true));
  });
  const diff = button("", "Diff", "diff the two queries", () => mount(ui, "chunk_diff", { left: ui.pickers.left.value, right: ui.pickers.right.value }));
  const drift = button("", "Drift", "drift between the two versions", () => mount(ui, "drift_scatter", { a: ui.pickers.a.value, b: ui.pickers.b.value }));
  const open = button("", "Open", "open the PDF", () => mount(ui, "pdf_overlay", { source: ui.pickers.source.value, query_id: ui.pickers.right.value }));
  side.append(
    el("h2", "", "Ask"),
    ask,
    ui.answer,
    el("h2", "", "Logged queries"),
    filter,
    ui.list,
    el("h2", "", "Diff two runs"),
    field("then", ui.pickers.left),
    field("now", ui.pickers.right),
    diff,
    el("h2", "", "Snapshots"),
    ui.snapshots,
    field("from", ui.pickers.a),
    field("to", ui.pickers.b),
    drift,
    el("h2", "", "PDF"),
    field("source", ui.pickers.source),
    open,
    el("h2", "", "Evaluate"),
    evaluation(ui)
  );
  return side;
}
function showAnswer(ui, res) {
  const answer = res.answer === null || res.answer === void 0 ? null : res.answer;
  const text = typeof answer === "string" ? answer : answer && typeof answer.text === "string" ? answer.text : null;
  ui.answer.replaceChildren(
    el("div", "ragtt-ui-answer-text", text === null ? "(no answer was generated)" : text),
    el("div", "ragtt-ui-dim", `${res.query_id.slice(0, 10)} · v${res.index_version}${res.chunks ? ` · ${res.chunks.length} chunks` : ""}`)
  );
}
function evaluation(ui) {
  const form = el("form", "ragtt-ui-evaluate");
  const dataset = el("input", "ragtt-ui-input");
  dataset.name = "dataset";
  dataset.placeholder = "questions.jsonl, a golden suite or a BEIR folder";
  dataset.setAttribute("aria-label", "question set path on the server");
  const at = el("input", "ragtt-ui-input");
  at.name = "at";
  at.value = "snapshots";
  at.setAttribute("aria-label", "versions to evaluate at");
  form.append(field("questions", dataset), field("at", at), el("button", "", "Evaluate"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!dataset.value.trim()) return;
    try {
      say(ui, "Evaluating…");
      const body = { dataset: dataset.value.trim(), at: [at.value.trim() || "snapshots"] };
      const res = await api("/evaluate", { method: "POST", body: JSON.stringify(body) });
      say(ui, `Evaluated ${res.questions.length} questions at ${res.columns.length} versions.`);
      await mount(ui, "history_matrix", { evaluation: res.evaluation_id });
    } catch (err) {
      say(ui, String(err), true);
    }
  });
  return form;
}
async function opening(ui) {
  const newest = ui.queries[0];
  const jobs = [mount(ui, "timeline", { query_id: newest ? newest.query_id : null })];
  const repeated = byQuestion(ui.queries).find((runs) => runs.length > 1);
  if (repeated) {
    const live = repeated.filter((q) => q.kind === "live");
    const [now, then] = [live.length > 1 ? live[0] : repeated[0], repeated[repeated.length - 1]];
    ui.pickers.left.value = then.query_id;
    ui.pickers.right.value = now.query_id;
    jobs.push(mount(ui, "chunk_diff", { left: then.query_id, right: now.query_id }));
  } else if (newest) {
    ui.hosts.chunk_diff.replaceChildren(el(
      "p",
      "ragtt-ui-dim",
      "No question has been asked twice yet: ask one again (or replay it at another version) to diff two runs of it."
    ));
  }
  if (ui.versions.length > 1) {
    const last = ui.versions[ui.versions.length - 1];
    const labelled = ui.versions.find((v) => v.label && v !== last);
    ui.pickers.a.value = String((labelled || ui.versions[0]).version);
    ui.pickers.b.value = String(last.version);
    jobs.push(mount(ui, "drift_scatter", { a: ui.pickers.a.value, b: ui.pickers.b.value }));
  }
  ui.hosts.history_matrix.append(el("p", "ragtt-ui-dim", "Evaluate a question set (the form at the left) to see each question's metrics at every version here."));
  const pdf = ui.sources.find((s) => s.pdf);
  if (pdf) jobs.push(mount(ui, "pdf_overlay", { source: pdf.source, query_id: newest ? newest.query_id : null }));
  else ui.hosts.pdf_overlay.append(el("p", "ragtt-ui-dim", "No PDF in this project yet."));
  await Promise.all(jobs);
}
async function main() {
  const root = el("div", "ragtt-ui");
  const ui = {
    root,
    status: el("p", "ragtt-ui-status"),
    hosts: {},
    cleanups: {},
    queries: [],
    versions: [],
    sources: [],
    pickers: Object.fromEntries(["left", "right", "a", "b", "source"].map((k) => {
      const s = el("select", "ragtt-ui-select");
      s.name = k;
      return [k, s];
    })),
    list: el("ul", "ragtt-ui-list ragtt-ui-queries"),
    snapshots: el("ul", "ragtt-ui-list ragtt-ui-snapshots"),
    answer: el("div", "ragtt-ui-answer")
  };
  ui.answer.setAttribute("aria-live", "polite");
  ui.status.setAttribute("role", "status");
  const main2 = el("main", "ragtt-ui-main");
  for (const [widget, title] of PANELS) {
    const panel = el("section", "ragtt-ui-panel");
    panel.append(el("h2", "", title));
    ui.hosts[widget] = el("div", "ragtt-ui-host");
    ui.hosts[widget].dataset.widget = widget;
    panel.append(ui.hosts[widget]);
    main2.append(panel);
  }
  const head = el("header", "ragtt-ui-head");
  head.append(el("h1", "", "ragtt"), ui.status);
  root.append(head, el("div", "ragtt-ui-body"));
  root.lastElementChild?.append(sidebar(ui), main2);
  document.body.append(root);
  try {
    const health = await api("/health");
    say(ui, `Project ${health.project} · ragtt ${health.ragtt}`);
    await refresh(ui, "");
    await opening(ui);
    root.dataset.ready = "1";
  } catch (err) {
    say(ui, String(err), true);
  }
}
main();
