"""The result types of the verbs: the JSON each verb's ``to_json`` returns, as TypedDicts.

A verb names one with ``result=``: REST documents it as the route's response schema
(``/openapi.json``), MCP as the tool's output schema, and ``tests/serve/test_front_ends.py``
validates real calls against it. They describe the JSON, not the Python result objects:
datetimes are ISO strings, tuples are arrays, version-keyed maps have string keys. A key a
result gains later is allowed (the schemas do not forbid extra keys), but should be added here.

``typing_extensions.TypedDict``: pydantic reads ``typing.TypedDict`` only from Python 3.12.
Nothing here imports pydantic: ``ragtt.verbs.schema`` turns these into JSON schemas.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NotRequired

from typing_extensions import TypedDict

__all__ = [
    "BisectReport",
    "ConfigComparison",
    "DiffReport",
    "DriftReport",
    "EngineChange",
    "Event",
    "FederatedResult",
    "FederationDiff",
    "FederationInfo",
    "GoldenSuite",
    "HistoryMatrix",
    "IngestReport",
    "LineageReport",
    "OtlpTrace",
    "PruneReport",
    "QueryResult",
    "RegressionReport",
    "ReplayResult",
    "Snapshot",
    "SnapshotDiff",
    "VerifyReport",
]

Labels = dict[str, str]  # version (as JSON text) -> the snapshot label that names it


class IngestReport(TypedDict):
    """What one ingest did (``ragtt.IngestReport``); ``failed``, ``warnings``, ``skipped``: [source, why]."""

    documents_added: list[str]
    documents_updated: list[str]
    documents_unchanged: list[str]
    failed: list[tuple[str, str]]
    chunks_added: int
    chunks_removed: int
    chunks_kept: int
    embeddings_computed: int
    embeddings_reused: int
    index_version_before: int
    index_version_after: int
    elapsed_s: float
    documents_removed: list[str]
    warnings: list[tuple[str, str]]
    skipped: list[tuple[str, str]]


class Region(TypedDict):
    """A box on a PDF page, in PDF points (top-left origin of the unrotated page); pages from 1."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float


class RetrievedChunk(TypedDict):
    chunk_id: str
    doc_id: str
    source: str
    text: str
    rank: int
    score: float
    scores: dict[str, float]  # the components: vector, bm25, fusion, rerank
    charspan: tuple[int, int]  # [start, end) into the document's Markdown
    regions: list[Region]


class QueryResult(TypedDict):
    """A live run (``ragtt.QueryResult``)."""

    query_id: str
    text: str
    index_version: int
    config_id: str
    chunks: list[RetrievedChunk]
    answer: str | None
    model: str | None
    latency_ms: float


class EngineChange(TypedDict):
    """A component that ranked the original run and is not today's (``ragtt.EngineChange``):
    "lancedb", "lance", "embedder.runtime", "fts_tokenizer.stem"... with both values."""

    component: str
    role: str
    recorded: Any
    today: Any


class ReplayResult(QueryResult):
    """A replay (``ragtt.ReplayResult``): a run, whether it matches the run it replays, and
    which of the engines that ranked that run differ today (``engines_recorded``: False for a
    run logged before ragtt recorded them). A text run as of a version has no original: both
    ``original_query_id`` and ``matches_original`` are null."""

    original_query_id: str | None
    matches_original: bool | None
    engine_changes: list[EngineChange]
    engines_recorded: bool


class DiffChunk(TypedDict):
    chunk_id: str
    source: str
    rank: int
    score: float
    text: str
    excerpt: str  # the sentence of text that best matches the query (what a card shows)
    charspan: tuple[int, int]


class KeptChunk(TypedDict):
    chunk_id: str
    source: str
    rank_before: int
    rank_after: int
    score_before: float
    score_after: float
    score_delta: float
    text: str
    excerpt: str


class PassagePair(TypedDict):
    """An edited passage: the removed and the added chunk, and the word runs between them
    (over ``left_text`` and ``right_text``: the chunks', or the ``subject``'s whole entry in
    each document); ``signals``: bigrams, rare_terms, query_terms, embedding, position, about."""

    left: DiffChunk
    right: DiffChunk
    similarity: float
    runs: list[tuple[str, str]]
    left_text: str
    right_text: str
    subject: str | None
    signals: dict[str, float]


class DiffReport(TypedDict):
    left_id: str
    right_id: str
    left_query: str
    right_query: str
    left_version: int
    right_version: int
    added: list[DiffChunk]
    removed: list[DiffChunk]
    kept: list[KeptChunk]
    rbo: float
    jaccard: float
    answer_similarity: dict[str, float] | None
    left_answer: str | None
    right_answer: str | None
    latency_delta_ms: float | None
    notes: list[str]
    changed: list[PassagePair]
    labels: Labels
    warning: str | None  # the two runs asked different questions
    generated: dict[str, str]  # "left"/"right" -> the replay that generated a missing answer
    answer_runs: list[tuple[str, str]]  # then -> now answer, word runs


