"""Two processes write to one store at once: nothing lost, no "database is locked"."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
import traceback
from pathlib import Path
from typing import Any

from ragtt.index.embedders import HashEmbedder
from ragtt.temporal import AssertionStore, Episode, RetrievalQuery
from tests.temporal.conftest import NS, make

# Bounded by count, not by a clock: both writers open the store, meet at a barrier and then
# race through the same number of bundles (5 assertions each, a retrieval every 10), so the
# writes contend for the whole run however fast the machine is. A time limit still caps a
# hung writer.
STEPS = int(os.environ.get("RAGTT_CONCURRENCY_STEPS", "300"))
LIMIT_S = 300.0


def writer(path: str, name: str, steps: int, out: str, start: Any) -> None:
    written: list[str] = []
    errors: list[str] = []
    times: list[float] = []
    try:
        store = AssertionStore.open(path, embedder=HashEmbedder(32))
        start.wait(LIMIT_S)  # both stores are open: start writing together
        deadline = time.monotonic() + LIMIT_S
        head: str | None = None
        for step in range(1, steps + 1):
            if time.monotonic() > deadline:
                errors.append(f"only {step - 1} of {steps} bundles written in {LIMIT_S} s")
                break
            ep = Episode(f"{name}-e{step}", NS, step, float(step), "tick", f"{name} tick {step}")
            batch = [
                make(f"{name}-{step}-{k}", f"{name} observation {step} {k}", step, episode_id=ep.id) for k in range(4)
            ]
            batch.append(
                make(f"{name}-{step}-head", f"{name} status at {step}", step, episode_id=ep.id, supersedes_id=head)
            )
            store.write_episode_bundle(ep, batch)
            times.append(time.monotonic())  # the system-wide clock: comparable across the processes
            head = batch[-1].id
            written += [a.id for a in batch]
            if step % 10 == 0:
                store.retrieve(RetrievalQuery(NS, step, query_text=f"{name} status"))
        store.close()
    except Exception:
        errors.append(traceback.format_exc())
    Path(out).write_text(json.dumps({"written": written, "errors": errors, "times": times}))


def test_two_processes_write_at_once(tmp_path: Path) -> None:
    db = str(tmp_path / "shared.db")
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(2)
    outs = [str(tmp_path / f"{n}.json") for n in ("p1", "p2")]
    procs = [ctx.Process(target=writer, args=(db, n, STEPS, o, start)) for n, o in zip(("p1", "p2"), outs, strict=True)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(2 * LIMIT_S)
        assert p.exitcode == 0
    reports = [json.loads(Path(o).read_text()) for o in outs]
    for report in reports:
        assert report["errors"] == [], report["errors"][0]
        assert len(report["written"]) == 5 * STEPS
    # the two really wrote at the same time: each one's writes began before the other's ended
    first, second = (r["times"] for r in reports)
    assert max(first[0], second[0]) < min(first[-1], second[-1]), "the writers never overlapped"
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
