"""Issue 28's targets: a verb through the Jupyter server extension against the same verb
through `ragtt serve`, and the JupyterLab sidebar's first paint over many logged queries.

    python bench/bench_lab.py              # 2,000 documents, 10,000 logged queries
    python bench/bench_lab.py --quick      # 200 documents, 1,000 logged queries

One project (bench/common's documents, the hash embedder), served at once by `ragtt serve`
and by a `jupyter-server` with ragtt's extension (token auth), both on 127.0.0.1 in their
own processes. Then:

1. latency: the same query texts, alternating between `POST /query` on `ragtt serve` and
   `POST /ragtt/api/projects/proj/query` on Jupyter, each over one keep-alive connection;
   the row is the ratio of the medians (target <= 1.3x); the same for `GET /snapshots`;
2. first paint: a JupyterLab with the built lab extension (ragtt_nb/labextension) in headless
   Chromium; the time from choosing the project in the sidebar to its first query rows in
   the DOM (target < 1 s), the median of a few choices.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import bench_serve  # noqa: E402
import common  # noqa: E402

TOKEN = secrets.token_hex(16)
BUILT = REPO / "ragtt_nb" / "labextension"
CHROMIUM = Path("/usr/bin/chromium")


def start_jupyter(app: str, root: Path, state: Path, port: int, extra: list[str]) -> subprocess.Popen[bytes]:
    import httpx

    state.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "RUST_LOG": "error",
        "HF_HUB_OFFLINE": "1",
        "RAGTT_EMBEDDER": "hash",
        "JUPYTER_CONFIG_DIR": str(state / "config"),
        "JUPYTER_RUNTIME_DIR": str(state / "rt"),
    }
    argv = [
        str(Path(sys.executable).parent / app),
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--allow-root",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={TOKEN}",
        "--ServerApp.jpserver_extensions={'ragtt_nb.server': True}",
        *extra,
    ]
    log = (state / "server.log").open("wb")
    proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{app} exited {proc.returncode}: see {state / 'server.log'}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/status?token={TOKEN}", timeout=1.0).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"{app} did not start within 90 s")


def log(message: str) -> None:
    print(f"[bench_lab] {message}", file=sys.stderr, flush=True)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def latency(serve: str, jupyter: str, queries: list[str], rounds: int) -> dict[str, Any]:
    import httpx

    times: dict[str, list[float]] = {
        "serve query": [],
        "jupyter query": [],
        "serve snapshots": [],
        "jupyter snapshots": [],
    }
    with (
        httpx.Client(timeout=30.0) as rest,
        httpx.Client(timeout=30.0, headers={"Authorization": f"token {TOKEN}"}) as jp,
    ):
        calls = {
            "serve": lambda path, **kw: rest.request(url=f"{serve}{path}", **kw),
            "jupyter": lambda path, **kw: jp.request(url=f"{jupyter}/ragtt/api/projects/proj{path}", **kw),
        }
        for side in calls.values():  # warm both: each opens the project on its first call
            side("/query", method="POST", json={"text": queries[0], "generate": False}).raise_for_status()
        for r in range(rounds):
            for i, text in enumerate(queries):
                body = {"text": text, "top_k": 4, "mode": "hybrid", "generate": False}
                order = ("serve", "jupyter") if (i + r) % 2 == 0 else ("jupyter", "serve")
                for side in order:
                    t0 = time.perf_counter()
                    calls[side]("/query", method="POST", json=body).raise_for_status()
                    times[f"{side} query"].append((time.perf_counter() - t0) * 1e3)
                    t0 = time.perf_counter()
                    calls[side]("/snapshots", method="GET").raise_for_status()
                    times[f"{side} snapshots"].append((time.perf_counter() - t0) * 1e3)
    return {name: common.summary(samples) for name, samples in times.items()}


def first_paint(root: Path, state: Path, rounds: int) -> list[float]:
    """Milliseconds from choosing the project in the sidebar to its first rows in the DOM."""
    from playwright.sync_api import sync_playwright

    labextensions = state / "jupyter-path" / "labextensions"
    labextensions.mkdir(parents=True, exist_ok=True)
    (labextensions / "ragtt").symlink_to(BUILT, target_is_directory=True)
    os.environ["JUPYTER_PATH"] = str(state / "jupyter-path")
    port = bench_serve.free_port()
    extra = [
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=",
        f"--LabServerApp.workspaces_dir={state / 'ws'}",
    ]
    lab = start_jupyter("jupyter-lab", root, state / "lab", port, extra)
    samples: list[float] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"http://127.0.0.1:{port}/lab?token={TOKEN}")
            page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=120_000)
            page.evaluate("() => window.jupyterapp.commands.execute('ragtt:open-history')")
            page.wait_for_selector("#ragtt-history[data-painted] .ragtt-history-row", timeout=120_000)
            for _ in range(rounds):  # away to the small project and back: every paint is a fresh load
                page.evaluate(
                    "(p) => { const s = document.querySelector('#ragtt-history select'); s.value = p;"
                    " s.dispatchEvent(new Event('change')); }",
                    "other",
                )
                page.wait_for_selector("#ragtt-history[data-painted='other'] .ragtt-history-row", timeout=60_000)
                ms = page.evaluate(
                    """() => new Promise((resolve) => {
                      const panel = document.querySelector('#ragtt-history');
                      const rows = () => panel.querySelectorAll('.ragtt-history-row').length;
                      const t0 = performance.now();
                      const obs = new MutationObserver(() => {  // the new project's own rows, not the last one's
                        if (panel.dataset.painted === 'proj' && rows() > 1) {
                          obs.disconnect();
                          resolve(performance.now() - t0);
                        }
                      });
                      obs.observe(panel, { childList: true, subtree: true, attributes: true });
                      const s = panel.querySelector('select');
                      s.value = 'proj';
                      s.dispatchEvent(new Event('change'));
                    })"""
                )
                samples.append(float(ms))
            browser.close()
    finally:
        stop(lab)
    return samples


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int)
    ap.add_argument("--logged", type=int, help="logged queries for the first-paint row")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    n_docs = args.docs or (200 if args.quick else 2000)
    n_logged = args.logged or (1000 if args.quick else 10_000)

    import ragtt

    docs, queries, source = common.make_corpus(n_docs)
    queries = queries[:20]
    results: dict[str, Any] = {"docs": n_docs, "logged": n_logged}
    with tempfile.TemporaryDirectory(prefix="ragtt-bench-lab-") as tmp:
        root = Path(tmp) / "root"
        with ragtt.Project.open(root / "proj", embedder=ragtt.HashEmbedder(), progress=False, create=True) as proj:
            proj.ingest_texts(dict(docs))
            for i in range(n_logged):  # the history the sidebar pages through
                proj.query(queries[i % len(queries)], generate=False)
        with ragtt.Project.open(root / "other", embedder=ragtt.HashEmbedder(), progress=False, create=True) as other:
            other.ingest_texts({"other.md": "# Other\n\nAnother project.\n"})
            other.query("another", generate=False)
        serve_port, jupyter_port = bench_serve.free_port(), bench_serve.free_port()
        serve = bench_serve.start_server(root / "proj", serve_port)
        try:
            jupyter = start_jupyter("jupyter-server", root, Path(tmp) / "server", jupyter_port, [])
            try:
                lat = latency(
                    f"http://127.0.0.1:{serve_port}", f"http://127.0.0.1:{jupyter_port}", queries, args.rounds
                )
            finally:
                stop(jupyter)
        finally:
            stop(serve)
        results["latency"] = lat
        for verb in ("query", "snapshots"):
            serve_ms, jupyter_ms = lat[f"serve {verb}"]["p50_ms"], lat[f"jupyter {verb}"]["p50_ms"]
            log(f"{verb}: ragtt serve p50 {serve_ms:.2f} ms, Jupyter extension p50 {jupyter_ms:.2f} ms")
        paint: list[float] | None = None
        if (BUILT / "package.json").is_file() and CHROMIUM.exists():
            paint = first_paint(root, Path(tmp) / "lab", rounds=3)
        results["first_paint_ms"] = paint

    rows = []
    for verb in ("query", "snapshots"):
        ratio = lat[f"jupyter {verb}"]["p50_ms"] / lat[f"serve {verb}"]["p50_ms"]
        rows.append((f"{verb}: Jupyter extension p50 / ragtt serve p50", ratio, "<= 1.3x", ratio <= 1.3))
    print(f"\nissue 28 / JupyterLab ({n_docs} documents from {source}, {n_logged} logged queries, hash embedder)")
    for verb in ("query", "snapshots"):
        print(
            f"  {verb}: ragtt serve p50 {lat[f'serve {verb}']['p50_ms']:.2f} ms, "
            f"Jupyter extension p50 {lat[f'jupyter {verb}']['p50_ms']:.2f} ms"
        )
    for label, value, target, ok in rows:
        print(f"  {label:<48} {value:8.3f}  {target:>8}  {'PASS' if ok else 'FAIL'}")
    if paint is None:
        print("  sidebar first paint: NOT MEASURED (build the lab extension: npm run build; needs /usr/bin/chromium)")
    else:
        median = sorted(paint)[len(paint) // 2]
        verdict = "PASS" if median < 1000 else "FAIL"
        print(f"  sidebar first paint, {n_logged} queries (median ms) {median:8.1f}  {'< 1000':>8}  {verdict}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
