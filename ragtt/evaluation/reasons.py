"""Why a question got worse between two of its runs: the ``reason`` of ``HistoryMatrix.regressions()``.

By what the question is scored against:

* reference passages (``context_recall``, ``context_precision``): what happened to each
  passage the good run found and the bad one does not, matched as the metric matches them
  (``found_passages``): its source was removed, or re-ingested without it (at which version;
  an edit of it is quoted by the words that the good version's text held in its place and
  the re-ingested text lacks, a rewrite by its first words), or it still holds it and a
  deeper search at the bad version ranks it below the top-k (its rank there). For a passage
  gone from its source, the deeper search also says which other document holds it now, if
  one among its results does;
* qrels (``ndcg@k``, ``recall@k``, ``mrr``): the relevant ids that left the top k (with the
  lineage of their chunk) or fell in rank;
* answers (``contains``, ``answer_match``, the judge's metrics): the ``must_contain`` strings
  the answer lost, then the retrieval reason above.

When none of these says anything (or the matrix was read back from cells logged before the
log kept datasets: questions without references), the lineage sentence between the two runs:
which chunks left the top-k and why. Cost, for the regressions asked at once: their runs in
a few reads of the log, their chunks' texts in one scan per version, the sources' text at the
versions involved (each document shingled once), and one search ``_DEEP`` results deep per
question that lost a passage, the questions of one version searched together.
"""

from __future__ import annotations

import bisect
import json
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ragtt.errors import ProjectDamagedError, RagttError
from ragtt.evaluation.matrix import Fall
from ragtt.evaluation.metrics import ANSWER_METRICS, JUDGED_METRICS, found_passages, holds, judged_id
from ragtt.evaluation.sources import Shingled
from ragtt.events import types as ev
from ragtt.results import RetrievedChunk, version_label
from ragtt.timetravel.golden import DEFAULT_MATCH, GoldenPassage, containment, shingles
from ragtt.timetravel.passages import held_copy, lost_words, word_runs
from ragtt.values import first_line, shorten

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.evaluation.dataset import EvalItem
    from ragtt.events.store import Event
    from ragtt.index.retrieve import RetrievalPlan
    from ragtt.timetravel.lineage import LineageReport
    from ragtt.timetravel.run import LoggedRun

__all__ = ["Reasons"]

_DEEP = 50  # how many results the search for a passage that left the top-k looks through
_NAMED = 3  # passages, ids or runs of lost words one reason names; the rest are counted
_QUOTED_CHARS = 80  # a run of lost words longer than this is quoted cut, with an ellipsis
_VERSIONS_KEPT = 8  # versions whose source -> document keys are kept


@dataclass(frozen=True)
class _Run:
    """A logged run with its chunks' texts (read back from its version of the index)."""

    logged: LoggedRun
    chunks: list[RetrievedChunk]

    @property
    def version(self) -> int:
        return self.logged.index_version


