"""Issue 14, requirement 4: scale curves, with the hash embedder (the cost is ragtt's, not a model's).

    ./dev bench --scale                        # 10k, 100k, 1M chunks; 10, 1,000, 10,000 versions (~45 min)
    ./dev bench --scale --quick                # 2k, 10k chunks; 10, 100 versions (a few minutes)
    python bench/bench_scale.py --chunks 10000,100000 --versions 10,1000 --json scale.json
    python bench/bench_scale.py --from a.json b.json --chart bench/scale.svg   # table + chart of saved cells
    python bench/bench_scale.py --ann-direct 1000000   # the ANN search alone on 1M random vectors (~10 min)

Two curves, each cell in its own process (so peak RSS is the cell's):

- chunks: N one-chunk documents ingested in 10 versions, N in ``--chunks``;
- versions: the smallest N, then one edited document per version up to V in ``--versions``.

Per cell: ingest chunks/s (the whole build, maintenance and the ANN index included), query
p50 and replay p50 for vector, bm25 and hybrid (every replay must match its query), lineage
p50 (a query's run at the first version against its run at the latest), a drift scan
(first version against the latest), bytes on disk and peak RSS. ``--events`` more logged
events are then appended (synthetic runs) and ``events.frame()`` is timed over all of them.

The targets: query and replay p50 at the most versions within 1.3x of the fewest; at 1M
chunks (the largest N past ``ann_min_rows``), vector query p50 under 50 ms with the ANN index,
every replay identical. Timings on shared cores are noisy; the ratios are side by side.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("RUST_LOG", "error")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

MODES = ("vector", "bm25", "hybrid")
BUILD_VERSIONS = 10  # the chunks curve ingests N documents in this many versions
VERSIONS_RATIO_TARGET = 1.3
ANN_P50_TARGET_MS = 50.0


def _ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1e3, 3)


def _timed(fn: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def run_cell(path: Path, chunks: int, versions: int, queries: int, events: int) -> dict[str, Any]:
    """Build one project (``chunks`` documents, then edits up to ``versions`` versions), measure it."""
    import ragtt

    docs, texts, _ = common.make_corpus(chunks)
    texts = texts[:queries]
    cell: dict[str, Any] = {"chunks": chunks, "target_versions": versions}
    base = path.with_name(path.name + "-base")

    def open_project(where: Path) -> Any:
        return ragtt.Project.open(where, embedder=ragtt.HashEmbedder(common.HASH_DIM), progress=False)

    proj = open_project(path)
    try:
        t0 = time.perf_counter()
        per = -(-chunks // min(BUILD_VERSIONS, versions))
        for start in range(0, chunks, per):
            proj.ingest_texts(dict(docs[start : start + per]))
        first = proj.version
        early = {t: proj.query(t, mode="vector", generate=False).query_id for t in texts}
        if proj.version < versions:  # keep the project as built, to time it beside the edited one
            proj.close()
            shutil.copytree(path, base)
            proj = open_project(path)
        edits = 0
        while proj.version < versions:
            name, text = docs[edits % len(docs)]
            proj.ingest_texts({name: f"{text} Revision {edits}."})
            edits += 1
        build_s = time.perf_counter() - t0
        cell.update(
            versions=proj.version,
            rows=proj.chunks().height,
            build_s=round(build_s, 2),
            ingest_chunks_per_s=round((chunks + edits) / build_s, 1),
            ann_index=proj.events.last("index.vector_built") is not None,
        )
        identical = True
        for mode in MODES:
            proj.query(texts[0], mode=mode, generate=False)  # warm: views, the query vector's cache
            runs, seconds = [], []
            for t in texts:
                res, s = _timed(lambda t=t, mode=mode: proj.query(t, mode=mode, generate=False))
                runs.append(res)
                seconds.append(s)
            replays = []
            for res in runs:
                again, s = _timed(lambda res=res: proj.replay(res.query_id))
                replays.append(s)
                identical &= again.matches_original and [(c.chunk_id, c.score) for c in again.chunks] == [
                    (c.chunk_id, c.score) for c in res.chunks
                ]
            cell[f"query_{mode}_p50_ms"] = _ms(seconds)
            cell[f"replay_{mode}_p50_ms"] = _ms(replays)
            if mode == "vector":
                cell["vector_index_searched"] = proj.plan_of(runs[0].query_id).index_uuid is not None
                late = {r.text: r.query_id for r in runs}
        cell["replays_identical"] = identical
        if cell["vector_index_searched"]:
            cell.update(ann_against_exact(proj, texts))
        lineage = [_timed(lambda t=t: proj.lineage(early[t], late[t]))[1] for t in texts]
        cell["lineage_p50_ms"] = _ms(lineage)
        cell["drift_s"] = round(_timed(lambda: proj.drift(first, proj.version))[1], 3)
        cell["disk_bytes"] = common.dir_bytes(path)
        if base.exists():
            with open_project(base) as few:
                cell["base_versions"] = few.version
                cell["side_by_side"] = against_base(few, proj, texts)
        if events:
            _append_events(proj.events, events)
            cell["events"] = len(proj.events.frame())
            cell["events_frame_s"] = round(min(_timed(proj.events.frame)[1] for _ in range(3)), 3)
    finally:
        proj.close()
    cell["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return cell


def against_base(few: Any, many: Any, texts: list[str]) -> dict[str, float]:
    """p50 on the project with many versions over p50 on its copy as built, per mode, for
    queries and their replays, the two interleaved call by call (load drift hits both)."""
    ratios = {}
    for mode in MODES:
        times: dict[tuple[str, int], list[float]] = {(k, i): [] for k in ("query", "replay") for i in (0, 1)}
        for t in texts:
            for i, proj in enumerate((few, many)):
                res, s = _timed(lambda proj=proj, t=t, mode=mode: proj.query(t, mode=mode, generate=False))
                times["query", i].append(s)
                times["replay", i].append(_timed(lambda proj=proj, res=res: proj.replay(res.query_id))[1])
        for kind in ("query", "replay"):
            ratios[f"{kind}_{mode}"] = round(statistics.median(times[kind, 1]) / statistics.median(times[kind, 0]), 3)
    return ratios


def ann_against_exact(proj: Any, texts: list[str]) -> dict[str, Any]:
    """At the latest version: the ANN search against an exact scan of the same version, side
    by side (interleaved), and how many of the exact top-k the ANN search finds."""
    ann = proj.plan()
    flat = dataclasses.replace(ann, vector_index="flat")
    version = proj.version
    times: dict[str, list[float]] = {"ann": [], "flat": []}
    found = wanted = 0
    for t in texts:
        hits = {}
        for name, plan in (("ann", ann), ("flat", flat)):
            got, s = _timed(lambda plan=plan, t=t: proj.retrieve_at(t, version, plan))
            times[name].append(s)
            hits[name] = {c.chunk_id for c in got}
        found += len(hits["ann"] & hits["flat"])
        wanted += len(hits["flat"])
    return {
        "retrieve_ann_p50_ms": _ms(times["ann"]),
        "retrieve_exact_p50_ms": _ms(times["flat"]),
        "ann_recall_at_k": round(found / max(wanted, 1), 3),
    }


def ann_direct(folder: Path, rows: int, queries: int, dim: int = common.HASH_DIM) -> dict[str, Any]:
    """``rows`` random unit vectors written straight into a ChunkTable (no ingest: the hash
    embedder cannot embed a million chunks in minutes on two cores), indexed as maintenance
    would (``create_vector_index`` with its sizes), then searched by ``retrieve`` with the live
    plan's ANN settings, twice per query (the second on a fresh view: it must be identical),
    and a few queries by an exact scan. Random vectors have no clusters: the recall here is a
    floor, not what text embeddings get."""
    import numpy as np
    import pyarrow as pa

    from ragtt.index.maintenance import ivf_pq_sizes
    from ragtt.index.retrieve import ANN_NPROBES, ANN_REFINE_FACTOR, RetrievalPlan, retrieve
    from ragtt.index.table import ChunkTable, chunk_schema

    table, _ = ChunkTable.create(folder, "chunks", dim)
    rng = np.random.default_rng(0)

    def unit(n: int) -> Any:
        v = rng.standard_normal((n, dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    t0 = time.perf_counter()
    for start in range(0, rows, 100_000):
        n = min(100_000, rows - start)
        ids = [f"c{i:08d}" for i in range(start, start + n)]
        columns = {k: ids for k in ("chunk_id", "doc_id", "doc_key", "source", "content_hash", "text")}
        columns.update(char_start=[0] * n, char_end=[1] * n, regions=[[]] * n, ingest_id=["bench"] * n)
        columns["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(unit(n).ravel()), dim)
        table.add_rows(pa.table(columns, schema=chunk_schema(dim)))
    write_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    version = table.create_vector_index("vector_idx", *ivf_pq_sizes(rows, dim))
    index_s = time.perf_counter() - t0
    plan = RetrievalPlan("vector", 4, 20, 0.5, "none", "", "random", dim, "chunks", "auto")
    ann = dataclasses.replace(plan, nprobes=ANN_NPROBES, refine_factor=ANN_REFINE_FACTOR)
    ann = ann.searching(table.vector_index(version))
    vectors = unit(queries)
    retrieve(table.view(version), ann, "", vectors[0])  # warm
    first, times = [], []
    for q in vectors:
        hits, s = _timed(lambda q=q: retrieve(table.view(version), ann, "", q))
        first.append([(h.chunk_id, h.score) for h in hits])
        times.append(s)
    fresh = ChunkTable(folder, "chunks")
    identical = all(
        [(h.chunk_id, h.score) for h in retrieve(fresh.view(version), ann, "", q)] == f
        for q, f in zip(vectors, first, strict=True)
    )
    exact, found = [], 0
    for q, f in list(zip(vectors, first, strict=True))[:5]:
        hits, s = _timed(lambda q=q: retrieve(table.view(version), plan.searching(None), "", q))
        exact.append(s)
        found += len({h.chunk_id for h in hits} & {c for c, _ in f})
    return {
        "rows": rows,
        "write_s": round(write_s, 1),
        "index_s": round(index_s, 1),
        "retrieve_ann_p50_ms": _ms(times),
        "retrieve_exact_p50_ms": _ms(exact),
        "identical_on_a_fresh_view": identical,
        "recall_at_4_random_vectors": round(found / (4 * len(exact)), 3),
    }


def _append_events(log: Any, n: int, batch: int = 10_000) -> None:
    from ragtt.events import types as ev
    from ragtt.events.store import Event

    kinds = (ev.QUERY_RECEIVED, ev.RETRIEVAL_EXECUTED, ev.CONTEXT_ASSEMBLED, ev.QUERY_COMPLETED)
    for start in range(0, n, batch):
        log.append_many(
            [
                Event(kinds[i % 4], {"text": f"question {i // 4}", "top_k": 4}, query_id=f"s{i // 4:09d}")
                for i in range(start, min(n, start + batch))
            ]
        )


def cells(chunk_sizes: list[int], version_counts: list[int]) -> list[tuple[str, int, int]]:
    """The two curves: every N at BUILD_VERSIONS versions, every V at the smallest N."""
    fewest = min(version_counts)
    out = [("chunks", n, fewest) for n in chunk_sizes]
    out += [("versions", min(chunk_sizes), v) for v in version_counts if v != fewest]
    return out


def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    results = []
    with tempfile.TemporaryDirectory(prefix="ragtt-bench-scale-") as tmp:
        for i, (curve, n, v) in enumerate(cells(args.chunks, args.versions)):
            out = Path(tmp) / f"cell{i}.json"
            events = args.events if i == 0 else 0
            cmd = [sys.executable, __file__, "--cell", str(n), str(v), str(out), "--queries", str(args.queries)]
            cmd += ["--events", str(events)]
            print(f"[scale {time.strftime('%H:%M:%S')}] {curve}: {n:,} chunks, {v:,} versions", file=sys.stderr)
            proc = subprocess.run(cmd, env={**os.environ, "RAGTT_BENCH_WORK": tmp}, check=False)
            if proc.returncode or not out.exists():
                results.append({"curve": curve, "chunks": n, "target_versions": v, "error": proc.returncode})
                continue
            results.append({"curve": curve, **json.loads(out.read_text())})
            if args.json:  # after every cell: a long run that is cut short keeps what it measured
                args.json.write_text(json.dumps(results, indent=2))
    return results


def table(results: list[dict[str, Any]]) -> str:
    cols = [
        ("curve", "curve", "{}"),
        ("chunks", "chunks", "{:,}"),
        ("versions", "vers", "{:,}"),
        ("ingest_chunks_per_s", "ingest/s", "{:,.0f}"),
        ("ann_index", "ann", "{}"),
        *[(f"query_{m}_p50_ms", f"q {m[:3]} ms", "{:.1f}") for m in MODES],
        *[(f"replay_{m}_p50_ms", f"r {m[:3]} ms", "{:.1f}") for m in MODES],
        ("lineage_p50_ms", "lineage ms", "{:.1f}"),
        ("drift_s", "drift s", "{:.2f}"),
        ("disk_bytes", "disk MB", "{}"),
        ("peak_rss_mb", "RSS MB", "{:.0f}"),
        ("replays_identical", "replay==", "{}"),
    ]
    rows = [[h for _, h, _ in cols]]
    for r in results:
        row = []
        for key, _, fmt in cols:
            value = r.get(key)
            if key == "disk_bytes" and value is not None:
                value = f"{value / 1e6:,.0f}"
            row.append("-" if value is None else fmt.format(value))
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(cols))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    for r in results:
        if "retrieve_ann_p50_ms" in r:
            lines.append(
                f"{r['chunks']:,} chunks, retrieval alone: ANN {r['retrieve_ann_p50_ms']:.1f} ms vs exact scan "
                f"{r['retrieve_exact_p50_ms']:.1f} ms p50 "
                f"({r['retrieve_exact_p50_ms'] / r['retrieve_ann_p50_ms']:.1f}x), recall@k {r['ann_recall_at_k']:.2f}"
            )
        if "events_frame_s" in r:
            lines.append(f"events.frame() over {r['events']:,} events: {r['events_frame_s']:.2f} s")
    return "\n".join(lines)


def verdicts(results: list[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    out = []
    ok = [r for r in results if "error" not in r]
    base = [r for r in ok if r["curve"] == "chunks" and r["chunks"] == min(x["chunks"] for x in ok)]
    most = max((r for r in ok if r["curve"] == "versions"), key=lambda r: r["versions"], default=None)
    if most is not None and "side_by_side" in most:  # the two projects timed call by call
        for key, ratio in most["side_by_side"].items():
            name = f"{key} p50 at {most['versions']:,} / {most['base_versions']:,} versions, side by side"
            out.append((name, f"{ratio:.2f}x (target <= {VERSIONS_RATIO_TARGET}x)", ratio <= VERSIONS_RATIO_TARGET))
    elif base and most is not None:
        for key in [f"{kind}_{m}_p50_ms" for kind in ("query", "replay") for m in MODES]:
            ratio = most[key] / base[0][key]
            name = f"{key} at {most['versions']:,} / {base[0]['versions']:,} versions (separate cells)"
            out.append((name, f"{ratio:.2f}x (target <= {VERSIONS_RATIO_TARGET}x)", ratio <= VERSIONS_RATIO_TARGET))
    indexed = [r for r in ok if r.get("vector_index_searched")]
    if indexed:
        top = max(indexed, key=lambda r: r["chunks"])
        p50 = top["query_vector_p50_ms"]
        out.append(
            (
                f"vector query p50 at {top['chunks']:,} chunks (ANN index)",
                f"{p50:.1f} ms (target < {ANN_P50_TARGET_MS:.0f} ms)",
                p50 < ANN_P50_TARGET_MS,
            )
        )
    out.append(("every replay identical", "yes" if all(r["replays_identical"] for r in ok) else "NO", True))
    out[-1] = (out[-1][0], out[-1][1], out[-1][1] == "yes")
    return out


def chart(results: list[dict[str, Any]], target: Path) -> Path:
    """The curves as an Altair chart: SVG/PNG through vl-convert when installed, else HTML."""
    import altair as alt
    import polars as pl

    long = []
    ok = [r for r in results if "error" not in r]
    smallest = min((r["chunks"] for r in ok), default=0)
    points = [(f"by {r['curve']}", r["chunks"] if r["curve"] == "chunks" else r["versions"], r) for r in ok]
    # The versions curve starts at the chunks curve's smallest cell (same N, fewest versions).
    points += [("by versions", r["versions"], r) for r in ok if r["curve"] == "chunks" and r["chunks"] == smallest]
    for curve, x, r in points:
        for key, label in [
            *[(f"query_{m}_p50_ms", f"query {m}") for m in MODES],
            *[(f"replay_{m}_p50_ms", f"replay {m}") for m in MODES],
            ("lineage_p50_ms", "lineage"),
        ]:
            long.append({"curve": curve, "x": x, "series": label, "ms": r[key]})
    base = alt.Chart(pl.DataFrame(long)).mark_line(point=True)
    plot = base.encode(
        x=alt.X("x:Q", scale=alt.Scale(type="log"), title="chunks / versions (log)"),
        y=alt.Y("ms:Q", scale=alt.Scale(type="log"), title="p50 ms (log)"),
        color="series:N",
    ).properties(width=320, height=240)
    faceted = plot.facet(column=alt.Column("curve:N", title=None)).resolve_scale(x="independent")
    try:
        import vl_convert  # noqa: F401

        faceted.save(str(target))
        return target
    except ImportError:
        html = target.with_suffix(".html")
        faceted.save(str(html))
        return html


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=lambda s: [int(x) for x in s.split(",")], default=None)
    ap.add_argument("--versions", type=lambda s: [int(x) for x in s.split(",")], default=None)
    ap.add_argument("--queries", type=int, default=20, help="distinct query texts per mode (default 20)")
    ap.add_argument("--events", type=int, default=None, help="events appended before events.frame() (1,000,000)")
    ap.add_argument("--quick", action="store_true", help="2k and 10k chunks, 10 and 100 versions, 50,000 events")
    ap.add_argument("--json", type=Path, metavar="OUT", help="write every cell as JSON")
    ap.add_argument("--chart", type=Path, metavar="OUT", help="render the curves (.svg/.png; .html without vl-convert)")
    ap.add_argument(
        "--from", dest="saved", nargs="+", type=Path, metavar="JSON", help="report saved cells, measure none"
    )
    ap.add_argument("--ann-direct", type=int, metavar="ROWS", help="only the ANN search on ROWS random vectors")
    ap.add_argument("--ann-on", type=Path, metavar="PROJECT", help="only ANN against exact on an existing project")
    ap.add_argument("--cell", nargs=3, metavar=("CHUNKS", "VERSIONS", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.ann_direct:
        with tempfile.TemporaryDirectory(prefix="ragtt-bench-ann-") as tmp:
            print(json.dumps(ann_direct(Path(tmp), args.ann_direct, args.queries)))
        return 0
    if args.ann_on:
        import ragtt

        with ragtt.Project.open(args.ann_on, create=False, progress=False) as proj:
            print(json.dumps(ann_against_exact(proj, common.make_corpus(1)[1][: args.queries])))
        return 0
    if args.cell:
        n, v, out = int(args.cell[0]), int(args.cell[1]), Path(args.cell[2])
        work = Path(os.environ.get("RAGTT_BENCH_WORK") or tempfile.mkdtemp(prefix="ragtt-bench-scale-"))
        out.write_text(json.dumps(run_cell(work / f"p{n}-{v}", n, v, args.queries, args.events or 0)))
        return 0
    args.chunks = args.chunks or ([2_000, 10_000] if args.quick else [10_000, 100_000, 1_000_000])
    args.versions = args.versions or ([10, 100] if args.quick else [10, 1_000, 10_000])
    args.events = args.events if args.events is not None else (50_000 if args.quick else 1_000_000)
    saved = [cell for path in args.saved or [] for cell in json.loads(path.read_text())]
    results = saved or measure(args)
    print(table(results))
    marks = verdicts(results)
    for name, value, passed in marks:
        print(f"  {name:<58} {value:<36} {'PASS' if passed else 'FAIL'}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    if args.chart:
        print(f"chart: {chart(results, args.chart)}")
    return 0 if all(p for _, _, p in marks) else 1


if __name__ == "__main__":
    sys.exit(main())
