"""ragtt's benchmark against rag-timetravel 1.2.0: issue 2's core engine, issue 5's drift and lineage.

    ./dev bench                  full run: 2,000 documents, 1,000 table versions, the peer
    ./dev bench --quick          small sizes, about 40 s with the peer (indicative only)
    ./dev bench --quick --no-peer   ragtt alone, seconds (the smoke test runs this)
    ./dev bench --json           also write every measurement to bench/out/bench.json (bench/render.py)
    ./dev bench --scale [--quick]   instead the scale curves, bench/bench_scale.py (not part of the run above)

One table, one row per target, with a ratio column and PASS/FAIL. The same documents and
the same deterministic embedder (ragtt.HashEmbedder; bench/common.hash_embed on the peer's
side, checked bit-identical) on both sides; generation off (ragtt) or mocked (peer). The
peer runs in its own virtualenv (bench/.peer-venv, created here when missing) as a
subprocess: bench/peer_worker.py. See bench/README.md for what each row measures.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("RUST_LOG", "error")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

PEER_VENV = HERE / ".peer-venv"
PEER_SPEC = "rag-timetravel==1.2.0"
MODES = ("vector", "bm25", "hybrid")
TOP_K = 4
SMALL_VERSIONS = 10
DRIFT_REF_DOCS = 200  # issue 5 quotes the peer's drift scan at 200 documents (18 s)
DRIFT_TARGET_S = 2.0
PEER_LINEAGE_PAIRS = 10  # the peer's lineage takes ~1.5 s a call at 2,000 documents
# The other issues' benches, run as they are: (full-size arguments, --quick arguments).
# Not bench_scale.py: its curves take hours at full size; `./dev bench --scale` runs it alone.
OTHER_BENCHES = {
    "bench_temporal.py": ([], ["--n", "20000"]),  # 100,000 assertions, about a minute
    "bench_pdf.py": (["--rounds", "2"], ["--rounds", "1"]),
    "bench_widgets.py": ([], ["--events", "2000", "--rounds", "1"]),  # headless Chromium
    "bench_widgets2.py": ([], ["--points", "20000", "--rounds", "1"]),
    "bench_widgets3.py": ([], ["--questions", "100", "--versions", "200", "--rounds", "1"]),  # HistoryMatrix
    "bench_embed.py": ([], ["--quick"]),  # ONNX vs torch embedder, Cranfield nDCG (full: minutes)
    "bench_cli.py": ([], ["--quick"]),  # CLI wall times against the tree before issue 14
    "bench_memory.py": ([], ["--quick"]),  # peak RSS of a 200 MB text file's ingest (quick: 20 MB)
    "bench_backends.py": ([], ["--quick"]),  # issue 12: Postgres append p50, events.frame() at 1M events
    "bench_serve.py": ([], ["--quick"]),  # REST: POST /query vs in-process, 50 readers for 30 s
    "bench_lab.py": ([], ["--quick"]),  # issue 28: a verb via the Jupyter extension vs ragtt serve; sidebar first paint
    "bench_prune.py": ([], ["--quick"]),  # retention: 1,000 versions, 100,000 events (building it: minutes)
    "bench_traces.py": ([], ["--quick"]),  # OpenTelemetry export, queries/s to OTLP/JSON (issue 11)
    "bench_ray.py": ([], ["--quick"]),  # ingest on a local Ray vs in-process (20,000 docs; quick: 2,000)
    "bench_s3.py": ([], ["--quick"]),  # issue 12: replay p50, index on S3 (moto) vs in the folder, 2,000 docs
    "bench_verify.py": ([], ["--quick"]),  # issue 31: hashing on ingest, verify() and verify(deep=True) costs
    "bench_eval.py": ([], ["--quick"]),  # issue 26: the history matrix vs replay_text, its page; 1,000 versions vs 10
    "bench_watch.py": ([], ["--quick"]),  # ragtt watch: last write to queryable vs debounce + 1.5x one ingest
    "bench_federation.py": ([], ["--quick"]),  # issue 29: a federated query over 3 members, and its replay
}


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- profiling (optional) --------------------------------------------------------------------


class Profiler:
    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        if self.folder is None:
            yield
            return
        prof = cProfile.Profile()
        prof.enable()
        try:
            yield
        finally:
            prof.disable()
            prof.dump_stats(str(self.folder / f"{name}.pstats"))
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(18)
            (self.folder / f"{name}.txt").write_text(text.getvalue(), encoding="utf-8")
            log(f"profile of {name}: {self.folder / (name + '.txt')}")


# -- ragtt's side (in this process) -------------------------------------------------------------


def ragtt_hash_embedder() -> Any:
    import ragtt

    return ragtt.HashEmbedder(common.HASH_DIM)


def _open(folder: Path) -> Any:
    import ragtt

    return ragtt.Project.open(
        folder, config=ragtt.PipelineConfig(top_k=TOP_K), embedder=ragtt_hash_embedder(), progress=False
    )


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - t0) * 1e3


def ragtt_main(
    folder: Path, docs: list[tuple[str, str]], queries: list[str], rounds: int, prof: Profiler
) -> dict[str, Any]:
    """Ingest all documents in one call; then, per mode, live queries each followed by its replay."""
    proj = _open(folder)
    out: dict[str, Any] = {}
    try:
        with prof.phase("ragtt_ingest"):
            t0 = time.perf_counter()
            report = proj.ingest_texts(dict(docs))
            seconds = time.perf_counter() - t0
        if report.failed:
            raise RuntimeError(f"ragtt failed to ingest {len(report.failed)} documents: {report.failed[:3]}")
        out["ingest"] = {
            "docs": len(docs),
            "seconds": seconds,
            "docs_per_s": len(docs) / seconds,
            "chunks": report.chunks_added,
            "table_version": report.index_version_after,
            "elapsed_s_reported": report.elapsed_s,
        }
        out["disk"] = {
            "index_bytes": common.dir_bytes(folder / "lancedb"),
            "index_files": common.file_count(folder / "lancedb"),
            "project_bytes": common.dir_bytes(folder),
        }
        out["query"], out["replay"] = {}, {}
        mismatches = 0
        with prof.phase("ragtt_query_replay"):
            for mode in MODES:
                warm = proj.query(queries[0], mode=mode, generate=False)
                proj.replay(warm.query_id)
                live, replayed, top = [], [], []
                for round_no in range(rounds):
                    for text in queries:  # interleaved: drift in machine load hits both alike
                        result, ms = _timed(lambda t=text, m=mode: proj.query(t, mode=m, generate=False))
                        live.append(ms)
                        rep, ms = _timed(lambda q=result.query_id: proj.replay(q))
                        replayed.append(ms)
                        mismatches += not rep.matches_original
                        if round_no == 0:
                            top.append([c.source for c in result.chunks])
                out["query"][mode] = {**common.summary(live), "top_sources": top}
                out["replay"][mode] = common.summary(replayed)
        out["replay_mismatches"] = mismatches
    finally:
        proj.close()
    return out


def ragtt_versions(
    work: Path, docs: list[tuple[str, str]], queries: list[str], base: int, large: int, rounds: int, prof: Profiler
) -> dict[str, Any]:
    """Queries logged while the table has <= 10 versions, then replayed on two projects side by
    side: a frozen copy of the project at 10 versions, and the same project grown to ``large``
    versions by one small ingest call (one new document) per version. The replays alternate
    between the two, so load on the shared cores hits both alike."""
    small_dir, large_dir = work / "ragtt-versions-10", work / "ragtt-versions-many"
    proj = _open(large_dir)
    extra = iter(docs[base:])
    logged: list[str] = []
    ingest_ms: list[float] = []
    try:
        proj.ingest_texts(dict(docs[:base]))
        qi = 0
        while True:
            for mode in MODES:
                logged.append(proj.query(queries[qi % len(queries)], mode=mode, generate=False).query_id)
                qi += 1
            if proj.version >= SMALL_VERSIONS:
                break
            name, text = next(extra)
            _, ms = _timed(lambda n=name, t=text: proj.ingest_texts({n: t}))
            ingest_ms.append(ms)
    finally:
        proj.close()
    shutil.copytree(large_dir, small_dir)
    log(f"ragtt: {len(logged)} queries logged at versions 3..{SMALL_VERSIONS}; growing the table to {large} versions")
    proj = _open(large_dir)
    try:
        with prof.phase("ragtt_small_ingests"):
            while proj.version < large:
                name, text = next(extra)
                _, ms = _timed(lambda n=name, t=text: proj.ingest_texts({n: t}))
                ingest_ms.append(ms)
    finally:
        proj.close()

    projects = {"small": _open(small_dir), "large": _open(large_dir)}
    out: dict[str, Any] = {
        "base_docs": base,
        "queries_logged": len(logged),
        "small_ingest_ms": {
            "first10_p50": common.p50(ingest_ms[:10]),
            "last10_p50": common.p50(ingest_ms[-10:]),
            "n": len(ingest_ms),
        },
        "index_bytes": common.dir_bytes(large_dir / "lancedb"),
    }
    try:
        samples: dict[str, list[float]] = {"small": [], "large": []}
        first: dict[str, list[float]] = {"small": [], "large": []}
        mismatches = 0
        with prof.phase("ragtt_replay_10_and_many_versions"):
            for round_no in range(rounds):
                for i, qid in enumerate(logged):
                    order = ("small", "large") if (i + round_no) % 2 == 0 else ("large", "small")
                    for which in order:
                        rep, ms = _timed(lambda p=projects[which], q=qid: p.replay(q))
                        samples[which].append(ms)
                        if round_no == 0:  # the first replay of each version opens its view cold
                            first[which].append(ms)
                        mismatches += not rep.matches_original
        for which, proj in projects.items():
            out[which] = {
                **common.summary(samples[which]),
                "first_round_p50_ms": common.p50(first[which]),
                "table_version": proj.version,
                "chunks": proj.chunks().height,
            }
        out["mismatches"] = mismatches
        # information: live queries at the latest version of the many-version table
        live: dict[str, list[float]] = {mode: [] for mode in MODES}
        for mode in MODES:
            for text in queries:
                _, ms = _timed(lambda t=text, m=mode: projects["large"].query(t, mode=m, generate=False))
                live[mode].append(ms)
        out["large_live"] = {mode: common.summary(v) for mode, v in live.items()}
    finally:
        for proj in projects.values():
            proj.close()
    return out


def ragtt_analysis(
    folder: Path, docs: list[tuple[str, str]], queries: list[str], rounds: int, prof: Profiler, tag: str, ingest: bool
) -> tuple[dict[str, Any], dict[str, str]]:
    """Issue 5: drift and lineage across one re-ingest. Ingests ``docs`` first when ``ingest``
    (the main project already holds them). Vector queries at the version before, one
    ``ingest_texts`` call with bench/common.revisions (one document in ten, plus the
    queries' top-k sources), the same queries after; then
    ``proj.drift(before, after)`` (``max(rounds, 3)`` calls) and ``proj.lineage(q_before,
    q_after)`` for every query, ``rounds`` times. Returns the numbers and the revisions (the
    peer re-ingests exactly the same texts)."""
    proj = _open(folder)
    out: dict[str, Any] = {"docs": len(docs)}
    try:
        if ingest:
            proj.ingest_texts(dict(docs))
        v_before = proj.version
        before = [proj.query(q, mode="vector", generate=False) for q in queries]
        revised = common.revisions(docs, queries, [[c.source for c in r.chunks] for r in before])
        report, ms = _timed(lambda: proj.ingest_texts(revised))
        if report.failed:
            raise RuntimeError(f"ragtt failed to re-ingest {len(report.failed)} documents: {report.failed[:3]}")
        v_after = proj.version
        after = [proj.query(q, mode="vector", generate=False) for q in queries]
        out["reingest"] = {
            "docs": len(revised),
            "ms": ms,
            "updated": len(report.documents_updated),
            "chunks_added": report.chunks_added,
            "chunks_removed": report.chunks_removed,
            "version_before": v_before,
            "version_after": v_after,
        }
        samples = []
        with prof.phase(f"ragtt_drift_{tag}"):
            for _ in range(max(rounds, 3)):
                rep, ms = _timed(lambda: proj.drift(v_before, v_after))
                samples.append(ms)
        out["drift"] = {
            **common.summary(samples),
            "max_ms": max(samples),
            "first_ms": samples[0],
            "sources": len(rep.sources),
            "drifted": len(rep.drifted_sources),
            "chunk_cosines": len(rep.chunk_cosines),
        }
        samples, causes = [], {}
        with prof.phase(f"ragtt_lineage_{tag}"):
            for round_no in range(rounds):
                for a, b in zip(before, after, strict=True):
                    lin, ms = _timed(lambda a=a, b=b: proj.lineage(a.query_id, b.query_id))
                    samples.append(ms)
                    if round_no == 0:
                        for e in lin.entries:
                            key = f"{e.change}/{e.cause}"
                            causes[key] = causes.get(key, 0) + 1
        out["lineage"] = {**common.summary(samples), "pairs": len(before), "entries": causes}
    finally:
        proj.close()
    return out, revised


# -- the peer's side (a subprocess in its own virtualenv) -------------------------------------


def protocol_overhead(folder: Path, calls: int) -> dict[str, Any]:
    """What the crash protocol adds to one write: the lock, recovery, the intent transaction
    and the completion transaction (with a document and three events), with no table write.
    A query adds nothing: it writes its events in one transaction, as before."""
    from ragtt.commit import writing
    from ragtt.context import Context
    from ragtt.events.documents import DocumentRow
    from ragtt.events.store import Event
    from ragtt.generate import ExtractiveGenerator
    from ragtt.ingest.types import IngestOptions
    from ragtt.opening import open_stores

    with _open(folder) as proj:
        proj.ingest_texts({"seed.md": "seed text"})
    # the protocol itself, below the facade: the stores a Project opens, in a Context of our own
    stores = open_stores(folder, None, ragtt_hash_embedder(), create=False, embedding_cache=None)
    ctx = Context(
        stores.path,
        stores.config,
        stores.embedder,
        ExtractiveGenerator(),
        IngestOptions(),
        False,
        stores.log,
        stores.table,
        stores.cache,
    )
    try:
        samples = []
        for i in range(calls):
            doc = DocumentRow(f"k{i}", "d", f"s{i}.md", "h", "text " * 200, "[]", "2026-01-01T00:00:00.000000Z")
            events = [Event("bench.step", {"i": i, "payload": "x" * 500}) for _ in range(3)]
            t0 = time.perf_counter()
            with writing(ctx, "bench") as w:
                w.stage(events, documents=[doc])
                w.commit()
            samples.append((time.perf_counter() - t0) * 1e3)
    finally:
        stores.close()
    return common.summary(samples)


def peer_python() -> Path:
    return PEER_VENV / "bin" / "python"


def ensure_peer_venv() -> Path:
    py = peer_python()
    check = [str(py), "-c", "import rag_timetravel, sys; sys.exit(rag_timetravel.__version__ != '1.2.0')"]
    if py.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return py
    log(f"creating {PEER_VENV} with {PEER_SPEC} (once)")
    if not py.exists():
        subprocess.run([shutil.which("python3") or "python3", "-m", "venv", str(PEER_VENV)], check=True)
    # rag-timetravel 1.2.0's base install needs no torch (only its [local] extra does); were it
    # to, torch==2.13.0 (the CPU build on local disk) would have to be installed first.
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", PEER_SPEC], check=True)
    subprocess.run(check, check=True)
    return py


def run_peer(
    workdir: Path,
    docs: list[tuple[str, str]],
    queries: list[str],
    rounds: int,
    timeout: int,
    name: str = "peer",
    modes: tuple[str, ...] = MODES,
    analysis: dict[str, Any] | None = None,
) -> dict[str, Any]:
    py = ensure_peer_venv()
    job_path, out_path = workdir / f"{name}-job.json", workdir / f"{name}-out.json"
    job = {
        "workdir": str(workdir / name),
        "docs": docs,
        "queries": queries,
        "top_k": TOP_K,
        "dim": common.HASH_DIM,
        "modes": list(modes),
        "rounds": rounds,
        "out": str(out_path),
        "analysis": analysis,
    }
    job_path.write_text(json.dumps(job), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": "", "VIRTUAL_ENV": str(PEER_VENV)}
    proc = subprocess.run(
        [str(py), str(HERE / "peer_worker.py"), str(job_path)], env=env, capture_output=True, text=True, timeout=timeout
    )
    if proc.returncode != 0 or not out_path.exists():
        raise RuntimeError(f"peer worker failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return dict(json.loads(out_path.read_text(encoding="utf-8")))


def peer_analysis_job(queries: list[str], revised: dict[str, str], drift_timeout: float) -> dict[str, Any]:
    return {
        "queries": queries,
        "revisions": revised,
        "drift_timeout_s": drift_timeout,
        "lineage_pairs": min(PEER_LINEAGE_PAIRS, len(queries)),
    }


# -- the table -------------------------------------------------------------------------------


def _ms(v: float) -> str:
    return f"{v:.2f} ms"


def _s(v: float) -> str:
    return f"{v:.3f} s" if v < 10 else f"{v:.1f} s"


def _mb(v: float) -> str:
    return f"{v / 1e6:.2f} MB"


def build_rows(r: dict[str, Any], peer: dict[str, Any] | None, args: argparse.Namespace) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def row(
        target: str,
        label: str,
        ours: float,
        theirs: float | None,
        fmt: Callable[[float], str],
        goal: str | None,
        ok: Callable[[float], bool] | None,
        *,
        absolute: bool = False,
        lower_bound: bool = False,
    ) -> None:
        """``ok`` judges the ratio, or ragtt's own value when ``absolute``; ``lower_bound``: the
        peer's value is a timeout, so its time is more than that and the ratio less than shown."""
        ratio = None if not theirs else ours / theirs
        status = "info"
        if goal is not None:
            judged = ours if absolute else ratio
            status = "n/a" if judged is None else ("PASS" if ok and ok(judged) else "FAIL")
        base_text = "-" if theirs is None else fmt(theirs)
        rows.append(
            {
                "target": target,
                "metric": label,
                "ragtt": ours,
                "baseline": theirs,
                "ratio": ratio,
                "goal": goal,
                "status": status,
                "ragtt_text": fmt(ours),
                "lower_bound": lower_bound,
                "baseline_text": f"> {base_text} (timed out)" if lower_bound else base_text,
            }
        )

    m, v = r["main"], r["versions"]
    for mode in MODES:
        row(
            "1",
            f"replay p50 / live query p50 ({mode}, {args.docs} docs)",
            m["replay"][mode]["p50_ms"],
            m["query"][mode]["p50_ms"],
            _ms,
            "<= 1.2x",
            lambda x: x <= 1.2,
        )
    row(
        "2",
        f"replay p50 at {v['large']['table_version']} / at {v['small']['table_version']} versions",
        v["large"]["p50_ms"],
        v["small"]["p50_ms"],
        _ms,
        "<= 1.3x",
        lambda x: x <= 1.3,
    )
    p = peer or {}
    row(
        "3",
        f"ingest {args.docs} docs: docs/s, ragtt / peer",
        m["ingest"]["docs_per_s"],
        p.get("ingest", {}).get("docs_per_s"),
        lambda x: f"{x:.1f}/s",
        ">= 5x",
        lambda x: x >= 5,
    )
    row(
        "3",
        "index size on disk (lancedb/), ragtt / peer",
        m["disk"]["index_bytes"],
        p.get("disk", {}).get("index_bytes"),
        _mb,
        "<= 0.1x",
        lambda x: x <= 0.1,
    )
    for mode in ("bm25", "hybrid"):
        row(
            "4",
            f"{mode} query p50 at {args.docs} docs, ragtt / peer",
            m["query"][mode]["p50_ms"],
            p.get("query", {}).get(mode, {}).get("p50_ms"),
            _ms,
            "<= 0.1x",
            lambda x: x <= 0.1,
        )
    # issue 5: drift and lineage across one re-ingest
    a, pa = r["analysis"], p.get("analysis", {})
    ragtt_drift = a["drift"]
    peer_drift = pa.get("drift")
    row(
        "5",
        f"full drift scan, {args.docs} docs at two versions (ragtt: slowest of {ragtt_drift['n']})",
        ragtt_drift["max_ms"] / 1e3,
        None if not peer_drift else peer_drift["seconds"],
        _s,
        f"< {DRIFT_TARGET_S:g} s",
        lambda x: x < DRIFT_TARGET_S,
        absolute=True,
        lower_bound=bool(peer_drift and peer_drift["timed_out"]),
    )
    row(
        "5",
        f"lineage p50 at {args.docs} docs (one re-ingest between two queries), ragtt / peer",
        a["lineage"]["p50_ms"],
        pa.get("lineage", {}).get("p50_ms"),
        _ms,
        "<= 0.1x",
        lambda x: x <= 0.1,
    )
    if "analysis_ref" in r:
        ref, pref = r["analysis_ref"], (r.get("peer_ref") or {}).get("analysis", {})
        peer_ref_drift = pref.get("drift")
        row(
            "-",
            f"full drift scan at {ref['docs']} docs (issue 5's reference size), ragtt / peer",
            ref["drift"]["max_ms"] / 1e3,
            None if not peer_ref_drift else peer_ref_drift["seconds"],
            _s,
            None,
            None,
            lower_bound=bool(peer_ref_drift and peer_ref_drift["timed_out"]),
        )
    # issue 10: the crash protocol
    row(
        "10",
        "crash protocol per write (lock, recovery, intent, completion), p50",
        r["protocol"]["p50_ms"],
        None,
        _ms,
        "<= 5 ms",
        lambda x: x <= 5.0,
        absolute=True,
    )
    row(
        "10",
        "crash protocol p50 / one small ingest call p50 (last 10)",
        r["protocol"]["p50_ms"],
        v["small_ingest_ms"]["last10_p50"],
        _ms,
        None,
        None,
    )
    # information, no goal
    row(
        "-",
        f"vector query p50 at {args.docs} docs, ragtt / peer",
        m["query"]["vector"]["p50_ms"],
        p.get("query", {}).get("vector", {}).get("p50_ms"),
        _ms,
        None,
        None,
    )
    row(
        "-",
        "whole project folder on disk, ragtt / peer",
        m["disk"]["project_bytes"],
        p.get("disk", {}).get("project_bytes"),
        _mb,
        None,
        None,
    )
    row(
        "-",
        "first-round (cold view) replay p50, at many / at 10 versions",
        v["large"]["first_round_p50_ms"],
        v["small"]["first_round_p50_ms"],
        _ms,
        None,
        None,
    )
    row(
        "-",
        "one small ingest call: last 10 / first 10 (p50)",
        v["small_ingest_ms"]["last10_p50"],
        v["small_ingest_ms"]["first10_p50"],
        _ms,
        None,
        None,
    )
    for mode in ("vector", "bm25"):
        row(
            "-",
            f"{mode} live p50: {v['large']['table_version']}-version table ({v['large']['chunks']} rows) "
            f"/ one-version table ({m['ingest']['chunks']} rows)",
            v["large_live"][mode]["p50_ms"],
            m["query"][mode]["p50_ms"],
            _ms,
            None,
            None,
        )
    if "replay_vector" in p:
        row(
            "-",
            "peer replay p50 (vector; its snapshot-based replay)",
            m["replay"]["vector"]["p50_ms"],
            p["replay_vector"]["p50_ms"],
            _ms,
            None,
            None,
        )
    return rows


def print_table(rows: list[dict[str, Any]], notes: list[str]) -> None:
    head = common.TABLE_HEAD
    body = [common.table_cells(r) for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body, strict=True)]
    line = "  ".join(f"{{:<{w}}}" for w in widths)
    print(line.format(*head))
    print("  ".join("-" * w for w in widths))
    for b in body:
        print(line.format(*b))
    for note in notes:
        print(f"  * {note}")


