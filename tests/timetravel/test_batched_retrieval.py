"""A matrix searches a version's questions together (``retrieve_many``); each query's hits
must be exactly those it retrieves alone (``retrieve``, a replay's batch of one), ties included."""

from __future__ import annotations

import pytest

import ragtt
from ragtt.index.retrieve import retrieve, retrieve_many

QUERIES = ["refund policy", "invoice export", "the", "???", "backup storage device", "refund refund refund"]


@pytest.mark.parametrize("mode", ["vector", "bm25", "hybrid"])
def test_a_batch_retrieves_what_each_query_retrieves_alone(project: ragtt.Project, mode: str) -> None:
    # many identical passages: scores tie across the top-k cut-off, and Lance breaks ties as it likes
    texts = {
        f"doc-{k:02d}.md": "# Policy\n\nThe refund policy covers invoice export and backup storage.\n"
        for k in range(30)
    }
    texts |= {f"other-{k}.md": f"# Other {k}\n\nA device {k} ships with storage of {k} GB.\n" for k in range(10)}
    project.ingest_texts(texts)
    ctx = project._ctx
    plan = ctx.plan(mode=mode, top_k=5)
    version = ctx.version
    view = ctx.table.view(version)
    plan = plan.searching(ctx.table.vector_index(version))
    vectors = [ctx.query_vector(plan, q) if mode != "bm25" else None for q in QUERIES]
    together = retrieve_many(view, plan, QUERIES, vectors)
    alone = [retrieve(view, plan, q, v) for q, v in zip(QUERIES, vectors, strict=True)]
    assert [[(h.chunk_id, h.score, h.scores) for h in hits] for hits in together] == [
        [(h.chunk_id, h.score, h.scores) for h in hits] for hits in alone
    ]
    assert any(len(hits) == 5 for hits in together)


def test_a_matrix_opens_each_version_once_on_one_connection(
    project: ragtt.Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each evaluated version's full-text handle is opened once (its tokenizer read on it, not
    on a second table), and every handle comes from one LanceDB connection."""
    import lancedb

    for k in range(4):
        project.ingest_texts({"refund-policy.md": f"# Refunds\n\nRefunds within {30 + k} days.\n"})
        project.snapshot(f"r{k}")
    opened: list[int] = []
    connects: list[str] = []
    table = project._ctx.table
    open_text, connect = table._text_view, lancedb.connect_async

    async def counting_open(version: int, mirror: object) -> object:
        opened.append(version)
        return await open_text(version, mirror)  # type: ignore[arg-type]

    async def counting_connect(uri: str, **kwargs: object) -> object:
        connects.append(uri)
        return await connect(uri, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(table, "_text_view", counting_open)
    monkeypatch.setattr(lancedb, "connect_async", counting_connect)
    table._views.clear()
    matrix = project.evaluate([{"question": "refund days", "must_contain": ["days"]}], mode="hybrid")
    assert len(matrix.columns) == 4
    assert sorted(opened) == sorted(c.version for c in matrix.columns)
    assert len(connects) == 1  # one connection for every version


@pytest.mark.parametrize(("mode", "reranker"), [("vector", "none"), ("bm25", "none"), ("hybrid", "lexical-overlap-v1")])
def test_each_hit_carries_its_versions_row_read_once_per_batch(
    project: ragtt.Project, monkeypatch: pytest.MonkeyPatch, mode: str, reranker: str
) -> None:
    """The searches return ids, scores and row addresses; the rows are read afterwards, once per
    batch, and each hit's row is that version's row of its chunk, also after re-ingests that
    deleted rows and moved others to new fragments (row addresses differ from version to version)."""
    import dataclasses

    from ragtt.index.table import CHUNK_COLUMNS

    for k in range(3):
        project.ingest_texts(
            {
                f"part-{p}.md": f"# Part {p}\n\nThe refund policy of part {p} keeps {p + k} days.\n\n"
                f"## Storage\n\nBackup storage {p} holds {k} invoices for export.\n"
                for p in range(k, k + 4)
            }
        )
    ctx = project._ctx
    for version in [v for v, _, op in ctx.log.versions.rows() if op == "ingest"]:
        view = ctx.table.view(version)
        plan = dataclasses.replace(ctx.plan(mode=mode, top_k=6), reranker=reranker)
        plan = plan.searching(ctx.table.vector_index(version))
        vectors = [ctx.query_vector(plan, q) if mode != "bm25" else None for q in QUERIES]
        reads: list[str] = []
        dataset = view.dataset
        real_to_table = dataset.to_table

        def counting(*args: object, _real=real_to_table, _reads=reads, **kwargs: object) -> object:  # type: ignore[no-untyped-def]
            if "_rowid IN" in str(kwargs.get("filter") or "") and "text" in list(kwargs.get("columns") or []):
                _reads.append(str(kwargs["filter"]))
            return _real(*args, **kwargs)

        monkeypatch.setattr(dataset, "to_table", counting)
        found = retrieve_many(view, plan, QUERIES, vectors)
        monkeypatch.undo()
        assert any(found)
        assert len(reads) == 1  # the rows in full, once (with a reranker: the pool it reads, before the cut)
        table = ctx.table.scan(version, list(CHUNK_COLUMNS)).to_pylist()
        rows = {r["chunk_id"]: r for r in table}
        for hits in found:
            for hit in hits:
                assert hit.row == rows[hit.chunk_id]
