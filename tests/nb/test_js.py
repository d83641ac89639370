"""The widgets' JS: one source of each shared helper in js/src, bundled by esbuild into the
built (git-ignored) ragtt/views/static/*.js that anywidget loads; every module type-checked by ``tsc --checkJs``;
no render part over 150 lines; no third-party runtime imports, no CDN."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
JS = REPO / "js"
SRC = JS / "src"
BUILT = REPO / "ragtt" / "views" / "static"
BIN = REPO / "node_modules" / ".bin"
WIDGETS = ("timeline", "chunk_diff", "drift_scatter", "pdf_overlay", "history_matrix")
MAX_LINES = 150


def _node_tool(name: str) -> Path:
    tool = BIN / name
    if not tool.exists() or shutil.which("node") is None:
        pytest.fail(f"{tool} is missing: ./dev test installs esbuild and TypeScript (npm ci) before the tests")
    return tool


def test_built_widgets_are_fresh() -> None:
    _node_tool("esbuild")
    done = subprocess.run(
        ["node", str(JS / "build.mjs"), "--check"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_every_module_type_checks() -> None:
    done = subprocess.run(
        [str(_node_tool("tsc")), "-p", str(JS / "jsconfig.json"), "--checkJs", "--noEmit"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for path in SRC.glob("*.js"):
        assert path.read_text().startswith("// @ts-check\n"), f"{path.name} does not start with // @ts-check"


def test_shared_helpers_exist_once() -> None:
    sources = {p.name: p.read_text() for p in SRC.glob("*.js")}
    for helper, home in (
        ("typed", "wire.js"),
        ("strings", "wire.js"),
        ("el", "dom.js"),
        ("keyed", "dom.js"),
        ("chunkCard", "chunk_card.js"),
        ("versionLabel", "labels.js"),
        ("placeLabels", "labels.js"),
        ("slotText", "labels.js"),
        ("timeText", "labels.js"),
        ("isoTimeText", "labels.js"),
        ("joinBuffers", "wire.js"),
        ("fromBase64", "wire.js"),
        ("putBuffers", "wire.js"),
        ("createModel", "model_shim.js"),
    ):
        defined = [name for name, text in sources.items() if re.search(rf"^(export )?function {helper}\(", text, re.M)]
        assert defined == [home], (helper, defined)
    for name in WIDGETS:  # each widget's bundle has one copy of each helper it uses, from its source
        built = (BUILT / f"{name}.js").read_text()
        assert built.startswith(f"// Generated from js/src/{name}.js")
        for helper in ("typed", "el", "chunkCard"):
            assert len(re.findall(rf"^function {helper}\(", built, re.M)) <= 1
        assert "chunkCard(" in built and "function el(" in built


def test_times_read_as_the_timeline_writes_them() -> None:
    """labels.js isoTimeText: the wire's ISO times (a matrix column's `at`) as the Timeline's axis
    writes a time: a midnight as its date, else to the second in UTC; other text unchanged."""
    cases = {
        "2016-05-29T00:00:00.000000Z": "2016-05-29",
        "2016-05-29T00:00:00Z": "2016-05-29",
        "2026-12-03T22:44:15.123456Z": "2026-12-03 22:44:15 UTC",
        "2026-12-03T23:44:15+01:00": "2026-12-03 22:44:15 UTC",
        "7": "7",
        "": "",
    }
    script = (
        f"import {{ isoTimeText }} from {(SRC / 'labels.js').as_uri()!r};"
        f"console.log(JSON.stringify({list(cases)!r}.map(isoTimeText)))"
    )
    _node_tool("tsc")  # node present
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert dict(zip(cases, json.loads(done.stdout), strict=True)) == cases


def test_no_third_party_imports_or_urls() -> None:
    for path in SRC.glob("*.js"):
        for spec in re.findall(r"""^import .*?from\s+["']([^"']+)["']""", path.read_text(), re.M):
            assert spec.startswith("./"), f"{path.name} imports {spec}"
    for name in (*WIDGETS, "report"):  # and the report's bootstrap, inlined in every report of ragtt's widgets
        built = (BUILT / f"{name}.js").read_text()
        assert not re.search(r"^\s*import ", built, re.M), f"{name}.js is not self-contained"
        assert "https://" not in built and "http://" not in built


def _functions(text: str) -> dict[str, int]:
    """Top-level functions (the sources' style: `function name(` at column 0, closed by a `}`
    line at column 0) and their lengths in lines."""
    out: dict[str, int] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"(?:export )?(?:async )?function (\w+)\(", line)
        if m:
            end = next(j for j in range(i, len(lines)) if lines[j] == "}" or (j == i and line.endswith("}")))
            out[m.group(1)] = end - i + 1
    return out


def test_render_is_split_into_named_parts() -> None:
    for name in WIDGETS:
        parts = _functions((SRC / f"{name}.js").read_text())
        assert "render" in parts and len(parts) >= 8, (name, sorted(parts))
        long = {f: n for f, n in parts.items() if n > MAX_LINES}
        assert not long, f"{name}.js: functions over {MAX_LINES} lines: {long}"


def test_function_length_check_can_fail() -> None:
    body = "\n".join(["function big() {", *(["  x();"] * MAX_LINES), "}"])
    assert _functions(body) == {"big": MAX_LINES + 2}


def test_js_holds_sources_only() -> None:
    # the bundles are build outputs in the package, never beside their sources (nor committed)
    stray = sorted(
        str(p.relative_to(REPO))
        for p in JS.rglob("*")
        if p.is_file() and p.parent != SRC and p.name not in ("build.mjs", "jsconfig.json")
    )
    assert not stray, f"js/ holds sources only; built or stray files: {stray}"
    assert "ragtt/views/static/" in (REPO / ".gitignore").read_text().splitlines()
    for name in (*WIDGETS, "dashboard"):
        assert (BUILT / f"{name}.js").is_file() and (BUILT / f"{name}.css").is_file()
    assert (BUILT / "report.js").is_file()