def vector_agreement(ours: list[list[str]], theirs: list[list[str]]) -> float | None:
    if not ours or not theirs:
        return None
    same = [len(set(a) & set(b)) / max(len(set(a) | set(b)), 1) for a, b in zip(ours, theirs, strict=False)]
    return sum(same) / len(same)


def analysis_notes(results: dict[str, Any], peer: dict[str, Any] | None, args: argparse.Namespace) -> list[str]:
    a = results["analysis"]
    re_ = a["reingest"]
    out = [
        f"5: one re-ingest of {re_['docs']} of {args.docs} documents with changed text (1 in "
        f"{common.REVISE_EVERY}, plus every source in the {a['lineage']['pairs']} "
        f"queries' vector top-{TOP_K}): ragtt one ingest_texts call, v{re_['version_before']} -> "
        f"v{re_['version_after']} ({re_['ms']:.0f} ms); ragtt drift: {a['drift']['drifted']} of "
        f"{a['drift']['sources']} sources below 0.9, p50 {a['drift']['p50_ms']:.1f} ms, first call "
        f"{a['drift']['first_ms']:.1f} ms; lineage entries (first round) {_counts(a['lineage']['entries'])}"
    ]
    for tag, p in (
        ("", (peer or {}).get("analysis")),
        (f" at {DRIFT_REF_DOCS} docs", (results.get("peer_ref") or {}).get("analysis")),
    ):
        if not p:
            continue
        d, pre = p["drift"], p["reingest"]
        text = (
            f"5: peer{tag}: {pre['docs']} ingest calls appended (its ingest never replaces a source's "
            f"chunks: {pre['chunks_after']} rows after), v{pre['version_before']} -> v{pre['version_after']}; "
            f"its drift scan (EmbeddingDriftDetector.scan) "
        )
        if d["timed_out"]:
            done = d["sources_scanned"]
            rate = f"{d['seconds'] / done:.2f} s a source" if done else "no source finished"
            proj = f", ~{d['seconds'] * d['sources_total'] / done:.0f} s projected" if done else ""
            text += (
                f"timed out at {d['timeout_s']:.0f} s with {done} of {d['sources_total']} sources "
                f"scanned ({rate}{proj}; it re-reads the whole table, vectors included, twice per source)"
            )
        else:
            text += f"took {d['seconds']:.1f} s for {d['sources_scanned']} sources"
        if "lineage" in p and p["lineage"]["n"]:
            text += (
                f"; its lineage (LineageTracer.explain) p50 {p['lineage']['p50_ms']:.0f} ms over "
                f"{p['lineage']['n']} query pairs, entries {_counts(p['lineage']['entries'])}"
            )
        out.append(text)
    return out


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