class LineageEntry(TypedDict):
    chunk_id: str
    source: str
    change: str  # entered | left
    cause: str  # added | reingested | removed | ranking
    version: int | None
    event_id: str | None
    at: datetime | None
    rank_before: int | None
    rank_after: int | None
    top_k: int | None
    passage: str | None
    counterpart_rank: int | None  # passage "changed": its edited counterpart's rank in the other run


class LineageReport(TypedDict):
    left_id: str
    right_id: str
    left_version: int
    right_version: int
    entries: list[LineageEntry]
    labels: Labels
    left_query: str
    right_query: str
    warning: str | None  # the two runs asked different questions


class SourceChange(TypedDict):
    source: str
    status: str  # added | removed | changed | unchanged
    chunks_added: list[str]
    chunks_removed: list[str]
    chunks_kept: int


class SnapshotDiff(TypedDict):
    left_version: int
    right_version: int
    sources: list[SourceChange]
    labels: Labels


class SourceDrift(TypedDict):
    source: str
    status: str  # common | added | removed
    centroid_cosine: float | None
    chunks_left: int
    chunks_right: int
    chunks_common: int
    chunk_cosine_mean: float | None
    chunk_cosine_min: float | None
    drifted: bool | None


class DriftReport(TypedDict):
    left_version: int
    right_version: int
    embedder_left: str
    embedder_right: str
    embedder_changed: bool
    comparable: bool
    threshold: float
    sources: list[SourceDrift]
    chunk_cosines: dict[str, float]  # chunk id -> cosine between its two embeddings
    labels: Labels


class BisectReport(TypedDict):
    query: str
    predicate: str
    first_version: int | None
    start_value: Any  # the predicate's value at the first version searched
    end_value: Any
    replays_used: int
    steps: list[tuple[int, Any]]  # [version, the predicate's value there]
    versions_searched: int
    warnings: list[str]
    labels: Labels
    entered: int | None  # source: / chunk: predicates: where it last entered the index


class QueryComparison(TypedDict):
    text: str
    chunk_ids_a: list[str]
    chunk_ids_b: list[str]
    overlap_at_k: float
    rank_correlation: float
    rbo: float


class ConfigComparison(TypedDict):
    config_a: dict[str, Any]  # PipelineConfig fields
    config_b: dict[str, Any]
    queries: list[QueryComparison]
    embeddings_computed: int
    embeddings_reused: int


class Event(TypedDict):
    """One row of the event log (``proj.events.frame()``); ``payload`` is JSON text."""

    seq: int
    event_id: str
    ts: datetime
    type: str
    query_id: str | None
    index_version: int | None
    doc_id: str | None
    payload: str
    source: NotRequired[str | None]


class Snapshot(TypedDict):
    snapshot_id: str
    label: str
    index_version: int
    created_at: datetime
    doc_count: int
    chunk_count: int
    as_of: datetime | None  # the date its version's ingest was dated with (--as-of-date)


class OtlpSpan(TypedDict):
    traceId: str
    spanId: str
    parentSpanId: NotRequired[str]
    name: str
    kind: int
    startTimeUnixNano: str
    endTimeUnixNano: str
    attributes: list[dict[str, Any]]
    status: dict[str, Any]


class OtlpScopeSpans(TypedDict):
    scope: dict[str, Any]
    spans: list[OtlpSpan]


class OtlpResourceSpans(TypedDict):
    resource: dict[str, Any]
    scopeSpans: list[OtlpScopeSpans]


class OtlpTrace(TypedDict):
    """A run's trace as OTLP/JSON (OpenInference spans)."""

    resourceSpans: list[OtlpResourceSpans]


class GoldenPassage(TypedDict):
    chunk_id: str
    source: str
    text_hash: str
    text: str


class GoldenQuery(TypedDict):
    text: str
    expected_sources: list[str]
    expected_chunk_ids: list[str]
    expected_passages: list[GoldenPassage]
    reference: str | None  # a reference answer (ragtt eval scores answers against it)
    must_contain: list[str]  # strings the answer must hold


class GoldenSuite(TypedDict):
    name: str
    created_at: str
    index_version: int
    config_id: str
    plan: dict[str, Any]  # the RetrievalPlan the suite was captured with
    queries: list[GoldenQuery]


class PassageRef(TypedDict):
    chunk_id: str
    source: str
    first_words: str
    similarity: float
    in_source: float | None


class QueryOutcome(TypedDict):
    text: str
    status: str  # pass | fail | error
    source_recall: float | None
    chunk_recall: float | None
    missing_sources: list[str]
    query_id: str | None
    error: str | None
    passage_recall: float | None
    gated_on: str  # passages | chunks | sources
    missing_passages: list[PassageRef]
    replaced_by: list[PassageRef]


class RegressionReport(TypedDict):
    suite: str
    index_version: int
    threshold: float
    outcomes: list[QueryOutcome]
    match: float | str
    exit_code: int  # 0 pass, 1 drift, 2 error


class PruneReport(TypedDict):
    prune_id: str | None
    cutoff: datetime | None
    queries_pruned: int
    events_pruned: int
    snapshots_dropped: list[str]
    versions_deleted: list[int]
    versions_kept: list[int]
    policy: dict[str, Any]


