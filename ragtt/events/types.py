"""Every event type ragtt writes, and the shape of its payload, declared once.

Modules name event types through these constants, never as string literals, so a rename
or a new payload field is one edit here. A query's events carry its ``query_id``; a replay
writes the same types with the ``replay.`` prefix under its own id.
"""

from __future__ import annotations

from typing import Any, Final, NotRequired, TypedDict

__all__ = [
    "CONTEXT_ASSEMBLED",
    "DOCUMENT_INGESTED",
    "DOCUMENT_REMOVED",
    "EVALUATION_CELLS",
    "EVALUATION_DATASET",
    "FEDERATION_CREATED",
    "GENERATION_EXECUTED",
    "HISTORY_PRUNED",
    "INDEX_CREATED",
    "INDEX_FILES_RECORDED",
    "INDEX_OPTIMIZED",
    "INDEX_REEMBEDDED",
    "INDEX_VECTOR_BUILT",
    "INGEST_COMPLETED",
    "JUDGE_VERDICT",
    "ONCE_PER_QUERY",
    "PRUNABLE",
    "QUERY_COMPLETED",
    "QUERY_RECEIVED",
    "REGRESSION_COMPLETED",
    "REPLAY_PREFIX",
    "RETRIEVAL_EXECUTED",
    "SNAPSHOT_TAKEN",
    "DocumentIngested",
    "DocumentRemoved",
    "EvaluationCells",
    "EvaluationDataset",
    "FederatedRetrieval",
    "FederationCreated",
    "HistoryPruned",
    "IndexFilesRecorded",
    "IngestCompleted",
    "RetrievalExecuted",
    "SnapshotTaken",
    "VectorIndexBuilt",
]

DOCUMENT_INGESTED: Final = "document.ingested"
DOCUMENT_REMOVED: Final = "document.removed"
INGEST_COMPLETED: Final = "ingest.completed"
INDEX_CREATED: Final = "index.created"
INDEX_OPTIMIZED: Final = "index.optimized"
INDEX_REEMBEDDED: Final = "index.reembedded"
# The size and SHA-256 of every index file a write's versions added (ragtt/index/files.py)
INDEX_FILES_RECORDED: Final = "index.files_recorded"
INDEX_VECTOR_BUILT: Final = "index.vector_built"  # an ANN index on the vectors (ragtt.index.maintenance)
SNAPSHOT_TAKEN: Final = "index.snapshot_taken"
REGRESSION_COMPLETED: Final = "regression.completed"
HISTORY_PRUNED: Final = "history.pruned"
# One version's cells of an evaluation (ragtt.evaluation.run), written with their runs in one append.
EVALUATION_CELLS: Final = "evaluation.cells"
# A dataset's questions and references, once per content, written with the first version's cells of
# the first evaluation of it: what a matrix read back from the log explains regressions by. Its doc_id
# is the dataset's fingerprint (indexed: one dataset is found without reading the others).
EVALUATION_DATASET: Final = "evaluation.dataset"
# A federation's log (ragtt.federation) begins with this: its members and its fusion.
FEDERATION_CREATED: Final = "federation.created"
JUDGE_VERDICT: Final = "judge.verdict"  # an LLM judge's prompt, model and raw reply for one run

QUERY_RECEIVED: Final = "query.received"
RETRIEVAL_EXECUTED: Final = "retrieval.executed"
CONTEXT_ASSEMBLED: Final = "context.assembled"
GENERATION_EXECUTED: Final = "generation.executed"
QUERY_COMPLETED: Final = "query.completed"
REPLAY_PREFIX: Final = "replay."

# A run (query or replay) has at most one of each: a second one would let `load_run`
# replay "a different question" under an old id, so the log refuses it.
_RUN_TYPES = (QUERY_RECEIVED, RETRIEVAL_EXECUTED, CONTEXT_ASSEMBLED, GENERATION_EXECUTED, QUERY_COMPLETED)
ONCE_PER_QUERY: Final = frozenset(_RUN_TYPES) | frozenset(REPLAY_PREFIX + t for t in _RUN_TYPES)
# The only events retention may delete (a query's or a replay's run); the log's own guard
# refuses to delete any other type (document, index, snapshot and prune events stay).
PRUNABLE: Final = ONCE_PER_QUERY