# -- other benchmarks in bench/ ------------------------------------------------------------------


def run_other_benches(quick: bool) -> list[dict[str, Any]]:
    results = []
    for name, (full_args, quick_args) in OTHER_BENCHES.items():
        script = HERE / name
        if not script.exists():
            continue
        cmd = [sys.executable, str(script), *(quick_args if quick else full_args)]
        log(f"running {name}")
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, text=True, timeout=900)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            rc = 124
        results.append({"script": name, "exit": rc, "seconds": time.perf_counter() - t0})
    return results


# -- main ----------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="./dev bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--docs", type=int, help="documents ingested in one call (default 2000; quick 200)")
    ap.add_argument("--versions", type=int, help="table versions for target 2 (default 1000; quick 40)")
    ap.add_argument("--queries", type=int, help="distinct query texts (default 20; quick 5)")
    ap.add_argument("--rounds", type=int, help="passes over the queries (default 3; quick 1)")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run, not the targets' sizes)")
    ap.add_argument("--no-peer", action="store_true", help="ragtt alone; peer rows read n/a")
    ap.add_argument("--no-extra", action="store_true", help="skip the other issues' benches (temporal, pdf, widgets)")
    ap.add_argument(
        "--json",
        type=Path,
        nargs="?",
        const=HERE / "out" / "bench.json",
        metavar="OUT",
        help="write every measurement as JSON (OUT: default bench/out/bench.json); bench/render.py renders it",
    )
    ap.add_argument("--profile", type=Path, metavar="DIR", help="cProfile ragtt's phases into DIR")
    ap.add_argument("--workdir", type=Path, help="where the projects go (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target FAILs")
    ap.add_argument(
        "--peer-drift-timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="cut the peer's drift scan off after S seconds (default 60)",
    )
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    quick = args.quick
    args.docs = args.docs or (200 if quick else 2000)
    args.versions = args.versions or (40 if quick else 1000)
    args.queries = args.queries or (5 if quick else 20)
    args.rounds = args.rounds or (1 if quick else 3)
    if args.versions <= SMALL_VERSIONS:
        ap.error(f"--versions must be more than {SMALL_VERSIONS}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    load_before = os.getloadavg()

    import numpy as np

    import ragtt

    probe = ragtt.HashEmbedder(common.HASH_DIM).embed(common.SELF_CHECK_TEXTS)
    if not np.array_equal(probe, common.hash_embed(common.SELF_CHECK_TEXTS, common.HASH_DIM)):
        print("bench: bench/common.hash_embed no longer matches ragtt.HashEmbedder; fix the copy", file=sys.stderr)
        return 2

    base = 200 if not args.quick else 50
    need = max(args.docs, base + args.versions)
    docs, all_queries, source = common.make_corpus(need, seed=args.seed)
    queries = all_queries[: args.queries]
    work = args.workdir or Path(tempfile.mkdtemp(prefix="ragtt-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    prof = Profiler(args.profile)
    results: dict[str, Any] = {}
    try:
        log(
            f"ragtt {ragtt.__version__}: ingesting {args.docs} documents ({source}), "
            f"{len(queries)} queries x {args.rounds} rounds x {len(MODES)} modes"
        )
        results["main"] = ragtt_main(work / "ragtt-main", docs[: args.docs], queries, args.rounds, prof)
        log("ragtt: drift and lineage across one re-ingest (issue 5)")
        results["analysis"], revised = ragtt_analysis(
            work / "ragtt-main", docs[: args.docs], queries, args.rounds, prof, "main", ingest=False
        )
        ref_revised: dict[str, str] | None = None
        if args.docs > DRIFT_REF_DOCS:
            results["analysis_ref"], ref_revised = ragtt_analysis(
                work / "ragtt-drift-ref", docs[:DRIFT_REF_DOCS], queries, args.rounds, prof, "ref", ingest=True
            )
        log("ragtt: the crash protocol's own cost per write (issue 10)")
        results["protocol"] = protocol_overhead(work / "ragtt-protocol", 50 if args.quick else 300)
        log(f"ragtt: {args.versions} table versions (one small ingest call each)")
        results["versions"] = ragtt_versions(work, docs, queries, base, args.versions, args.rounds, prof)
        peer = None
        if not args.no_peer:
            log(f"rag-timetravel 1.2.0 in {PEER_VENV}: same {args.docs} documents, one ingest call each")
            peer = run_peer(
                work,
                docs[: args.docs],
                queries,
                max(1, args.rounds - 1),
                timeout=1800,
                analysis=peer_analysis_job(queries, revised, args.peer_drift_timeout),
            )
            if ref_revised is not None:
                log(f"rag-timetravel 1.2.0: drift and lineage at {DRIFT_REF_DOCS} documents")
                results["peer_ref"] = run_peer(
                    work,
                    docs[:DRIFT_REF_DOCS],
                    queries,
                    1,
                    timeout=900,
                    name="peer-ref",
                    modes=(),
                    analysis=peer_analysis_job(queries, ref_revised, args.peer_drift_timeout),
                )
            for part in (peer, results.get("peer_ref") or {}):
                if "embed_probe" in part and not np.allclose(
                    np.asarray(part.pop("embed_probe"), dtype=np.float32), probe, atol=0
                ):
                    print("bench: the peer's embedder differs from ragtt.HashEmbedder", file=sys.stderr)
                    return 2
        results["peer"] = peer
        extra = [] if args.no_extra else run_other_benches(args.quick)
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)

    rows = build_rows(results, peer, args)
    m = results["main"]
    notes = [
        f"corpus: {source}, {args.docs} documents of <= {common.DOC_MAX_CHARS} chars "
        f"({m['ingest']['chunks']} ragtt chunks"
        + (f", {peer['ingest']['chunks']} peer chunks" if peer else "")
        + "); embedder: "
        f"HashEmbedder({common.HASH_DIM}) on both sides, vectors checked identical; top_k={TOP_K}",
        f"latencies are wall-clock per call (query/replay incl. event logging), p50 over "
        f"{len(queries) * args.rounds} calls per mode (peer {len(queries) * max(1, args.rounds - 1)})",
        f"ragtt ingest: one ingest_texts call -> table v{m['ingest']['table_version']}"
        + (f"; peer: {args.docs} ingest calls -> table v{peer['ingest']['table_version']}" if peer else ""),
        f"replays matching the original: {m['replay_mismatches']} mismatches of "
        f"{3 * len(queries) * args.rounds} (main), "
        f"{results['versions']['mismatches']} of {2 * len(results['versions']['small']['samples_ms'])} "
        f"(versions; replays on both projects)",
    ]
    notes.extend(analysis_notes(results, peer, args))
    if peer:
        agreement = vector_agreement(m["query"]["vector"]["top_sources"], peer["query"]["vector"]["top_sources"])
        if agreement is not None:
            notes.append(f"vector top-{TOP_K} agreement with the peer (mean Jaccard of sources): {agreement:.3f}")
    else:
        notes.append("peer skipped (--no-peer): targets 3, 4 and 5's lineage read n/a")
    if args.quick:
        notes.append("--quick: sizes are smaller than the targets'; the verdicts are indicative only")
    load_after = os.getloadavg()
    notes.append(
        f"load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f} on "
        f"{os.cpu_count()} cores; total {time.perf_counter() - started:.0f} s"
    )
    for e in extra:
        notes.append(f"{e['script']}: exit {e['exit']} in {e['seconds']:.0f} s (its own output above)")
    print()
    print_table(rows, notes)

    if args.json:
        for part in (results["main"]["query"], (peer or {}).get("query", {})):
            for entry in part.values():
                entry.pop("top_sources", None)
        payload = {
            "meta": {
                "docs": args.docs,
                "versions": args.versions,
                "queries": len(queries),
                "rounds": args.rounds,
                "quick": args.quick,
                "corpus": source,
                "python": platform.python_version(),
                "ragtt": ragtt.__version__,
                "cpus": os.cpu_count(),
                "load_before": load_before,
                "load_after": load_after,
            },
            "rows": rows,
            "ragtt": {k: results[k] for k in ("main", "versions", "analysis", "analysis_ref") if k in results},
            "peer": peer,
            "peer_ref": results.get("peer_ref"),
            "other_benches": extra,
            "notes": notes,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=1, default=str), encoding="utf-8")
        log(f"measurements written to {args.json}; `python bench/render.py {args.json}` renders them as Markdown")
    failed = [r for r in rows if r["status"] == "FAIL"]
    return 1 if (args.strict and failed) else 0


if __name__ == "__main__":
    sys.exit(main())