class Reasons:
    """``reasons(falls)``: one sentence per fall (None where a run is no longer in the log). A
    fall whose reason cannot be worked out (a version pruned since, say) says why in its place:
    one fall never costs the others theirs, nor a matrix its ``to_dict()``."""

    def __init__(self, ctx: Context, items: Sequence[EvalItem]) -> None:
        self._ctx = ctx
        self._items = {i.id: i for i in items}
        self._shingled = Shingled(ctx)
        self._keys: OrderedDict[int, dict[str, str]] = OrderedDict()
        self._labels: dict[int, str] | None = None
        # for one call: (question, bad query id) -> the deeper search; (kind, low, high) -> the log's changes
        self._deeps: dict[tuple[str, str], list[RetrievedChunk] | RagttError] = {}
        self._changes: dict[tuple[str, int, int], list[Event]] = {}
        self._tables: dict[int, list[tuple[str, str, str]]] = {}  # version -> its chunks (id, source, text)

    def __call__(self, falls: Sequence[Fall]) -> list[str | None]:
        runs = self._runs([q for f in falls for q in (f.good_query_id, f.bad_query_id)])
        pairs = [(f, runs.get(f.good_query_id), runs.get(f.bad_query_id)) for f in falls]
        try:
            self._search_deep(
                [
                    (item, bad)
                    for f, good, bad in pairs
                    if good is not None and bad is not None and not _is_qrels(f.metric)
                    for item in [self._items.get(f.question_id)]
                    if item is not None and item.reference_contexts and self._lost_passages(item, good, bad)
                ]
            )
            return [None if g is None or b is None else self._explained(f, g, b) for f, g, b in pairs]
        finally:
            self._deeps.clear()
            self._changes.clear()
            self._tables.clear()

    def never_found(self, misses: Sequence[tuple[str, str]]) -> list[str | None]:
        """For each (question id, query id) of a question that never found its reference passages:
        where each passage its run missed is at the run's version (None: no run, or no passages).
        Its source and rank in a search ``_DEEP`` deep, or that no document holds it; and when
        the source holds it but no chunk holds it whole, the chunks it is split across."""
        runs = self._runs([q for _, q in misses])
        asked = [(self._items.get(question_id), runs.get(query_id)) for question_id, query_id in misses]
        try:
            self._search_deep([(i, r) for i, r in asked if i is not None and r is not None and i.reference_contexts])
            return [
                self._explained_miss(i, r) if i is not None and r is not None and i.reference_contexts else None
                for i, r in asked
            ]
        finally:
            self._deeps.clear()
            self._tables.clear()

    def _explained(self, fall: Fall, good: _Run, bad: _Run) -> str:
        try:
            return self._reason(fall, good, bad)
        except ProjectDamagedError:
            raise  # damage is never a footnote
        except RagttError as e:
            return f"(no reason: {first_line(e)})"

    def _explained_miss(self, item: EvalItem, run: _Run) -> str:
        try:
            return self._missed(item, run)
        except ProjectDamagedError:
            raise
        except RagttError as e:
            return f"(no reason: {first_line(e)})"

    def _search_deep(self, asked: list[tuple[EvalItem, _Run]]) -> None:
        """The deeper searches of the questions asked (each at its run's version and plan), the
        questions of one version and plan searched together (``execute_many``)."""
        from ragtt.timetravel.run import execute_many

        groups: dict[tuple[int, str], tuple[RetrievalPlan, dict[str, list[str]]]] = {}
        for item, run in asked:
            plan = replace(run.logged.plan, top_k=max(_DEEP, run.logged.plan.top_k))
            key = (run.version, json.dumps(plan.to_dict(), sort_keys=True))
            groups.setdefault(key, (plan, {}))[1].setdefault(item.question, []).append(run.logged.query_id)
        for (version, _), (plan, wanted) in groups.items():
            questions = list(wanted)
            n = len(questions)
            try:
                found = execute_many(self._ctx, questions, plan, version, generate=[False] * n, vectors=[None] * n)
            except ProjectDamagedError:
                raise
            except RagttError as e:  # these falls' reasons say so (_deep), the others keep theirs
                for question in questions:
                    for query_id in wanted[question]:
                        self._deeps[(question, query_id)] = e
                continue
            for question, deep in zip(questions, found, strict=True):
                for query_id in wanted[question]:
                    self._deeps[(question, query_id)] = deep.chunks

    def _runs(self, query_ids: list[str]) -> dict[str, _Run]:
        """The runs, their chunks' texts read in one scan per version."""
        from ragtt.timetravel.run import load_runs, logged_chunks

        logged = load_runs(self._ctx, query_ids)
        wanted: dict[int, set[str]] = {}
        for run in logged.values():
            wanted.setdefault(run.index_version, set()).update(c["chunk_id"] for c in run.chunks)
        texts = {v: self._ctx.table.texts(v, ids) for v, ids in wanted.items()}
        return {q: _Run(run, logged_chunks(run, texts[run.index_version])) for q, run in logged.items()}

    def _reason(self, fall: Fall, good: _Run, bad: _Run) -> str:
        item = self._items.get(fall.question_id)
        answer: list[str] = []
        retrieval: list[str] = []
        if item is not None:  # (cells logged before datasets were read back with their questions' texts only)
            if fall.metric in ANSWER_METRICS or fall.metric in JUDGED_METRICS:
                answer = _lost_strings(item, good, bad)
            if item.reference_contexts and not _is_qrels(fall.metric):
                retrieval = self._passages(item, good, bad)
            elif item.relevant:
                retrieval = self._qrels(item, fall.metric, good, bad)
        return "; ".join(answer + (retrieval or [self._lineage(good, bad)]))

    # -- reference passages ----------------------------------------------------------------------

    def _lost_passages(self, item: EvalItem, good: _Run, bad: _Run) -> list[tuple[GoldenPassage, str]]:
        """The reference passages ``good`` found (with the source it found each in) and ``bad`` does not."""
        then = found_passages(item, good.chunks, self._shingled.of(self._sources(good.version)))
        now = found_passages(item, bad.chunks, self._shingled.of(self._sources(bad.version)))
        return [
            (p, source)
            for p, source, found in zip(item.reference_contexts, then.found_in, now.found_in, strict=True)
            if source is not None and found is None
        ]

    def _passages(self, item: EvalItem, good: _Run, bad: _Run) -> list[str]:
        lost = self._lost_passages(item, good, bad)
        said = [self._lost(item, p, source, good, bad) for p, source in lost[:_NAMED]]
        if len(lost) > _NAMED:
            said.append(f"and {len(lost) - _NAMED} more reference passages")
        return said

    def _lost(self, item: EvalItem, passage: GoldenPassage, source: str, good: _Run, bad: _Run) -> str:
        """What happened to one reference passage ``good`` found in ``source`` and ``bad`` does not."""
        own = shingles(passage.text)
        head = f"the reference passage {_quote(passage.first_words)}"
        then = f"{source} at {self._label(good.version)}"
        doc_key = self._sources(bad.version).get(source)
        if doc_key is not None and containment(own, self._shingled.document(doc_key)) >= DEFAULT_MATCH:
            # still in its source: retrieval no longer ranks it in the top-k
            rank = self._rank(item.question, replace(passage, source=source), bad)
            k = bad.logged.plan.top_k
            deep = len(self._deep(item.question, bad))
            where = f"rank {rank}" if rank is not None else f"not among the first {deep} results either"
            return f"{head} is still in {source} at {self._label(bad.version)} but ranked below the top {k} ({where})"
        elsewhere = self._elsewhere(item.question, passage, bad)
        if doc_key is None:
            removed = self._changed(source, ev.DOCUMENT_REMOVED, good.version, bad.version, own)
            at = self._label(_version(removed, bad.version))
            return f"{head} was in {then}; {source} was removed at {at}; {elsewhere}"
        edited = self._changed(source, ev.DOCUMENT_INGESTED, good.version, bad.version, own)
        at = self._label(_version(edited, bad.version))
        # the words the good version's text held in the passage's place and the re-ingested one lacks
        # (not the reference's own words: it may have matched the good version only approximately)
        held = self._held(passage, self._sources(good.version).get(source))
        now = self._shingled.text(str(edited.payload["doc_key"]) if edited is not None else doc_key)
        lost = lost_words(held, now) if held is not None and now is not None else None
        if not lost or held is None:  # rewritten, not edited: no words of it stand out
            return f"{head} was in {then}; {source} was re-ingested at {at} and no longer holds it; {elsewhere}"
        one = len(lost) == 1 and len(lost[0].split()) == 1
        said = _listed([_quote(shorten(run, _QUOTED_CHARS)) for run in lost[:_NAMED]], len(lost) - _NAMED)
        gone = f"{source} was re-ingested at {at} without {'it' if one else 'them'}; {elsewhere}"
        if any(op != "equal" for op, _ in word_runs(passage.text, held)):
            return (
                f"{then} held the reference passage approximately, with the {'word' if one else 'words'} {said}; {gone}"
            )
        return (
            f"the reference passage's {'word' if one else 'words'} {said} {'was' if one else 'were'} in {then}; {gone}"
        )

    def _held(self, passage: GoldenPassage, doc_key: str | None) -> str | None:
        """What the document ``doc_key`` says in ``passage``'s place (``held_copy``); None: it holds no copy."""
        text = self._shingled.text(doc_key)
        return held_copy(passage.text, text) if text is not None else None

    def _changed(self, source: str, kind: str, low: int, high: int, own: frozenset[tuple[str, ...]]) -> Event | None:
        """The event in (low, high] that removed ``source`` (``kind`` DOCUMENT_REMOVED), or first
        re-ingested it without the passage (DOCUMENT_INGESTED); None: the log has no such event."""
        if (kind, low, high) not in self._changes:
            self._changes[(kind, low, high)] = self._ctx.log.query(types=[kind], version_range=(low, high))
        for event in self._changes[(kind, low, high)]:
            p = event.payload
            if p.get("source") != source:
                continue
            if (
                kind == ev.DOCUMENT_REMOVED
                or containment(own, self._shingled.document(p.get("doc_key"))) < DEFAULT_MATCH
            ):
                return event
        return None

    def _elsewhere(self, question: str, passage: GoldenPassage, bad: _Run) -> str:
        """Which document holds the passage at ``bad``'s version, among a deeper search's results."""
        deep = self._deep(question, bad)
        anywhere = replace(passage, chunk_id="", source="")
        rank = self._first_rank(anywhere, deep, bad.version)
        if rank is None:
            return f"no document among the first {len(deep)} results at {self._label(bad.version)} holds the passage"
        source = found_passages(_item(anywhere), deep[:rank], self._shingled.of(self._sources(bad.version)))
        return f"the passage is in {source.found_in[0]} at {self._label(bad.version)} (rank {rank})"

    def _rank(self, question: str, passage: GoldenPassage, bad: _Run) -> int | None:
        """The rank at which a deeper search at ``bad``'s version finds ``passage`` (None: not in it)."""
        return self._first_rank(passage, self._deep(question, bad), bad.version)

    def _first_rank(self, passage: GoldenPassage, chunks: list[RetrievedChunk], version: int) -> int | None:
        """The fewest of ``chunks`` that find ``passage`` (None: all of them do not). Found stays found
        as chunks are added (the matching pools a source's chunks), so a binary search finds it."""
        sources = self._shingled.of(self._sources(version))
        item = _item(passage)
        k = bisect.bisect_left(
            range(1, len(chunks) + 1),
            True,
            key=lambda r: found_passages(item, chunks[:r], sources).found_in[0] is not None,
        )
        return k + 1 if k < len(chunks) else None

    def _deep(self, question: str, bad: _Run) -> list[RetrievedChunk]:
        """``bad``'s search again, ``_DEEP`` results deep: the same plan at the same version."""
        found = self._deeps[(question, bad.logged.query_id)]
        if isinstance(found, RagttError):
            raise found
        return found

    # -- never found ------------------------------------------------------------------------------

    def _missed(self, item: EvalItem, run: _Run) -> str:
        found = found_passages(item, run.chunks, self._shingled.of(self._sources(run.version)))
        missed = [p for p, source in zip(item.reference_contexts, found.found_in, strict=True) if source is None]
        said = [self._where(item.question, p, run) for p in missed[:_NAMED]]
        if len(missed) > _NAMED:
            said.append(f"and {len(missed) - _NAMED} more reference passages")
        return "; ".join(said)

    def _where(self, question: str, passage: GoldenPassage, run: _Run) -> str:
        """Where a passage ``run`` missed is at its version: the source that holds it and its rank
        in the deeper search, and the chunks it is split across when no chunk holds it whole."""
        own = shingles(passage.text)
        at = self._label(run.version)
        head = f"the reference passage {_quote(passage.first_words)}"
        shares = sorted(
            (
                (containment(own, shingles(text)), chunk_id, source)
                for chunk_id, source, text in self._table(run.version)
                if not passage.source or source == passage.source
            ),
            reverse=True,
        )
        keys = self._sources(run.version)
        holders = [
            s
            for s in dict.fromkeys(source for share, _, source in shares if share > 0)
            if containment(own, self._shingled.document(keys.get(s))) >= DEFAULT_MATCH
        ]
        if not holders:
            closest = (
                f" (the closest chunk, in {shares[0][2]}, holds {shares[0][0]:.0%} of it)"
                if shares and shares[0][0]
                else ""
            )
            return f"{head} is in no document at {at}{closest}"
        source = holders[0]
        deep = self._deep(question, run)
        rank = self._first_rank(replace(passage, source=source), deep, run.version)
        ranked = f"rank {rank}" if rank is not None else f"not among the first {len(deep)} results"
        said = f"{head} is in {source} at {at} ({ranked}; the runs retrieve the top {run.logged.plan.top_k})"
        mine = [(share, chunk_id) for share, chunk_id, s in shares if s == source and share > 0]
        if mine and mine[0][0] < DEFAULT_MATCH:
            parts = _covering(
                own, [(c, t) for c, s, t in self._table(run.version) if s == source], [c for _, c in mine]
            )
            said += f"; no chunk holds it whole: it is split across chunks {_listed([c[:10] for c in parts], 0)}"
        return said

    def _table(self, version: int) -> list[tuple[str, str, str]]:
        """``version``'s chunks: (chunk id, source, text), in one scan per call."""
        if version not in self._tables:
            table = self._ctx.table.scan(version, ["chunk_id", "source", "text"])
            self._tables[version] = list(
                zip(*(table[c].to_pylist() for c in ("chunk_id", "source", "text")), strict=True)
            )
        return self._tables[version]

    # -- qrels -----------------------------------------------------------------------------------

    def _qrels(self, item: EvalItem, metric: str, good: _Run, bad: _Run) -> list[str]:
        """The relevant ids ``good`` ranked within the metric's cut-off that ``bad`` ranks lower or not at all."""
        base, _, cut = metric.partition("@")
        k = int(cut) if cut and base in ("ndcg", "recall") else good.logged.plan.top_k
        then, now = _ranked(good.chunks, item.relevant), _ranked(bad.chunks, item.relevant)
        statements = {}
        left = [(i, r) for i, r in then.items() if r <= k and item.relevant.get(i, 0.0) > 0 and now.get(i, k + 1) > k]
        if any(i not in now for i, _ in left):
            report = self._lineage_report(good, bad)
            statements = {e.chunk_id: e.statement(report.labels) for e in report.entries if e.change == "left"}
        said = []
        for judged, rank in left[:_NAMED]:
            grade = f"relevant {judged} (grade {item.relevant[judged]:g}, was #{rank})"
            chunk = next(c.chunk_id for c in good.chunks if judged_id(c, item.relevant) == judged)
            if judged in now:
                said.append(f"{grade} fell to #{now[judged]}, below the top {k}")
            else:
                said.append(f"{grade} left: {statements.get(chunk, f'it is not in the top {len(bad.chunks)}')}")
        if len(left) > _NAMED:
            said.append(f"and {len(left) - _NAMED} more relevant ids left the top {k}")
        if not left:
            fell = [
                (i, r, now[i]) for i, r in then.items() if item.relevant.get(i, 0.0) > 0 and i in now and now[i] > r
            ]
            said += [f"relevant {i} fell from #{a} to #{b}" for i, a, b in fell[:_NAMED]]
        return said

    # -- lineage ---------------------------------------------------------------------------------

    def _lineage_report(self, good: _Run, bad: _Run) -> LineageReport:
        from ragtt.timetravel.lineage import runs_lineage

        return runs_lineage(self._ctx, good.logged, bad.logged)

    def _lineage(self, good: _Run, bad: _Run) -> str:
        """The lineage sentence between the two runs: what left the top-k and why (a re-ingest
        that changed the passage, a removal), else what else moved."""
        report = self._lineage_report(good, bad)
        left = [e for e in report.entries if e.change == "left" and e.cause != "ranking"]
        chosen = left or [e for e in report.entries if e.cause != "ranking"] or report.entries
        if not chosen:
            return "the same chunks were retrieved at both versions; the evidence changed inside its source's text"
        return "; ".join(e.statement(report.labels) for e in chosen[:_NAMED])

    # -- versions --------------------------------------------------------------------------------

    def _sources(self, version: int) -> dict[str, str]:
        """source -> doc_key at ``version`` (the last ``_VERSIONS_KEPT`` versions kept)."""
        if version not in self._keys:
            self._keys[version] = self._shingled.keys(version)
            if len(self._keys) > _VERSIONS_KEPT:
                self._keys.popitem(last=False)
        self._keys.move_to_end(version)
        return self._keys[version]

    def _label(self, version: int) -> str:
        from ragtt.index.snapshots import version_labels

        if self._labels is None:
            self._labels = version_labels(self._ctx)
        return version_label(version, self._labels)


