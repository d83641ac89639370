"""Issue acceptance for lineage, drift, regression gates and bisect on Flask's real history."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ragtt
from ragtt.cli import main
from tests.conftest import flask_releases

QUERIES = [
    "SEND_FILE_MAX_AGE_DEFAULT default cache timeout",
    "minimum Python version to install Flask",
    "security headers cross-site scripting",
    "SESSION_COOKIE_SAMESITE",
]


@pytest.fixture(scope="module")
def flask(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("flask-analysis") / "proj"
    proj = ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False)
    releases = flask_releases()
    runs: list[dict[str, str]] = []  # per release: query -> query id (bm25, generation off)
    reports = []
    for release in releases:
        reports.append(proj.ingest(release))
        runs.append({q: proj.query(q, mode="bm25", top_k=5, generate=False).query_id for q in QUERIES})
    yield proj, [r.name for r in releases], reports, runs
    proj.close()


def test_lineage_attributes_departures_to_the_right_release(flask) -> None:  # type: ignore[no-untyped-def]
    proj, names, reports, runs = flask
    checked = 0
    for k in range(len(names) - 1):
        for query in QUERIES:
            report = proj.lineage(runs[k][query], runs[k + 1][query])
            for entry in report.entries:
                if entry.change != "left":
                    continue
                checked += 1
                ingest = reports[k + 1]
                if entry.cause == "ranking":
                    assert entry.chunk_id in set(proj.chunks(at=ingest.index_version_after)["chunk_id"])
                    continue
                assert entry.version == ingest.index_version_after, (names[k + 1], entry)
                if entry.cause == "reingested":
                    assert entry.source in ingest.documents_updated
                else:
                    assert entry.cause == "removed" and entry.source in ingest.documents_removed
                assert entry.source in entry.statement() and str(entry.version) in entry.statement()
    assert checked > 10


def test_lineage_text_and_frame(flask) -> None:  # type: ignore[no-untyped-def]
    proj, _, _, runs = flask
    report = proj.lineage(runs[0][QUERIES[2]], runs[-1][QUERIES[2]])
    frame = report.frame()
    assert {"chunk_id", "source", "change", "cause", "version"} <= set(frame.columns)
    assert frame.height == len(report.entries) > 0
    assert set(frame["cause"]) <= {"added", "reingested", "removed", "ranking"}
    text = report.to_text()
    assert "docs/security.rst" in text and "re-ingested" in text and "was added" in text
    assert len(report.to_text().splitlines()) == len(report.entries) + 1


def test_snapshot_diff_between_releases(flask) -> None:  # type: ignore[no-untyped-def]
    proj, names, reports, _ = flask
    k = names.index("2024-04-07_flask-3.0.3")
    diff = proj.snapshot_diff(reports[k - 1].index_version_after, reports[k].index_version_after)
    assert sorted(diff.documents_removed) == ["README.rst", "docs/security.rst"]
    assert sorted(diff.documents_added) == ["README.md", "docs/web-security.rst"]
    assert "docs/security.rst" in diff.to_text() and diff.frame().height == 6


def test_drift_is_one_for_unchanged_sources_and_flags_an_embedder_swap(flask, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proj, names, reports, _ = flask
    for k in range(1, len(names)):
        report = proj.drift(reports[k - 1].index_version_after, reports[k].index_version_after)
        assert not report.embedder_changed
        by_source = {s.source: s for s in report.sources}
        for source in reports[k].documents_unchanged:
            assert by_source[source].centroid_cosine >= 0.99 and not by_source[source].drifted
    frame = report.frame()
    assert {"source", "centroid_cosine", "drifted"} <= set(frame.columns)

    class Rolled:
        """Same dimension, different model: every vector rotated."""

        model_id = "test-rolled-hash"
        dim = 256

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.roll(ragtt.HashEmbedder().embed(texts), 97, axis=1)

    with ragtt.Project.open(tmp_path / "swap", embedder=ragtt.HashEmbedder(), progress=False) as swap:
        swap.ingest(flask_releases()[-1])
        before = swap.version
        old_query = swap.query("request context", generate=False)
        rep = swap.reembed(Rolled())
        assert rep.index_version_after == before + 1 and rep.chunks_kept > 0
        drift = swap.drift(before, swap.version)
        assert drift.embedder_changed and drift.comparable
        assert set(drift.drifted_sources) == {s.source for s in drift.sources}
        event = swap.events.last("index.reembedded")
        assert event is not None and event.payload["from_model"] == "ragtt-hash-v1-256"
        assert swap.replay(old_query.query_id).matches_original  # its vector comes from the cache
        swap.reembed(ragtt.HashEmbedder(64))  # a new dimension: incomparable, not compared
        incomparable = swap.drift(before, swap.version)
        assert not incomparable.comparable and all(s.drifted is None for s in incomparable.sources)
    with pytest.raises(ragtt.ConfigError, match="reembed"):
        ragtt.Project.open(tmp_path / "swap", embedder=ragtt.HashEmbedder(256))


def test_golden_suite_gate_via_cli(flask, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    releases = flask_releases()
    k = [r.name for r in releases].index("2023-09-30_flask-3.0.0")
    project = tmp_path / "gate"
    common = ["--project", str(project), "--embedder", "hash"]
    assert main(["ingest", str(releases[k]), *common]) == 0
    suite = tmp_path / "suite.json"
    queries = ["--query", QUERIES[2], "--query", QUERIES[1], "--mode", "bm25", "--top-k", "4"]
    assert main(["test", "capture", "--name", "flask-docs", "-o", str(suite), *queries, *common]) == 0
    assert main(["test", "run", str(suite), "--threshold", "0.8", *common]) == 0
    assert main(["ingest", str(releases[k + 1]), *common]) == 0  # security.rst renamed, README changed format
    capsys.readouterr()
    assert main(["test", "run", str(suite), "--threshold", "0.8", *common]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "docs/security.rst" in out
    assert main(["test", "run", str(tmp_path / "missing.json"), *common]) == 2


def test_regression_report_frame_and_one_error_does_not_stop_the_rest(flask) -> None:  # type: ignore[no-untyped-def]
    proj, *_ = flask
    suite = proj.regression.capture(QUERIES[:2], "two")
    broken = ragtt.GoldenSuite(
        suite.name,
        suite.created_at,
        suite.index_version,
        suite.config_id,
        {**suite.plan, "mode": "nonsense"},
        suite.queries,
    )
    report = proj.regression.run(broken)
    assert [o.status for o in report.outcomes] == ["error", "error"] and report.exit_code == 2
    ok = proj.regression.run(suite)
    assert ok.exit_code == 0 and ok.frame().height == 2


def test_bisect_finds_the_release_where_a_config_default_changed(flask) -> None:  # type: ignore[no-untyped-def]
    proj, names, reports, runs = flask
    start = names.index("2018-04-26_flask-1.0")
    changed = names.index("2021-05-11_flask-2.0.0")
    query_id = runs[start][QUERIES[0]]

    def twelve_hours(result: ragtt.ReplayResult) -> bool:
        return any("43200" in c.text for c in result.chunks)

    report = proj.bisect(query_id, twelve_hours)
    n = report.versions_searched
    assert report.first_version == reports[changed].index_version_after
    assert report.replays_used <= int(np.ceil(np.log2(n))) + 2
    assert len({v for v, _ in report.steps}) == len(report.steps) == report.replays_used  # no version twice
    assert report.start_value is True and report.end_value is False
    assert [v for v, _ in report.steps][:2] == [reports[start].index_version_after, proj.version]
    text_report = proj.bisect("SEND_FILE_MAX_AGE_DEFAULT default cache timeout", "source:docs/security.rst")
    assert text_report.first_version is not None
    with pytest.raises(ragtt.ConfigError):
        proj.bisect(query_id, "nonsense")


def test_compare_configs_shares_the_embedding_cache(tmp_path: Path) -> None:
    release = flask_releases()[-1]
    comparison = ragtt.compare_configs(
        release,
        ragtt.PipelineConfig(retrieval_mode="vector"),
        ragtt.PipelineConfig(retrieval_mode="hybrid"),
        QUERIES,
        embedder=ragtt.HashEmbedder(),
    )
    assert comparison.embeddings_reused >= comparison.embeddings_computed > 0  # side b embedded nothing new
    assert len(comparison.queries) == len(QUERIES) and 0 <= comparison.mean_overlap <= 1
    assert -1 <= comparison.mean_rank_correlation <= 1 and comparison.frame().height == len(QUERIES)


def test_drift_marks_sources_present_at_one_version_only(flask) -> None:  # type: ignore[no-untyped-def]
    proj, names, reports, _ = flask
    k = names.index("2024-04-07_flask-3.0.3")
    report = proj.drift(reports[k - 1].index_version_after, reports[k].index_version_after)
    status = {s.source: s.status for s in report.sources}
    assert status["docs/security.rst"] == "removed" and status["docs/web-security.rst"] == "added"
    assert status["docs/config.rst"] == "common"
    one_sided = [s for s in report.sources if s.status != "common"]
    assert all(s.drifted is None and s.centroid_cosine is None for s in one_sided)
    assert "added" in report.to_text() and report.frame()["status"].to_list() == [s.status for s in report.sources]