class VerifyReport(TypedDict):
    ok: bool
    problems: list[str]
    events_checked: int
    versions_checked: int
    documents_checked: int
    files_checked: int  # index files of the retained versions
    files_adopted: int  # of which recorded at a first open: "adopted, not proven"
    deep: bool


class BackupReport(TypedDict):
    dest: str
    index_version: int
    files_copied: int
    bytes_copied: int
    databases: list[str]
    writes_dropped: int


class RestoreReport(TypedDict):
    dest: str
    events: str
    index: str
    index_version: int
    events_copied: int
    files_copied: int
    bytes_copied: int
    resumed: bool


class MatrixQuestion(TypedDict):
    id: str
    question: str


class MatrixColumn(TypedDict):
    version: int
    label: str | None  # the snapshot label naming the version
    at: str  # when the version was committed, ISO 8601 UTC


class Unparseable(TypedDict):
    question_id: str
    version: int
    metric: str
    raw: str  # the judge's reply that did not parse


class Gate(TypedDict):
    metric: str
    baseline_version: int
    baseline_label: str | None
    version: int
    label: str | None
    threshold: float  # the gate's threshold: how far a question may fall below the baseline
    fallen: list[dict[str, Any]]  # question_id, question, baseline, now, query_id


class Regression(TypedDict):
    """A question whose ``metric`` fell below ``threshold`` after being at or above it, and why."""

    question_id: str
    question: str
    metric: str
    threshold: float  # the got-worse threshold (0.5): the level it fell below, not the gate's
    last_good_version: int
    last_good_label: str | None
    last_good_value: float
    first_bad_version: int
    first_bad_label: str | None
    first_bad_value: float
    last_good_query_id: str | None
    first_bad_query_id: str | None
    reason: str | None  # None: a run is no longer in the log


class NeverFound(TypedDict):
    """A question whose context_recall is 0 at every evaluated version, and where its reference
    passages are at the last of them."""

    question_id: str
    question: str
    metric: str
    version: int
    label: str | None
    query_id: str | None
    reason: str | None  # None: its run is no longer in the log


class HistoryMatrix(TypedDict):
    """A question set at each evaluated version (``ragtt.HistoryMatrix``): ``cells[metric]`` and
    ``query_ids`` are [question][column], None where absent."""

    dataset: str
    evaluation_id: str
    plan: dict[str, Any]
    metrics: list[str]
    questions: list[MatrixQuestion]
    columns: list[MatrixColumn]
    cells: dict[str, list[list[float | None]]]
    query_ids: list[list[str | None]]
    unparseable: list[Unparseable]
    computed_versions: int  # versions searched by this call; the rest were read back from the log
    reused_versions: int
    gate: Gate | None
    # the gate's metric's regressions at 0.5 (else context_recall's, else the first metric's), with reasons
    regressions: list[Regression]
    # the questions at context_recall 0 at every evaluated version, each with where its passages are
    never_found: list[NeverFound]


class FusionSettings(TypedDict):
    """How a federation fuses: ``method`` "rrf", ``k`` (60) and each member's weight."""

    method: str
    k: int
    weights: dict[str, float]


class FederatedContribution(TypedDict):
    """One member's chunk merged into a fused item, with its rank and score in that member's list."""

    member: str
    chunk_id: str
    source: str
    rank: int
    score: float


class FederatedChunk(TypedDict):
    rank: int
    score: float  # the fused score: sum over members of weight / (k + rank)
    member: str  # whose chunk it is (the best-ranked copy of its text)
    chunk_id: str
    source: str
    text: str
    text_hash: str
    contributions: list[FederatedContribution]


class MemberRun(TypedDict):
    """A member's part of a federated run: the version and plan it searched, the chunk ids it found."""

    name: str
    project_id: str
    index_version: int
    plan: dict[str, Any]
    chunk_ids: list[str]
    retrieve_ms: float


class FederatedResult(TypedDict):
    """A federated query or replay (``ragtt.FederatedResult``)."""

    query_id: str
    text: str
    top_k: int
    chunks: list[FederatedChunk]
    members: list[MemberRun]
    fusion: FusionSettings
    answer: str | None
    model: str | None
    latency_ms: float
    original_query_id: str | None
    matches_original: bool | None
    at: str | None


class MemberMove(TypedDict):
    chunk_id: str
    rank_before: int
    rank_after: int


class MemberDiff(TypedDict):
    """One member's changes between two federated runs; ``reasons``: chunk id -> lineage sentence."""

    name: str
    left_version: int
    right_version: int
    entered: list[str]
    left: list[str]
    moved: list[MemberMove]
    reasons: dict[str, str]


class FederationDiff(TypedDict):
    left_id: str
    right_id: str
    left_query: str
    right_query: str
    members: list[MemberDiff]


class FederationMember(TypedDict):
    name: str
    project_id: str
    path: str
    version: int


class FederationInfo(TypedDict):
    path: str
    federation_id: str
    members: list[FederationMember]
    fusion: FusionSettings
