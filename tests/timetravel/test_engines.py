"""Each run records the engines that ranked it (``plan["engines"]``); a replay on other engines
still runs, and when its result differs it says which recorded component changed."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import lance
import lancedb
import pytest

import ragtt
import ragtt.index.engines as engines_module
import ragtt.index.retrieve as retrieve_module
from ragtt.cli import main
from ragtt.timetravel.run import execute, record

DOCS = {
    "refunds.md": "Refunds are accepted within 30 days of purchase on any plan.",
    "retention.md": "Deleted notes are kept in the trash for 90 days, then removed for good.",
    "security.md": "Passwords need at least 8 characters. Two-factor sign-in is optional.",
    "pricing.md": "The Pro plan costs 8 dollars per month; refunds of it are prorated.",
}
QUERY = "refunds within days"


@pytest.fixture
def proj(project: ragtt.Project) -> ragtt.Project:
    project.ingest_texts(DOCS)
    return project


def _fake_lancedb(monkeypatch: pytest.MonkeyPatch, fake: str) -> None:
    """Today's LanceDB reads as ``fake`` (what ``run_engines`` reports)."""
    real = engines_module.package_version
    monkeypatch.setattr(engines_module, "package_version", lambda d: fake if d == "lancedb" else real(d))


def _rescore_bm25(monkeypatch: pytest.MonkeyPatch) -> None:
    """BM25 as an upgraded engine might score it: the same ranking, every score 1% higher."""
    real = retrieve_module._bm25

    def scored(view: Any, queries: list[str], n: int) -> list[list[retrieve_module.Hit]]:
        found = real(view, queries, n)
        for hit in (hit for hits in found for hit in hits):
            hit.score *= 1.01
            hit.scores["bm25"] = hit.score
        return found

    monkeypatch.setattr(retrieve_module, "_bm25", scored)


def test_each_mode_records_the_engines_that_ranked_it(proj: ragtt.Project) -> None:
    plans = {mode: proj.plan_of(proj.query(QUERY, mode=mode, generate=False).query_id) for mode in ("vector", "bm25")}
    vector, bm25 = plans["vector"].engines, plans["bm25"].engines
    assert vector is not None and bm25 is not None
    assert set(vector) == {"lance", "embedder"} and set(bm25) == {"lancedb", "fts_tokenizer"}
    assert vector["lance"] == lance.__version__ and bm25["lancedb"] == lancedb.__version__
    assert vector["embedder"] == {
        "model_id": proj.embedder.model_id,
        "runtime": f"numpy {__import__('numpy').__version__}",
        "recipe": "feature hashing v1 (blake2b, float32)",
    }
    tokenizer = bm25["fts_tokenizer"]
    assert tokenizer["base_tokenizer"] == "simple" and tokenizer["with_position"] is False
    hybrid = proj.query(QUERY, mode="hybrid", generate=False)
    logged = proj.events.query(query_id=hybrid.query_id, types="retrieval.executed")[0].payload["plan"]
    assert logged["engines"] == {**vector, **bm25}  # in the log as the issue names it: plan["engines"]


def test_a_replay_on_the_same_engines_reports_no_change(proj: ragtt.Project) -> None:
    res = proj.query(QUERY, mode="hybrid", generate=False)
    replayed = proj.replay(res.query_id)
    assert replayed.matches_original and replayed.engines_recorded and replayed.engine_changes == []
    assert f"replay matches original {res.query_id}\n" in replayed.to_text() + "\n"


