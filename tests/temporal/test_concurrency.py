"""Two processes write to one store at once: nothing lost, no "database is locked"."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
import traceback
from pathlib import Path

from ragtt.index.embedders import HashEmbedder
from ragtt.temporal import AssertionStore, Episode, RetrievalQuery
from tests.temporal.conftest import NS, make

SECONDS = float(os.environ.get("RAGTT_CONCURRENCY_SECONDS", "30"))


def writer(path: str, name: str, seconds: float, out: str) -> None:
    written: list[str] = []
    errors: list[str] = []
    try:
        store = AssertionStore.open(path, embedder=HashEmbedder(32))
        deadline = time.monotonic() + seconds
        head: str | None = None
        step = 0
        while time.monotonic() < deadline:
            step += 1
            ep = Episode(f"{name}-e{step}", NS, step, float(step), "tick", f"{name} tick {step}")
            batch = [
                make(f"{name}-{step}-{k}", f"{name} observation {step} {k}", step, episode_id=ep.id) for k in range(4)
            ]
            batch.append(
                make(f"{name}-{step}-head", f"{name} status at {step}", step, episode_id=ep.id, supersedes_id=head)
            )
            store.write_episode_bundle(ep, batch)
            head = batch[-1].id
            written += [a.id for a in batch]
            if step % 10 == 0:
                store.retrieve(RetrievalQuery(NS, step, query_text=f"{name} status"))
        store.close()
    except Exception:
        errors.append(traceback.format_exc())
    Path(out).write_text(json.dumps({"written": written, "errors": errors}))


def test_two_processes_write_for_thirty_seconds(tmp_path: Path) -> None:
    db = str(tmp_path / "shared.db")
    ctx = multiprocessing.get_context("spawn")
    outs = [str(tmp_path / f"{n}.json") for n in ("p1", "p2")]
    procs = [ctx.Process(target=writer, args=(db, n, SECONDS, o)) for n, o in zip(("p1", "p2"), outs, strict=True)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(SECONDS + 120)
        assert p.exitcode == 0
    reports = [json.loads(Path(o).read_text()) for o in outs]
    for report in reports:
        assert report["errors"] == [], report["errors"][0]
        assert len(report["written"]) > 50
    expected = {aid for report in reports for aid in report["written"]}
    with AssertionStore.open(db, embedder=HashEmbedder(32)) as store:
        stored = {r[0] for r in store.internals.conn.execute("SELECT id FROM assertions")}
        assert stored == expected
        assert store.pending_indexing(NS) == []  # every write was indexed too
        for name, report in zip(("p1", "p2"), reports, strict=True):
            heads = [aid for aid in report["written"] if aid.endswith("-head")]
            # each process's status chain: every head but the last was closed by its successor
            open_heads = [h for h in heads if store.get_assertion(h).valid_until is None]  # type: ignore
            assert open_heads == [heads[-1]], name
