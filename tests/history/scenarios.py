"""Write paths for the crash tests: a base project, and every write run against it.

The same functions run in a child that is killed mid-write, in the parent to re-run the
interrupted call, and on a fresh copy as the uninterrupted reference.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ragtt
from ragtt.index.embedders import HashEmbedder
from tests.backends import events_uri, index_args

QUESTIONS = ["How long is the refund window?", "Where is customer data stored?", "Who approves a refund?"]

DOCS_V1 = {
    "refunds.md": "# Refunds\n\nThe refund window is 30 days from delivery. A manager approves every refund "
    "above 100 euros.\n\n## Exceptions\n\nDigital goods are never refunded once downloaded.\n",
    "storage.md": "# Data storage\n\nCustomer data is stored in Frankfurt and replicated to Dublin. Backups are "
    "kept for 35 days and encrypted at rest.\n",
    "support.md": "# Support\n\nSupport answers within one business day. Urgent tickets page the on-call engineer.\n",
}
DOCS_V2 = {
    "refunds.md": DOCS_V1["refunds.md"].replace("30 days", "14 days"),
    "storage.md": DOCS_V1["storage.md"],
    "pricing.md": "# Pricing\n\nAnnual plans are billed once a year; monthly plans can be cancelled at any time.\n",
}


class OtherHash(HashEmbedder):
    """Same width as the base embedder, different vectors: a same-dimension re-embed."""

    def __init__(self) -> None:
        super().__init__(256)
        self.model_id = "test-other-hash-256"

    def embed(self, texts: list[str]) -> Any:
        return super().embed([t[::-1] for t in texts])


def write_docs(folder: Path, docs: dict[str, str]) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, text in docs.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def open_project(path: Path, **kwargs: Any) -> ragtt.Project:
    """Open with the embedder the project now records (a killed re-embed may have switched it),
    on the event-log backend the test runs against."""
    kwargs.setdefault("progress", False)
    kwargs.setdefault("events_uri", events_uri(path))
    for key, value in index_args(path).items():
        kwargs.setdefault(key, value)
    try:
        return ragtt.Project.open(path, **kwargs)
    except ragtt.ConfigError:
        return ragtt.Project.open(path, embedder=OtherHash(), **kwargs)


def build_base(root: Path) -> Path:
    """docs v1 ingested, three questions asked, a snapshot, a golden suite saved beside it."""
    docs = write_docs(root / "docs_v1", DOCS_V1)
    write_docs(root / "docs_v2", DOCS_V2)
    with ragtt.Project.open(
        root / "proj",
        embedder=HashEmbedder(),
        progress=False,
        events_uri=events_uri(root / "proj"),
        **index_args(root / "proj"),
    ) as proj:
        proj.ingest(docs)
        for q in QUESTIONS:
            proj.query(q, generate=False)
        proj.snapshot("base")
        proj.regression.capture(QUESTIONS, "golden").save(root / "golden.json")
    return root / "proj"


def _pdf() -> Path:
    from tests.conftest import corpus

    return corpus("pdfs", "docling__normal_4pages.pdf")


def _flask_release() -> Path:
    from tests.conftest import flask_releases

    return flask_releases()[-1]


def _ingest_with_auto_snapshot(p: ragtt.Project, root: Path) -> Any:
    p.config = p.config.replace(auto_snapshot_every=1)
    return p.ingest_texts({"faq.md": "# FAQ\n\nReturns are free for members.\n"})


def _prune_only(p: ragtt.Project, root: Path) -> Any:
    folder = write_docs(root / "docs_v1_pruned", {k: v for k, v in DOCS_V1.items() if k != "support.md"})
    return p.ingest(folder)


def _prune_keeping_the_first_query(p: ragtt.Project, root: Path) -> Any:
    """Drops the base snapshot and two of the three queries (and the versions only they used);
    the first query and its version stay, and must still replay after any kill."""
    first = p.events.query(types="query.received")[0].query_id
    return p.prune(max_snapshots=0, keep=[first])


def _ingest_building_the_ann_index(p: ragtt.Project, root: Path) -> Any:
    """A large ingest past a lowered ``ann_min_rows``: maintenance, then the index write."""
    p.config = p.config.replace(ann_min_rows=300)
    return p.ingest_texts(_big_texts())


def _big_texts() -> dict[str, str]:
    return {
        f"bulk-{i:03d}.md": f"# Bulk {i}\n\nParagraph {i} about topic {i % 7} and item {i * 13}.\n" for i in range(300)
    }


# name -> the call; each gets (project, the folder holding docs_v1/, docs_v2/, golden.json).
SCENARIOS: dict[str, Callable[[ragtt.Project, Path], Any]] = {
    "ingest_folder_update_and_prune": lambda p, root: p.ingest(root / "docs_v2"),
    "ingest_texts_new": lambda p, root: p.ingest_texts({"faq.md": "# FAQ\n\nShipping takes three days.\n"}),
    "ingest_large_with_maintenance": lambda p, root: p.ingest_texts(_big_texts()),
    "remove": lambda p, root: p.remove("support.md"),
    "snapshot": lambda p, root: p.snapshot("after"),
    "optimize": lambda p, root: p.optimize(),
    "reembed_new_dimension": lambda p, root: p.reembed(HashEmbedder(128)),
    "reembed_same_dimension": lambda p, root: p.reembed(OtherHash()),
    "regression_run": lambda p, root: p.regression.run(root / "golden.json"),
    "query": lambda p, root: p.query("Which city stores the backups?", generate=True),
    "replay": lambda p, root: p.replay(p.events.last("query.received").query_id),
    "ingest_pdf": lambda p, root: p.ingest(_pdf()),
    "ingest_flask_release_mirrors_the_folder": lambda p, root: p.ingest(_flask_release()),
    "ingest_prune_only": _prune_only,
    "ingest_with_auto_snapshot": _ingest_with_auto_snapshot,
    "ingest_building_the_ann_index": _ingest_building_the_ann_index,
    "ingest_with_a_failed_input": lambda p, root: p.ingest([root / "docs_v2" / "pricing.md", root / "missing.md"]),
    "regression_capture": lambda p, root: p.regression.capture(["What does pricing say?", "Backups?"], "g2"),
    "replay_text_at_snapshot": lambda p, root: p.replay_text("refund window", at="base"),
    "prune_keeping_the_first_query": _prune_keeping_the_first_query,
}


def state(proj: ragtt.Project) -> dict[str, Any]:
    """What must be equal between an interrupted-then-rerun call and an uninterrupted one."""
    chunks = proj.chunks()
    sources = sorted(set(chunks["source"]))
    return {
        "chunks": sorted(zip(chunks["chunk_id"], chunks["source"], chunks["text"], strict=True)),
        "documents": {s: proj.document(s).text for s in sources},
        "snapshots": sorted(s.label for s in proj.snapshots()),
        "embedder": proj.embedder.model_id,
        "ann_index": proj.events.last("index.vector_built") is not None,
    }