def test_a_replay_on_an_upgraded_full_text_engine_names_it(
    proj: ragtt.Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    res = proj.query(QUERY, mode="bm25", generate=False)
    _fake_lancedb(monkeypatch, "0.41.0")
    _rescore_bm25(monkeypatch)
    replayed = proj.replay(res.query_id)
    assert not replayed.matches_original  # it still ran, on today's engine
    assert [(c.component, c.recorded, c.today) for c in replayed.engine_changes] == [
        ("lancedb", lancedb.__version__, "0.41.0")
    ]
    text = replayed.to_text()
    assert f"replay DIFFERS FROM original {res.query_id}: engines changed since it ran" in text
    assert f"lancedb (BM25 full-text search, LanceDB): {lancedb.__version__} when recorded, 0.41.0 today" in text
    assert "0.41.0 today" in repr(replayed) and "0.41.0 today" in replayed._repr_html_()
    assert replayed.to_dict()["engine_changes"][0]["component"] == "lancedb"
    completed = proj.events.query(query_id=replayed.query_id, types="replay.query.completed")[0].payload
    assert completed["engine_changes"][0]["today"] == "0.41.0"  # the replay's own log says it too

    capsys.readouterr()
    path = str(proj.path)
    proj.close()
    assert main(["replay", res.query_id, "--project", path, "--embedder", "hash"]) == 0
    assert "engines changed since it ran" in capsys.readouterr().out


def test_a_changed_tokenizer_setting_is_named_by_its_key(proj: ragtt.Project, monkeypatch: pytest.MonkeyPatch) -> None:
    res = proj.query(QUERY, mode="bm25", generate=False)
    real = engines_module.run_engines

    def stemless(view: Any, plan: Any, embedder: Any) -> dict[str, Any]:
        found = real(view, plan, embedder)
        return {**found, "fts_tokenizer": {**found["fts_tokenizer"], "stem": False}}

    monkeypatch.setattr("ragtt.timetravel.run.run_engines", stemless)
    changes = proj.replay(res.query_id).engine_changes
    assert [(c.component, c.recorded, c.today) for c in changes] == [("fts_tokenizer.stem", True, False)]


def _record_without_engines(proj: ragtt.Project, mode: str) -> str:
    """A run as ragtt logged it before it recorded engines: its plan has no "engines"."""
    ctx = proj._ctx
    run = execute(ctx, QUERY, ctx.plan(mode=mode), ctx.version, generate=False)
    run = replace(run, plan=replace(run.plan, engines=None))
    record(ctx, run, "old-run", prefix="", config_id=ctx.config.config_id, extra={})
    assert "engines" not in proj.events.query(query_id="old-run", types="retrieval.executed")[0].payload["plan"]
    return "old-run"


def test_a_run_logged_before_engines_were_recorded_replays_as_before(
    proj: ragtt.Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = _record_without_engines(proj, "bm25")
    same = proj.replay(old)
    assert same.matches_original and same.engine_changes == [] and not same.engines_recorded
    assert same.to_text().splitlines()[1].strip() == f"replay matches original {old}"

    _rescore_bm25(monkeypatch)
    differs = proj.replay(old)
    assert not differs.matches_original and differs.engine_changes == []
    assert "its engines are unknown" in differs.to_text()


def test_a_difference_on_the_recorded_engines_is_said_not_to_be_an_upgrade(
    proj: ragtt.Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = proj.query(QUERY, mode="bm25", generate=False)
    _rescore_bm25(monkeypatch)
    replayed = proj.replay(res.query_id)
    assert not replayed.matches_original and replayed.engine_changes == []
    assert "on the engines it recorded, so not an engine upgrade" in replayed.to_text()


def test_a_diff_of_runs_on_different_engines_says_so(proj: ragtt.Project, monkeypatch: pytest.MonkeyPatch) -> None:
    before = proj.query(QUERY, mode="bm25", generate=False).query_id
    _fake_lancedb(monkeypatch, "0.41.0")
    after = proj.query(QUERY, mode="bm25", generate=False).query_id
    notes = proj.diff(before, after).notes
    assert any("ranked on different engines: lancedb" in note for note in notes), notes
    assert not any("retrieval settings" in note for note in notes), notes


def test_engine_changes_compares_only_what_both_sides_recorded() -> None:
    recorded = {"lancedb": "0.40.0", "fts_tokenizer": {"stem": True, "gone": 1}, "lance": "14.0.2"}
    today = {"lancedb": "0.40.0", "fts_tokenizer": {"stem": True, "new_key": 2}}
    assert engines_module.engine_changes(recorded, today) == []
    assert engines_module.engine_changes(None, today) == []


def test_a_custom_embedders_identity_names_its_class() -> None:
    """``embedder_identity`` of a custom embedder names its class, so a swapped one shows."""

    class Mine:
        model_id, dim = "mine-v1", 8

        def embed(self, texts: list[str]) -> Any:
            raise AssertionError

    identity = engines_module.embedder_identity(Mine())  # type: ignore[arg-type]
    assert identity["model_id"] == "mine-v1" and identity["runtime"].endswith("Mine")


def test_the_default_embedders_identity_needs_no_model_loaded() -> None:
    from importlib.metadata import version

    onnx = ragtt.OnnxEmbedder()
    identity = engines_module.embedder_identity(onnx)
    assert identity["model_id"] == onnx.model_id
    assert identity["runtime"] == f"onnxruntime {version('onnxruntime')}"
    assert identity["recipe"].startswith(f"{onnx.precision}: graph ") and "export v" in identity["recipe"]
    assert onnx._session is None  # named, not loaded
