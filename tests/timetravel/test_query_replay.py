from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import ragtt
from ragtt.timetravel.diff import rank_biased_overlap

DOCS = {
    "refunds.md": "Refunds are accepted within 30 days of purchase on any plan.",
    "retention.md": "Deleted notes are kept in the trash for 90 days.",
    "security.md": "Passwords need at least 8 characters. Two-factor sign-in is optional.",
    "pricing.md": "The Pro plan costs 8 dollars per month.",
}


def test_query_logs_one_transaction_of_events(project: ragtt.Project) -> None:
    project.ingest_texts(DOCS)
    res = project.query("refund within days", top_k=2)
    assert isinstance(res, ragtt.QueryResult)
    assert res.index_version == project.version and res.config_id == project.config.config_id
    assert [c.rank for c in res.chunks] == [1, 2] and res.chunks[0].source == "refunds.md"
    assert all(isinstance(v, float) for c in res.chunks for v in c.scores.values())
    assert res.model == "extractive" and "extractive" in (res.answer or "")
    types = project.trace(res.query_id)["type"].to_list()
    assert types == [
        "query.received",
        "retrieval.executed",
        "context.assembled",
        "generation.executed",
        "query.completed",
    ]
    retrieval = project.events.query(query_id=res.query_id, types="retrieval.executed")[0].payload
    assert retrieval["index_version"] == res.index_version
    assert {"mode", "top_k", "candidate_pool", "hybrid_alpha", "reranker", "reranker_version", "embedder_id"} <= set(
        retrieval["plan"]
    )
    assert [c["chunk_id"] for c in retrieval["chunks"]] == res.chunk_ids
    no_gen = project.query("refund", generate=False)
    assert no_gen.answer is None and "generation.executed" not in project.trace(no_gen.query_id)["type"].to_list()


@pytest.mark.parametrize("mode", ["vector", "bm25", "hybrid"])
def test_modes_keep_score_components(project: ragtt.Project, mode: str) -> None:
    project.ingest_texts(DOCS)
    res = project.query("refund days purchase", mode=mode, generate=False)
    top = res.chunks[0]
    assert top.source == "refunds.md"
    expected = {"vector": {"vector"}, "bm25": {"bm25"}, "hybrid": {"fused"}}[mode]
    assert expected <= set(top.scores)
    scores = [c.score for c in res.chunks]
    assert scores == sorted(scores, reverse=True)


def test_lexical_reranker_scores_and_orders(open_project) -> None:  # type: ignore[no-untyped-def]
    proj = open_project(config=ragtt.PipelineConfig(reranker="lexical-overlap-v1"))
    proj.ingest_texts(DOCS)
    res = proj.query("two-factor sign-in passwords", generate=False)
    assert res.chunks[0].source == "security.md" and "rerank" in res.chunks[0].scores
    assert res.chunks[0].score == res.chunks[0].scores["rerank"]


def test_replay_pins_version_and_plan_never_the_live_index(project: ragtt.Project) -> None:
    project.ingest_texts(DOCS)
    then = project.query("refund days", mode="bm25", top_k=2)
    project.ingest_texts({"refunds.md": "Refunds are accepted within 14 days, annual plans only."})
    replayed = project.replay(then.query_id)
    assert isinstance(replayed, ragtt.ReplayResult)
    assert replayed.matches_original and replayed.original_query_id == then.query_id
    assert replayed.index_version == then.index_version < project.version
    assert "30 days" in replayed.chunks[0].text and len(replayed.chunks) == 2
    assert replayed.answer is None
    types = project.trace(replayed.query_id)["type"].to_list()
    assert types[0] == "replay.query.received" and types[-1] == "replay.query.completed"
    # The replay itself can be replayed and diffed.
    assert project.replay(replayed.query_id).matches_original


