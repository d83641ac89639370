// Bundle js/src/<widget>.js (and the modules it imports) into one self-contained ES module
// per widget, js/<widget>.js, and js/src/panel.css + chunk_card.css + <widget>.css into js/<widget>.css
// (with the CSS of the widgets it shows inside itself, OPENS);
// the same for the /ui dashboard page (js/dashboard.js, js/dashboard.css).
// The outputs are checked in: the wheel, reports and anywidget's hot reload read them, and
// no Node is needed to use ragtt.
//   node js/build.mjs           rebuild
//   node js/build.mjs --check   exit 1 (naming the files) when a checked-in output is stale
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const JS = dirname(fileURLToPath(import.meta.url));
const WIDGETS = ["timeline", "chunk_diff", "drift_scatter", "pdf_overlay", "history_matrix"];
const SHARED_CSS = ["panel.css", "chunk_card.css"];
// A widget that renders other widgets' views in itself carries their CSS too.
const OPENS = { history_matrix: ["chunk_diff.css", "timeline.css"] };
// `ragtt serve`'s /ui page: loads the widget bundles above at run time, so it carries none of them.
const PAGES = ["dashboard"];

async function outputs() {
  const files = new Map();
  for (const name of [...WIDGETS, ...PAGES]) {
    const result = await esbuild.build({
      entryPoints: [join(JS, "src", `${name}.js`)], bundle: true, format: "esm", target: "es2020",
      write: false, charset: "utf8", legalComments: "none",
      banner: { js: `// Generated from js/src/${name}.js by js/build.mjs (./dev build): edit the sources, not this file.` },
    });
    files.set(`${name}.js`, result.outputFiles[0].text);
    const css = [...(PAGES.includes(name) ? [] : SHARED_CSS), ...(OPENS[name] || []), `${name}.css`].map((f) => readFileSync(join(JS, "src", f), "utf8")).join("\n");
    files.set(`${name}.css`, `/* Generated from js/src by js/build.mjs: edit the sources, not this file. */\n${css}`);
  }
  return files;
}

const check = process.argv.includes("--check");
const stale = [];
for (const [file, text] of await outputs()) {
  const path = join(JS, file);
  const now = existsSync(path) ? readFileSync(path, "utf8") : null;
  if (now === text) continue;
  if (check) stale.push(`js/${file}`);
  else writeFileSync(path, text);
}
if (stale.length) {
  console.error(`stale build outputs (run ./dev build): ${stale.join(", ")}`);
  process.exit(1);
}
