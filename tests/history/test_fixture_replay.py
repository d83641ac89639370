"""The committed fixture projects (tests/fixtures/made-by-*, see make_fixture.py there) replay
bit for bit: every logged query's chunk ids, order and exact scores, on today's engines.

Their scores were ranked by the LanceDB, Lance and embedder of the ragtt that made them, so a
dependency upgrade that changes scoring fails here, in CI, with the engines that changed,
instead of months later on a user's old queries. The fixture itself is never written: each
test works on a copy and checks the original's bytes afterwards.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

import ragtt

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PROJECTS = sorted(p for p in FIXTURES.glob("made-by-*") if (p / "ragtt.json").is_file())


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_there_is_a_fixture_project() -> None:
    assert PROJECTS, f"no fixture project under {FIXTURES}: run tests/fixtures/make_fixture.py"
    for folder in PROJECTS:  # small enough to keep in git
        assert sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) < 2_000_000


@pytest.mark.parametrize("fixture", PROJECTS, ids=[p.name for p in PROJECTS])
def test_every_logged_query_of_the_fixture_replays_bit_for_bit(fixture: Path, tmp_path: Path) -> None:
    before = _digests(fixture)
    copy = tmp_path / fixture.name
    shutil.copytree(fixture, copy)  # opening takes locks and replays log their runs: never in the fixture
    with ragtt.Project.open(copy, create=False, progress=False) as proj:
        report = proj.verify()
        assert report.ok, report.problems
        queries = proj.events.query(types="query.received")
        plans = [proj.run(e.query_id).plan for e in queries]
        # what the fixture must hold to mean something: every mode, two embedders, a PDF, snapshots
        assert {p.mode for p in plans} == {"vector", "bm25", "hybrid"}
        assert len({p.embedder_id for p in plans}) == 2
        assert proj.events.query(types="index.reembedded") and len(proj.snapshots()) >= 2
        assert any(e.payload.get("source", "").endswith(".pdf") for e in proj.events.query(types="document.ingested"))
        for event in queries:
            original = proj.run(event.query_id)
            replayed = proj.replay(event.query_id)
            want = [(c["chunk_id"], c["rank"], c["score"], c["scores"]) for c in original.chunks]
            got = [(c.chunk_id, c.rank, c.score, c.scores) for c in replayed.chunks]
            assert got == want, (
                f"{original.plan.mode} query {original.query!r} at v{original.index_version} no longer "
                f"replays exactly; engines changed since the fixture was made: "
                f"{[str(c) for c in replayed.engine_changes] or 'none'}"
            )
            assert replayed.matches_original
    assert _digests(fixture) == before
