"""Diff two runs (queries or replays): what entered, left and moved in the top-k, and why it matters."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ragtt._html import BOX, STYLE, esc, runs_html, table
from ragtt.index.engines import engine_changes
from ragtt.index.retrieve import tokens
from ragtt.results import Result, version_label
from ragtt.timetravel.passages import DEFAULT_THRESHOLD, Aboutness, PassagePair, pair_passages, word_runs

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.timetravel.run import LoggedRun

__all__ = [
    "DiffChunk",
    "DiffReport",
    "KeptChunk",
    "aboutness",
    "diff_runs",
    "jaccard",
    "question_warning",
    "rank_biased_overlap",
]

RBO_P = 0.9
# A document longer than this is not read whole to place a chunk or find a subject's entry.
_DOCUMENT_CHARS = 2_000_000
# How much of a chunk a text view shows: the sentence that matches the query, up to this.
EXCERPT_CHARS = 240


@dataclass(frozen=True)
class DiffChunk(Result):
    """A chunk in only one of the two runs."""

    chunk_id: str
    source: str
    rank: int
    score: float
    text: str
    excerpt: str = ""  # the sentence of ``text`` that best matches the query (what a card shows)
    charspan: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class KeptChunk(Result):
    """A chunk in both runs, with how it moved."""

    chunk_id: str
    source: str
    rank_before: int
    rank_after: int
    score_before: float
    score_after: float
    score_delta: float
    text: str
    excerpt: str = ""


@dataclass(frozen=True)
class DiffReport(Result):
    """Then (``left``) vs now (``right``).

    ``added`` and ``removed`` list every chunk in only one of the two top-k lists;
    ``changed`` pairs those that carry the same passage, edited (``PassagePair``: left and
    right chunk, similarity, word runs). ``counts`` counts each chunk once: changed, added
    and removed with no counterpart, kept.
    """

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
    notes: list[str] = field(default_factory=list)
    changed: list[PassagePair] = field(default_factory=list)
    labels: dict[int, str] = field(default_factory=dict)  # version -> snapshot label
    # The two runs asked different questions: said here, in the text and in every front end.
    warning: str | None = None
    # Answers this diff generated for a run that had none: side ("left"/"right") -> the id
    # of the replay (with generation) that produced it, recorded in the event log.
    generated: dict[str, str] = field(default_factory=dict)
    answer_runs: list[tuple[str, str]] = field(default_factory=list)  # then -> now answer, word_runs

    @property
    def same_question(self) -> bool:
        return self.left_query == self.right_query

    @property
    def identical(self) -> bool:
        return not self.added and not self.removed and all(k.rank_before == k.rank_after for k in self.kept)

    @property
    def counts(self) -> dict[str, int]:
        """The headline: {"changed", "added", "removed", "kept"}, each chunk counted once."""
        return {
            "changed": len(self.changed),
            "added": len(self.added_unpaired),
            "removed": len(self.removed_unpaired),
            "kept": len(self.kept),
        }

    @property
    def added_unpaired(self) -> list[DiffChunk]:
        """Chunks only the right run has, with no counterpart on the left: really new."""
        paired = {p.right.chunk_id for p in self.changed}
        return [c for c in self.added if c.chunk_id not in paired]

    @property
    def removed_unpaired(self) -> list[DiffChunk]:
        """Chunks only the left run has, with no counterpart on the right: really gone."""
        paired = {p.left.chunk_id for p in self.changed}
        return [c for c in self.removed if c.chunk_id not in paired]

    def headline(self) -> str:
        n = self.counts
        return (
            f"{n['changed']} changed, {n['added']} added, {n['removed']} removed, {n['kept']} kept; "
            f"RBO {self.rbo:.3f}, Jaccard {self.jaccard:.3f}"
        )

    def to_text(self) -> str:
        label = partial(version_label, names=self.labels)
        lines = [
            f"diff {self.left_id} at {label(self.left_version)} -> {self.right_id} at {label(self.right_version)}",
            f"  query: {self.left_query!r}"
            + ("" if self.left_query == self.right_query else f" -> {self.right_query!r}"),
            *([f"  WARNING: {self.warning}"] if self.warning else []),
            f"  {self.headline()}",
            f"  answer then: {_answer(self.left_answer)}" + _generated_note(self.generated.get("left")),
            f"  answer now:  {_answer(self.right_answer)}" + _generated_note(self.generated.get("right")),
        ]
        if self.answer_runs and any(op != "equal" for op, _ in self.answer_runs):
            lines.append("  answer changes: " + "; ".join(_edits(self.answer_runs)))
        if self.answer_similarity is not None:
            lines.append(
                f"  answer similarity: cosine {self.answer_similarity['embedding_cosine']:.3f}, "
                f"token Jaccard {self.answer_similarity['token_jaccard']:.3f}"
            )
        if self.changed:
            lines.append("  changed passages ([-then-] {+now+}):")
        for p in self.changed:
            lines.append(
                f"  ~ #{p.left.rank}->#{p.right.rank} {p.source} {p.left.chunk_id[:10]}->"
                f"{p.right.chunk_id[:10]} similarity {p.similarity:.2f}"
            )
            lines += [f"      {edit}" for edit in _edits(p.runs)]
        for c in self.removed_unpaired:
            lines.append(
                f"  - #{c.rank} {c.source} {c.chunk_id[:10]} {c.score:.4f} {_preview(c)} (removed, no counterpart)"
            )
        for c in self.added_unpaired:
            lines.append(
                f"  + #{c.rank} {c.source} {c.chunk_id[:10]} {c.score:.4f} {_preview(c)} (added, no counterpart)"
            )
        for k in self.kept:
            lines.append(
                f"  = #{k.rank_before}->#{k.rank_after} {k.source} {k.chunk_id[:10]} {k.score_delta:+.4f} {_preview(k)}"
            )
        if self.latency_delta_ms is not None:
            lines.append(f"  latency delta: {self.latency_delta_ms:+.1f} ms")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        n = self.counts
        return f"DiffReport(~{n['changed']} +{n['added']} -{n['removed']} ={n['kept']}, RBO {self.rbo:.3f})"

    def __str__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        label = partial(version_label, names=self.labels)
        rows: list[tuple[Any, ...]] = []
        for p in self.changed:
            rows.append(
                (
                    "changed",
                    f"#{p.left.rank}",
                    f"#{p.right.rank}",
                    p.source,
                    f"similarity {p.similarity:.2f}",
                    f"<pre>{runs_html(p.runs)}</pre>",
                )
            )
        for c in self.removed_unpaired:
            rows.append(
                (
                    "<span class='rem'>removed</span>",
                    f"#{c.rank}",
                    "",
                    c.source,
                    f"{c.score:.4f}",
                    f"{esc(c.text, 200)} <span class='dim'>(no counterpart)</span>",
                )
            )
        for c in self.added_unpaired:
            rows.append(
                (
                    "<span class='add'>added</span>",
                    "",
                    f"#{c.rank}",
                    c.source,
                    f"{c.score:.4f}",
                    f"{esc(c.text, 200)} <span class='dim'>(no counterpart)</span>",
                )
            )
        for k in self.kept:
            rows.append(
                ("kept", f"#{k.rank_before}", f"#{k.rank_after}", k.source, f"{k.score_delta:+.4f}", esc(k.text, 200))
            )
        answers = table(
            ["answer then", "answer now"],
            [(f"<pre>{esc(_answer(self.left_answer))}</pre>", f"<pre>{esc(_answer(self.right_answer))}</pre>")],
            raw_columns=frozenset({0, 1}),
        )
        return (
            f"{STYLE}{BOX}<b>Diff</b> <code>{esc(self.left_id)}</code> at {esc(label(self.left_version))}"
            f" &rarr; <code>{esc(self.right_id)}</code> at {esc(label(self.right_version))}: "
            f"{esc(self.headline())}<br><i>{esc(self.left_query)}</i>"
            + (f"<div class='rem'>warning: {esc(self.warning)}</div>" if self.warning else "")
            + answers
            + table(["change", "then", "now", "source", "score / delta", "text"], rows, raw_columns=frozenset({0, 5}))
            + "</div>"
        )

    def to_html(self) -> str:
        """A self-contained HTML page (inline CSS, no scripts, every text escaped)."""
        return (
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>ragtt diff</title></head><body>"
            + self._repr_html_()
            + f"{BOX}<pre>{esc(self.to_text())}</pre></div></body></html>"
        )


def _answer(answer: str | None) -> str:
    return "(no answer generated)" if answer is None else " ".join(answer.split())


def _generated_note(replay_id: str | None) -> str:
    return f" (generated for this diff: replay {replay_id})" if replay_id else ""


def question_warning(left_query: str, right_query: str) -> str | None:
    """The warning for two runs of different questions (None for the same question)."""
    if left_query == right_query:
        return None
    return (
        f"the two runs asked different questions ({left_query!r} vs {right_query!r}): what changed "
        "may be the question, not the index"
    )


def _edits(runs: list[tuple[str, str]], context: int = 6) -> list[str]:
    """One line per edit, wdiff style, with a few words of context either side."""
    out = []
    for k, (op, _) in enumerate(runs):
        if op == "equal" or (k and runs[k - 1][0] != "equal"):
            continue  # an edit starts at a non-equal run that follows an equal run (or opens the text)
        j = k
        parts = []
        while j < len(runs) and runs[j][0] != "equal":
            text = " ".join(runs[j][1].split())
            parts.append(f"[-{text}-]" if runs[j][0] == "delete" else f"{{+{text}+}}")
            j += 1
        before = runs[k - 1][1].split()[-context:] if k else []
        after = runs[j][1].split()[:context] if j < len(runs) else []
        out.append(" ".join(["…" * bool(before), *before, *parts, *after, "…" * bool(after)]).strip())
    return out


def _preview(chunk: DiffChunk | KeptChunk) -> str:
    """The chunk's excerpt (the sentence that matches the query), else its opening, whole up
    to ``EXCERPT_CHARS``."""
    flat = " ".join((chunk.excerpt or chunk.text).split())
    return repr(flat[:EXCERPT_CHARS] + ("…" if len(flat) > EXCERPT_CHARS else ""))


def jaccard(a: list[str] | set[str], b: list[str] | set[str]) -> float:
    sa, sb = set(a), set(b)
    return 1.0 if not sa and not sb else len(sa & sb) / len(sa | sb)


def rank_biased_overlap(left: list[str], right: list[str], p: float = RBO_P) -> float:
    """Extrapolated rank-biased overlap (Webber et al. 2010, eq. 32) for lists of any length."""
    if not left and not right:
        return 1.0
    if not left or not right:
        return 0.0
    short, long_ = (left, right) if len(left) <= len(right) else (right, left)
    s, l_ = len(short), len(long_)
    seen_s: set[str] = set()
    seen_l: set[str] = set()
    overlap = 0
    x = [0] * (l_ + 1)
    for d in range(1, l_ + 1):
        item_l = long_[d - 1]
        if d <= s:
            item_s = short[d - 1]
            if item_s == item_l:
                overlap += 1
            else:
                overlap += (item_s in seen_l) + (item_l in seen_s)
            seen_s.add(item_s)
        elif item_l in seen_s:
            overlap += 1
        seen_l.add(item_l)
        x[d] = overlap
    total = sum(x[d] / d * p**d for d in range(1, l_ + 1))
    total += sum(x[s] * (d - s) / (s * d) * p**d for d in range(s + 1, l_ + 1))
    return float((1 - p) / p * total + ((x[l_] - x[s]) / l_ + x[s] / s) * p**l_)


def diff_runs(
    ctx: Context, left_id: str, right_id: str, *, threshold: float = DEFAULT_THRESHOLD, generate: bool = True
) -> DiffReport:
    """``threshold``: the passage similarity from which a removed and an added chunk of the
    same source are one "changed" passage (``ragtt.timetravel.passages.pair_passages``).
    Either id may be ``"last"``: the newest live run of the other one's question.

    ``generate``: a run with no answer (replays do not generate by default) gets one, from
    the project's generator (the extractive answer without a model), through a replay with
    generation that the event log records (an earlier such replay is reused)."""
    from ragtt.generate import excerpt
    from ragtt.index.snapshots import version_labels
    from ragtt.timetravel.run import load_run, resolve_pair

    left_id, right_id = resolve_pair(ctx, left_id, right_id)
    left, right = load_run(ctx, left_id), load_run(ctx, right_id)
    notes: list[str] = []
    generated: dict[str, str] = {}
    answers = {"left": left.answer, "right": right.answer}
    for side, run in (("left", left), ("right", right)):
        if generate and run.answer is None:
            found = _answer_of(ctx, run, notes)
            if found is not None:
                answers[side], generated[side] = found
    lmap = {c["chunk_id"]: c for c in left.chunks}
    rmap = {c["chunk_id"]: c for c in right.chunks}
    lrows = _rows(ctx, left.index_version, [cid for cid in lmap if cid not in rmap])
    rrows = _rows(ctx, right.index_version, list(rmap))
    texts = {cid: str(r["text"]) for cid, r in {**lrows, **rrows}.items()}

    def changed_chunk(c: dict[str, Any], query: str) -> DiffChunk:
        text = texts.get(c["chunk_id"], "")
        span = tuple(c.get("charspan") or (0, 0))
        return DiffChunk(
            c["chunk_id"], c["source"], c["rank"], c["score"], text, excerpt(query, text), (int(span[0]), int(span[1]))
        )

    removed = [changed_chunk(c, left.query) for c in left.chunks if c["chunk_id"] not in rmap]
    added = [changed_chunk(c, right.query) for c in right.chunks if c["chunk_id"] not in lmap]
    kept = [
        KeptChunk(
            cid,
            c["source"],
            c["rank"],
            rmap[cid]["rank"],
            c["score"],
            rmap[cid]["score"],
            rmap[cid]["score"] - c["score"],
            texts.get(cid, ""),
            excerpt(right.query, texts.get(cid, "")),
        )
        for cid, c in lmap.items()
        if cid in rmap
    ]
    settings = [k for k, v in left.plan.to_dict().items() if k != "engines" and right.plan.to_dict().get(k) != v]
    if settings:
        notes.append(f"the two runs used different retrieval settings: {', '.join(sorted(settings))}")
    engines = engine_changes(left.plan.engines, right.plan.engines or {})
    if engines:
        notes.append(f"the two runs ranked on different engines: {'; '.join(map(str, engines))}")
    left_ids, right_ids = [c["chunk_id"] for c in left.chunks], [c["chunk_id"] for c in right.chunks]
    latency = (
        right.latency_ms - left.latency_ms if left.latency_ms is not None and right.latency_ms is not None else None
    )
    return DiffReport(
        left_id=left_id,
        right_id=right_id,
        left_query=left.query,
        right_query=right.query,
        left_version=left.index_version,
        right_version=right.index_version,
        added=added,
        removed=removed,
        kept=kept,
        rbo=rank_biased_overlap(left_ids, right_ids),
        jaccard=jaccard(left_ids, right_ids),
        answer_similarity=_answer_similarity(ctx, answers["left"], answers["right"]),
        left_answer=answers["left"],
        right_answer=answers["right"],
        latency_delta_ms=latency,
        notes=notes,
        changed=pair_passages(removed, added, threshold, aboutness(ctx, right.query, {**lrows, **rrows})),
        labels=version_labels(ctx),
        warning=question_warning(left.query, right.query),
        generated=generated,
        answer_runs=word_runs(answers["left"], answers["right"])
        if answers["left"] is not None and answers["right"] is not None
        else [],
    )


def _answer_of(ctx: Context, run: LoggedRun, notes: list[str]) -> tuple[str, str] | None:
    """(answer, replay id) for a run logged without one: an earlier replay of it that
    generated and retrieved the same, else a new replay with generation (recorded)."""
    from ragtt.errors import RagttError
    from ragtt.events import types as ev
    from ragtt.timetravel.replay import replay
    from ragtt.timetravel.run import load_run

    model = ctx.generator.model_id
    for event in ctx.log.query(types=[ev.REPLAY_PREFIX + ev.QUERY_RECEIVED], newest_first=True):
        if event.payload.get("original_query_id") != run.query_id:
            continue
        earlier = load_run(ctx, str(event.query_id))
        if earlier.answer is not None and earlier.model == model and earlier.chunks == run.chunks:
            return earlier.answer, earlier.query_id
    try:
        result = replay(ctx, run.query_id, generate=True)
    except RagttError as exc:  # a diff still shows what it can: say why this answer is missing
        notes.append(f"no answer could be generated for {run.query_id}: {exc}")
        return None
    return (result.answer, result.query_id) if result.answer is not None else None


def _rows(ctx: Context, version: int, chunk_ids: list[str]) -> dict[str, dict[str, Any]]:
    """chunk_id -> its row at ``version`` (text, span, document key, vector), in one scan."""
    from ragtt.index.table import sql_string_list

    if not chunk_ids:
        return {}
    columns = ["chunk_id", "text", "doc_key", "char_start", "char_end", "vector"]
    rows = ctx.table.scan(version, columns, where=f"chunk_id IN ({sql_string_list(sorted(set(chunk_ids)))})")
    return {r["chunk_id"]: r for r in rows.to_pylist()}


def aboutness(ctx: Context, query: str, rows: dict[str, dict[str, Any]]) -> Aboutness:
    """What pairs passages beyond their words (``pair_passages``), for chunks given as table
    rows (chunk_id -> chunk_id, doc_key, char_start, char_end, vector): their vectors, their
    documents and places in them, and the query."""
    documents: dict[str, str | None] = {}
    for key in {r["doc_key"] for r in rows.values()}:
        found = ctx.log.documents.get(key)
        text = found.text if found is not None else None
        documents[key] = text if isinstance(text, str) and len(text) <= _DOCUMENT_CHARS else None
    spans = {}
    for cid, r in rows.items():
        text = documents.get(r["doc_key"])
        if text is not None:
            spans[cid] = (text, int(r["char_start"]), int(r["char_end"]))
    vectors = {cid: np.asarray(r["vector"], dtype=np.float32) for cid, r in rows.items() if r.get("vector") is not None}
    return Aboutness(query=query, vectors=vectors, spans=spans)


def _answer_similarity(ctx: Context, left: str | None, right: str | None) -> dict[str, float] | None:
    if left is None or right is None:
        return None
    vectors = ctx.cache.embed(ctx.embedder, [left, right])[0]
    norms = np.linalg.norm(vectors, axis=1)
    cosine = float(vectors[0] @ vectors[1] / (norms[0] * norms[1])) if norms.all() else 0.0
    return {"embedding_cosine": cosine, "token_jaccard": jaccard(tokens(left), tokens(right))}
