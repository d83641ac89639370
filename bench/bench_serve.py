"""Issue 11's REST targets: `POST /query` against `proj.query` in-process, and many readers at once.

    python bench/bench_serve.py              # 2,000 documents, 50 readers for 30 s
    python bench/bench_serve.py --quick      # 200 documents, 10 readers for 5 s

One project (bench/common's documents, the hash embedder) is served by `ragtt serve` on
127.0.0.1 in its own process, as a user would run it. Then:

1. latency: the same query texts, alternating between `POST /query` over one keep-alive
   HTTP connection and `proj.query` in this process (so load drift hits both alike); the
   row is the ratio of the two medians (target <= 1.3x);
2. concurrency: N threads, each with its own connection, all started at once, loop for S
   seconds over a mix of what readers do (`POST /query`, `POST /replay`, `GET /query/{id}`); the rows are the
   error count (target 0) and p99 / p50 of all requests (target < 10x).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

EMBEDDER = "hash"  # the server's `--embedder hash` is ragtt.HashEmbedder(), what this process opens with
TOP_K = 4
START_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(project: Path, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "RUST_LOG": "error", "HF_HUB_OFFLINE": "1"}
    argv = [sys.executable, "-m", "ragtt.cli", "serve", "--project", str(project), "--embedder", EMBEDDER]
    proc = subprocess.Popen([*argv, "--port", str(port)], env=env, stderr=subprocess.PIPE)
    import httpx

    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:  # bounded: the server answers /health or the bench stops
        if proc.poll() is not None:
            raise RuntimeError(f"ragtt serve exited {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1.0).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"ragtt serve did not answer /health within {START_TIMEOUT_S:.0f} s")


def latency(proj: Any, base: str, queries: list[str], rounds: int) -> dict[str, Any]:
    import httpx

    rest, local = [], []
    with httpx.Client(base_url=base, timeout=30.0) as client:
        client.post("/query", json={"text": queries[0], "generate": False}).raise_for_status()  # warm
        proj.query(queries[0], generate=False)
        for r in range(rounds):
            for i, text in enumerate(queries):
                body = {"text": text, "top_k": TOP_K, "mode": "hybrid", "generate": False}
                sides = ("rest", "local") if (i + r) % 2 == 0 else ("local", "rest")
                for side in sides:
                    t0 = time.perf_counter()
                    if side == "rest":
                        client.post("/query", json=body).raise_for_status()
                        rest.append((time.perf_counter() - t0) * 1e3)
                    else:
                        proj.query(text, top_k=TOP_K, mode="hybrid", generate=False)
                        local.append((time.perf_counter() - t0) * 1e3)
    return {"rest": common.summary(rest), "in_process": common.summary(local)}


def readers(base: str, queries: list[str], logged: list[str], threads: int, seconds: float) -> dict[str, Any]:
    import httpx

    samples: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    # Every reader makes its client first, then all start at once: building 50 clients (each
    # loads a TLS context) holds this process's GIL for a second or more, which would be timed
    # as the server's latency on the first requests of the readers already running.
    ready = threading.Barrier(threads + 1, timeout=START_TIMEOUT_S)
    clock: dict[str, float] = {}

    def reader(n: int) -> None:
        mine: list[float] = []
        with httpx.Client(base_url=base, timeout=60.0) as client:
            ready.wait()
            stop_at = clock["stop_at"]
            i = n
            while time.monotonic() < stop_at:
                kind = i % 3
                t0 = time.perf_counter()
                try:
                    if kind == 0:
                        resp = client.post("/query", json={"text": queries[i % len(queries)], "generate": False})
                    elif kind == 1:
                        resp = client.post("/replay", json={"query_id": logged[i % len(logged)]})
                    else:
                        resp = client.get(f"/query/{logged[i % len(logged)]}")
                    ok = resp.status_code == 200 and (kind != 1 or resp.json()["matches_original"])
                    if not ok:
                        with lock:
                            errors.append(f"{resp.request.method} {resp.request.url.path}: {resp.status_code}")
                except httpx.HTTPError as exc:
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}")
                mine.append((time.perf_counter() - t0) * 1e3)
                i += threads
        with lock:
            samples.extend(mine)

    pool = [threading.Thread(target=reader, args=(n,), daemon=True) for n in range(threads)]
    for t in pool:
        t.start()
    clock["stop_at"] = time.monotonic() + seconds
    ready.wait()
    for t in pool:
        t.join(seconds + 120)  # bounded: a stuck request is an error, not a hang
    stuck = sum(t.is_alive() for t in pool)
    if stuck:
        errors.append(f"{stuck} reader threads still running {seconds + 120:.0f} s in")
    return {
        "threads": threads,
        "seconds": seconds,
        "requests": len(samples),
        "errors": len(errors),
        "first_errors": errors[:5],
        "p50_ms": common.p50(samples),
        "p99_ms": common.pct(samples, 0.99),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int)
    ap.add_argument("--threads", type=int)
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    n_docs = args.docs or (200 if args.quick else 2000)
    threads = args.threads or (10 if args.quick else 50)
    seconds = args.seconds or (5.0 if args.quick else 30.0)

    import ragtt

    docs, queries, source = common.make_corpus(n_docs)
    queries = queries[:20]
    with tempfile.TemporaryDirectory(prefix="ragtt-bench-serve-") as tmp:
        folder = Path(tmp) / "proj"
        proj = ragtt.Project.open(folder, embedder=ragtt.HashEmbedder(), progress=False)
        try:
            proj.ingest_texts(dict(docs))
            logged = [proj.query(q, generate=False).query_id for q in queries[:10]]
            port = free_port()
            server = start_server(folder, port)
            try:
                base = f"http://127.0.0.1:{port}"
                lat = latency(proj, base, queries, args.rounds)
                load = readers(base, queries, logged, threads, seconds)
            finally:
                server.terminate()
                try:
                    server.wait(30)
                except subprocess.TimeoutExpired:
                    server.kill()
        finally:
            proj.close()

    ratio = lat["rest"]["p50_ms"] / lat["in_process"]["p50_ms"]
    spread = load["p99_ms"] / load["p50_ms"]
    rows = [
        ("POST /query p50 / proj.query p50", ratio, "<= 1.3x", ratio <= 1.3),
        (f"{threads} readers x {seconds:.0f} s: errors", float(load["errors"]), "0", load["errors"] == 0),
        (f"{threads} readers x {seconds:.0f} s: p99 / p50", spread, "< 10x", spread < 10),
    ]
    print(f"\nissue 11 / REST ({n_docs} documents from {source}, hybrid, top-{TOP_K}, hash embedder)")
    print(
        f"  POST /query p50 {lat['rest']['p50_ms']:.2f} ms, proj.query p50 {lat['in_process']['p50_ms']:.2f} ms; "
        f"{load['requests']} requests under load, p50 {load['p50_ms']:.1f} ms, p99 {load['p99_ms']:.1f} ms"
    )
    for label, value, target, ok in rows:
        print(f"  {label:<40} {value:8.3f}  {target:>8}  {'PASS' if ok else 'FAIL'}")
    if load["first_errors"]:
        print("  first errors: " + "; ".join(load["first_errors"]))
    if args.json:
        args.json.write_text(json.dumps({"latency": lat, "load": load, "docs": n_docs}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