class DocumentIngested(TypedDict):
    doc_id: str
    source: str
    path: str | None
    content_hash: str
    doc_key: str
    text_sha256: str
    status: str  # "added" | "updated"
    chunk_ids_added: list[str]
    chunk_ids_removed: list[str]
    chunk_count: int
    routes: list[dict[str, Any]]
    ingest_id: str


class DocumentRemoved(TypedDict, total=False):
    doc_id: str
    source: str
    chunk_ids_removed: list[str]
    reason: str
    ingest_id: str


class IngestCompleted(TypedDict):
    ingest_id: str
    documents: list[str]
    removed: list[str]
    chunks_added: int
    chunks_removed: int
    chunks_kept: int
    embeddings_computed: int
    embeddings_reused: int
    embedder_id: str
    config_id: str
    as_of: NotRequired[str]  # the time the ingested content is of (a release date), when the caller gave one


class SnapshotTaken(TypedDict):
    snapshot_id: str
    label: str
    doc_count: int
    chunk_count: int


class IndexFilesRecorded(TypedDict):
    table: str
    versions: list[int]  # the versions that added the files (empty: adopted at a first open)
    files: list[list[Any]]  # [path in the table, size, sha256]
    adopted: bool  # True: recorded when a project from before this record was first opened


class VectorIndexBuilt(TypedDict):
    name: str
    index_type: str  # "IVF_PQ"
    rows: int  # the rows it was trained on (later rows are searched exactly until maintenance adds them)
    num_partitions: int
    num_sub_vectors: int
    sample_rate: int  # k-means training vectors per partition


class RetrievalExecuted(TypedDict):
    index_version: int
    config_id: str
    plan: dict[str, Any]
    query: str
    chunks: list[dict[str, Any]]
    retrieve_ms: float


class HistoryPruned(TypedDict):
    policy: dict[str, Any]  # max_snapshots, max_age (seconds), keep
    cutoff: str | None  # runs that started before this UTC time were pruned (None: none were)
    queries_pruned: int
    query_ids: list[str]  # the runs whose events were deleted (a pruned id says so)
    events_pruned: int
    spans: list[list[Any]]  # [first seq, last seq, hash of the last] of each gap: verify chains across it
    snapshots_dropped: list[str]
    versions_deleted: list[int]
    versions_kept: list[int]


class EvaluationCell(TypedDict):
    question_id: str
    query_id: str  # the cell's run (replay-prefixed events)
    values: dict[str, float]  # metric -> value; a metric it could not compute is absent
    unparseable: dict[str, str]  # metric -> the judge's raw reply that did not parse


class EvaluationCells(TypedDict):
    """One version of an evaluation (``ragtt.evaluation.run``), appended with its runs."""

    evaluation_id: str  # a hash of the dataset, plan, metrics, judge and generator
    version: int
    metrics: list[str]
    cells: list[EvaluationCell]
    # each absent from cells logged before it was recorded:
    dataset: NotRequired[str]  # the dataset's name
    source: NotRequired[str | None]  # the file it was read from (None: an in-memory dataset)
    dataset_fingerprint: NotRequired[str]  # its ``evaluation.dataset`` event


class EvaluationDataset(TypedDict):
    """A dataset's rows as ``proj.evaluate`` read them (``EvalItem.to_dict()``), content-addressed:
    no name (the cells name the dataset each evaluation read them as)."""

    fingerprint: str  # ``EvalDataset.fingerprint``: a hash of the items
    items: list[dict[str, Any]]


class FederationCreated(TypedDict):
    """The first event of a federation's own log."""

    federation_id: str
    members: list[dict[str, str]]  # name, project_id, path (absolute), in fusion order
    fusion: dict[str, Any]  # method ("rrf"), k, weights {member: weight}


class FederatedRetrieval(TypedDict):
    """``retrieval.executed`` in a federation's log: each member's run and the fused list."""

    query: str
    top_k: int
    fusion: dict[str, Any]
    members: list[dict[str, Any]]  # name, project_id, index_version, plan (as searched), chunks, retrieve_ms
    fused: list[dict[str, Any]]  # chunk_id, member, source, text_hash, rank, score, contributions
    retrieve_ms: float
