// The offline report's third-party statics, copied from their npm packages at build time
// into the nbconvert template (ragtt_nb/templates/ragtt/static/), never kept in git:
// RequireJS, and the widget manager's embed bundle with its license notices. A missing one
// fails the build (and so the wheel's: pyproject's ensured-targets name them too).
import { copyFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "ragtt_nb", "templates", "ragtt", "static");
const STATICS = [
  ["requirejs/require.js", "require.js"],
  ["@jupyter-widgets/html-manager/dist/embed-amd.js", "embed-amd.js"],
  ["@jupyter-widgets/html-manager/dist/embed.js.LICENSE.txt", "embed-amd.js.LICENSE.txt"],  // the same notices
];

const missing = STATICS.filter(([from]) => !existsSync(join(ROOT, "node_modules", from)));
if (missing.length) {
  console.error(`ragtt: npm packages missing (run npm ci): ${missing.map(([f]) => f).join(", ")}`);
  process.exit(1);
}
for (const [from, to] of STATICS) copyFileSync(join(ROOT, "node_modules", from), join(OUT, to));
