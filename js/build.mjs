// Bundle js/src/<widget>.js (and the modules it imports) into one self-contained ES module
// per widget, <widget>.js, and js/src/panel.css + chunk_card.css + <widget>.css into <widget>.css
// (with the CSS of the widgets it shows inside itself, OPENS);
// the same for the /ui dashboard page (dashboard.js, dashboard.css); and the offline report's
// bootstrap (report.js, no CSS: each widget's is in its saved state).
// The outputs go into the package, ragtt/views/static/ (git-ignored, shipped in the wheel:
// pyproject's ensured-targets fail a wheel that lacks one), where the notebook widgets,
// `ragtt serve`'s /ui and reports load them; js/ holds sources only. ANYWIDGET_HMR=1 reloads
// a widget when this build rewrites its bundle.
//   node js/build.mjs           rebuild
//   node js/build.mjs --check   exit 1 (naming the files) when a built output is missing or stale
import { readFileSync, writeFileSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const JS = dirname(fileURLToPath(import.meta.url));
const OUT = join(JS, "..", "ragtt", "views", "static");
const WIDGETS = ["timeline", "chunk_diff", "drift_scatter", "pdf_overlay", "history_matrix"];
const SHARED_CSS = ["panel.css", "chunk_card.css"];
// A widget that renders other widgets' views in itself carries their CSS too.
const OPENS = { history_matrix: ["chunk_diff.css", "timeline.css"] };
// `ragtt serve`'s /ui page: loads the widget bundles above at run time, so it carries none of them.
const PAGES = ["dashboard"];
// The offline report's bootstrap, inlined by the report template (ragtt_nb/report_widgets.py):
// renders the widgets from the saved state with the code each saved, so it carries none either.
const SCRIPTS = ["report"];

async function outputs() {
  const files = new Map();
  for (const name of [...WIDGETS, ...PAGES, ...SCRIPTS]) {
    const result = await esbuild.build({
      entryPoints: [join(JS, "src", `${name}.js`)], bundle: true, format: "esm", target: "es2020",
      write: false, charset: "utf8", legalComments: "none",
      banner: { js: `// Generated from js/src/${name}.js by js/build.mjs (./dev build): edit the sources, not this file.` },
    });
    files.set(`${name}.js`, result.outputFiles[0].text);
    if (SCRIPTS.includes(name)) continue;
    const css = [...(PAGES.includes(name) ? [] : SHARED_CSS), ...(OPENS[name] || []), `${name}.css`].map((f) => readFileSync(join(JS, "src", f), "utf8")).join("\n");
    files.set(`${name}.css`, `/* Generated from js/src by js/build.mjs: edit the sources, not this file. */\n${css}`);
  }
  return files;
}

const check = process.argv.includes("--check");
const stale = [];
if (!check) mkdirSync(OUT, { recursive: true });
for (const [file, text] of await outputs()) {
  const path = join(OUT, file);
  const now = existsSync(path) ? readFileSync(path, "utf8") : null;
  if (now === text) continue;
  if (check) stale.push(`ragtt/views/static/${file}`);
  else writeFileSync(path, text);
}
if (stale.length) {
  console.error(`missing or stale build outputs (run ./dev build): ${stale.join(", ")}`);
  process.exit(1);
}