def _lost_strings(item: EvalItem, good: _Run, bad: _Run) -> list[str]:
    """ "the answer lost "pip install"": the ``must_contain`` strings the good answer held and the bad one lacks."""
    then, now = good.logged.answer, bad.logged.answer
    if then is None or now is None:
        return []
    lost = [s for s in item.must_contain if holds(then, s) and not holds(now, s)]
    return [f"the answer lost {', '.join(_quote(s) for s in lost)}"] if lost else []


def _covering(own: frozenset[tuple[str, ...]], chunks: list[tuple[str, str]], best_first: list[str]) -> list[str]:
    """The fewest of ``best_first`` (chunk ids, those holding most of ``own`` first) that hold
    ``DEFAULT_MATCH`` of its shingles together, in their order in ``chunks`` (all: they never do)."""
    texts = dict(chunks)
    pooled: set[tuple[str, ...]] = set()
    chosen = []
    for chunk_id in best_first:
        chosen.append(chunk_id)
        pooled |= shingles(texts[chunk_id])
        if containment(own, pooled) >= DEFAULT_MATCH:
            break
    order = {c: i for i, (c, _) in enumerate(chunks)}
    return sorted(chosen, key=order.__getitem__)


def _version(event: Event | None, otherwise: int) -> int:
    """The version ``event`` was logged at (``otherwise``: no event, or one at no version)."""
    return otherwise if event is None or event.index_version is None else event.index_version


def _is_qrels(metric: str) -> bool:
    return metric.partition("@")[0] in ("ndcg", "recall", "mrr")


def _ranked(chunks: Sequence[RetrievedChunk], relevant: dict[str, float]) -> dict[str, int]:
    """Judged id -> the rank of its best chunk (ranks count documents, as the qrels metrics do)."""
    out: dict[str, int] = {}
    for c in chunks:
        out.setdefault(judged_id(c, relevant), len(out) + 1)
    return out


def _item(passage: GoldenPassage) -> EvalItem:
    from ragtt.evaluation.dataset import EvalItem

    return EvalItem("", "", reference_contexts=[passage])


def _quote(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def _listed(said: list[str], more: int) -> str:
    """ "a", "a and b", "a, b and c", "a, b, c and 2 more" (``more`` left unnamed)."""
    if more > 0:
        said = [*said, f"{more} more"]
    return said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"