def test_replay_text_at_version_label_and_datetime(project: ragtt.Project) -> None:
    project.ingest_texts(DOCS)
    project.snapshot("r1")
    v1 = project.version
    moment = datetime.now(UTC)
    project.ingest_texts({"refunds.md": "Refunds: 14 days."})
    for at in (v1, "r1", moment, str(v1)):
        rp = project.replay_text("refund", at=at, top_k=1)
        assert rp.index_version == v1 and "30 days" in rp.chunks[0].text
    assert "14 days" in project.replay_text("refund", at=project.version, top_k=1).chunks[0].text
    with pytest.raises(ragtt.NotFoundError):
        project.replay_text("refund", at=999)
    with pytest.raises(ragtt.NotFoundError):
        project.replay_text("refund", at="no-such-label")
    with pytest.raises(ragtt.NotFoundError):
        project.replay_text("refund", at=moment - timedelta(days=365))
    with pytest.raises(ragtt.NotFoundError):
        project.replay("0" * 32)


def test_snapshots(project: ragtt.Project) -> None:
    project.ingest_texts(DOCS)
    snap = project.snapshot("v1-docs")
    assert isinstance(snap, ragtt.Snapshot)
    assert (snap.label, snap.index_version, snap.doc_count, snap.chunk_count) == ("v1-docs", project.version, 4, 4)
    assert project.snapshots() == [snap]
    assert project.events.last("index.snapshot_taken") is not None
    assert project.snapshot("v1-docs") == snap  # the same label on the same version: the same snapshot
    project.ingest_texts({"later.md": "a later document"})
    with pytest.raises(ragtt.RagttError, match="already exists"):
        project.snapshot("v1-docs")
    with pytest.raises(ragtt.ConfigError):
        project.snapshot("bad label/")


def test_auto_snapshot_every_n_documents(open_project) -> None:  # type: ignore[no-untyped-def]
    proj = open_project(config=ragtt.PipelineConfig(auto_snapshot_every=3))
    proj.ingest_texts({"a.md": "a", "b.md": "b"})
    assert proj.snapshots() == []
    proj.ingest_texts({"c.md": "c"})
    assert [s.index_version for s in proj.snapshots()] == [proj.version]


def test_ties_are_cut_deterministically(project: ragtt.Project) -> None:
    boiler = "Contact support at the help desk for any question about your account."
    project.ingest_texts({f"copy{i:02d}.md": boiler for i in range(30)} | {"other.md": "unrelated words"})
    runs = [
        project.query("help desk support", top_k=4, mode=mode, generate=False)
        for mode in ("vector", "bm25", "hybrid")
        for _ in range(3)
    ]
    for i in range(0, 9, 3):
        ids = [r.chunk_ids for r in runs[i : i + 3]]
        assert ids[0] == ids[1] == ids[2]
        assert ids[0] == sorted(ids[0])  # equal scores: chunk_id breaks the tie
        assert project.replay(runs[i].query_id).matches_original


def test_diff_reports_added_removed_kept(project: ragtt.Project) -> None:
    project.ingest_texts(DOCS)
    left = project.query("refund days", top_k=3)
    project.ingest_texts({"refunds.md": "Refunds within 14 days. <script>alert(1)</script>"})
    right = project.query("refund days", top_k=3)
    diff = project.diff(left.query_id, right.query_id)
    assert isinstance(diff, ragtt.DiffReport)
    assert [c.source for c in diff.removed] == ["refunds.md"] and [c.source for c in diff.added] == ["refunds.md"]
    assert len(diff.kept) == 2 and all(k.score_delta == k.score_after - k.score_before for k in diff.kept)
    assert 0 < diff.rbo < 1 and diff.jaccard == pytest.approx(2 / 4)
    assert diff.answer_similarity is not None and 0 <= diff.answer_similarity["token_jaccard"] <= 1
    assert diff.latency_delta_ms is not None
    html = diff.to_html()
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert "refunds.md" in diff.to_text() and diff.to_dict()["rbo"] == diff.rbo
    same = project.diff(left.query_id, project.replay(left.query_id).query_id)
    assert same.identical and same.rbo == pytest.approx(1.0)


def test_rank_biased_overlap_properties() -> None:
    assert rank_biased_overlap(list("abcd"), list("abcd")) == pytest.approx(1.0)
    assert rank_biased_overlap(list("abcd"), list("wxyz")) == 0.0
    swapped_top = rank_biased_overlap(list("abcd"), list("bacd"))
    swapped_bottom = rank_biased_overlap(list("abcd"), list("abdc"))
    assert swapped_top < swapped_bottom < 1.0
    assert 0 < rank_biased_overlap(list("abc"), list("abcdef")) < 1


def test_litellm_generation_with_mock_response(open_project) -> None:  # type: ignore[no-untyped-def]
    proj = open_project(
        config=ragtt.PipelineConfig(model="gpt-4o-mini"),
        generator=ragtt.LiteLLMGenerator("gpt-4o-mini", mock_response="Thirty days. [1]"),
    )
    proj.ingest_texts(DOCS)
    res = proj.query("refund window?")
    assert res.answer == "Thirty days. [1]" and res.model == "gpt-4o-mini"
    gen = proj.events.query(query_id=res.query_id, types="generation.executed")[0].payload
    assert gen["usage"]["total_tokens"] > 0


def test_unlogged_retrieval_plan_of_and_source_paths(project: ragtt.Project, tmp_path) -> None:  # type: ignore[no-untyped-def]
    project.ingest_texts(DOCS)
    res = project.query("refund days", mode="bm25", top_k=2, generate=False)
    v1 = project.version
    project.ingest_texts({"refunds.md": "Refunds: 14 days."})
    events_before = project.events.frame().height
    plan = project.plan_of(res.query_id)
    assert plan.mode == "bm25" and plan.top_k == 2
    chunks = project.retrieve_at("refund days", v1, plan)
    assert [c.chunk_id for c in chunks] == res.chunk_ids
    assert project.events.frame().height == events_before  # nothing logged
    file = tmp_path / "policy.md"
    file.write_text("policy text")
    project.ingest(file)
    assert project.source_path("policy.md") == file.resolve()
    assert project.source_path("refunds.md") is None
    with pytest.raises(ragtt.NotFoundError):
        project.source_path("nope.md")
    docs = project.events.frame(types="document.ingested")
    assert "policy.md" in docs["source"].to_list()


def test_snapshot_list_renders_as_one_escaped_table(project: ragtt.Project) -> None:
    project.ingest_texts(DOCS)
    project.snapshot("v1")
    html = project.snapshots()._repr_html_()
    assert html.count("<table") == 1 and "v1" in html
    assert isinstance(project.snapshots(), list)


def test_maintenance_compacts_without_losing_any_version(project: ragtt.Project) -> None:
    from ragtt.index.maintenance import MAINTAIN_EVERY

    logged = []
    for i in range(MAINTAIN_EVERY + 2):
        project.ingest_texts({f"d{i}.md": f"document {i} about refunds, topic {i % 5}"})
        if i in (0, 5, MAINTAIN_EVERY):
            logged.append(project.query("refunds topic", mode="bm25", top_k=3, generate=False))
        if i == 3:
            project.snapshot("early")
    operations = project.versions()["operation"].to_list()
    assert "maintenance" in operations
    assert project.events.last("index.optimized") is not None
    for res in logged:
        assert project.replay(res.query_id).matches_original
    assert project.replay_text("document 2", at="early", mode="bm25").chunks
    assert len(project.chunks(at=1 + operations.index("ingest"))) == 1  # the first ingest's version is intact
    explicit = project.optimize()
    assert explicit and project.version == explicit[-1]
    assert project.chunks().height == MAINTAIN_EVERY + 2


def test_small_ingests_are_indexed_once_enough_rows_wait(project: ragtt.Project) -> None:
    """Writes each under MAINTAIN_ROWS still get full-text indexed once their rows add up to it
    (BM25 scans unindexed rows one by one), not only every MAINTAIN_EVERY writes."""
    from ragtt.index.maintenance import MAINTAIN_ROWS

    batch = MAINTAIN_ROWS // 2 + 1
    maintained = []
    for n in range(3):
        project.ingest_texts({f"b{n}-{i}.md": f"note {i} of batch {n} on refunds" for i in range(batch)})
        maintained.append(project.events.frame(types=["index.optimized"]).height)
    assert maintained == [0, 1, 1]  # the second write brought the waiting rows past the bound
    res = project.query("refunds batch", mode="bm25", generate=False)
    assert res.chunks and project.replay(res.query_id).matches_original
