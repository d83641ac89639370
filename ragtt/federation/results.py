"""What a federation returns: a fused run (live or replayed) and a diff of two runs, per member."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragtt._html import BOX, STYLE, esc, table
from ragtt.federation.fusion import Contribution
from ragtt.results import Result

__all__ = ["FederatedChunk", "FederatedResult", "FederationDiff", "FederationInfo", "MemberDiff", "MemberRun"]


@dataclass(frozen=True)
class FederatedChunk(Result):
    """One fused item: the best-ranked copy of a text (``member`` names whose chunk it is), its
    fused rank and score, and every member's copy merged into it (``contributions``)."""

    rank: int
    score: float
    member: str
    chunk_id: str
    source: str
    text: str
    text_hash: str
    contributions: list[Contribution] = field(default_factory=list)

    def __repr__(self) -> str:
        preview = self.text[:60].replace("\n", " ")
        also = f" +{len(self.contributions) - 1} merged" if len(self.contributions) > 1 else ""
        return f"FederatedChunk(#{self.rank} {self.score:.5f} [{self.member}] {self.source} {preview!r}{also})"


@dataclass(frozen=True)
class MemberRun(Result):
    """One member's part of a federated run: the version it searched, with which plan, what it found."""

    name: str
    project_id: str
    index_version: int
    plan: dict[str, Any]
    chunk_ids: list[str]
    retrieve_ms: float


@dataclass(frozen=True)
class FederatedResult(Result):
    """A federated query, or a replay of one (``original_query_id``, ``matches_original``), or a
    text asked of the past (``at``)."""

    query_id: str
    text: str
    top_k: int
    chunks: list[FederatedChunk]
    members: list[MemberRun]
    fusion: dict[str, Any]
    answer: str | None
    model: str | None
    latency_ms: float
    original_query_id: str | None = None
    matches_original: bool | None = None
    at: str | None = None

    def member(self, name: str) -> MemberRun:
        for run in self.members:
            if run.name == name:
                return run
        raise KeyError(f"no member {name!r} in this run; its members are {[m.name for m in self.members]}")

    def _head(self) -> str:
        kind = "federated replay" if self.original_query_id or self.at else "federated query"
        where = ", ".join(f"{m.name} v{m.index_version}" for m in self.members)
        return f"{kind} {self.query_id}: {self.text!r} over {where} (rrf k={self.fusion.get('k')})"

    def _verdict(self) -> str | None:
        if self.original_query_id:
            word = "matches" if self.matches_original else "DIFFERS FROM"
            return f"replay {word} original {self.original_query_id}"
        if self.at:
            return f"each member as it was at {self.at}"
        return None

    def to_text(self) -> str:
        lines = [self._head()]
        verdict = self._verdict()
        if verdict:
            lines.append(f"  {verdict}")
        for c in self.chunks:
            preview = c.text[:80].replace("\n", " ")
            lines.append(f"  #{c.rank} {c.score:.5f} [{c.member}] {c.source} {c.chunk_id[:10]} {preview}")
        if self.answer is not None:
            lines.append(f"answer ({self.model}): {self.answer}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        verdict = self._verdict()
        members = table(
            ["member", "version", "mode", "top k", "found", "ms"],
            [
                (
                    m.name,
                    m.index_version,
                    m.plan.get("mode"),
                    m.plan.get("top_k"),
                    len(m.chunk_ids),
                    f"{m.retrieve_ms:.1f}",
                )
                for m in self.members
            ],
        )
        fused = table(
            ["rank", "score", "member", "source", "chunk", "merged", "text"],
            [
                (
                    c.rank,
                    f"{c.score:.5f}",
                    c.member,
                    c.source,
                    c.chunk_id[:10],
                    ", ".join(f"{x.member} #{x.rank}" for x in c.contributions),
                    esc(c.text, 240),
                )
                for c in self.chunks
            ],
            raw_columns=frozenset({6}),
        )
        answer = (
            "" if self.answer is None else f"<div><b>answer</b> ({esc(self.model)})<pre>{esc(self.answer)}</pre></div>"
        )
        return (
            f"{STYLE}{BOX}<b>{esc(self._head())}</b>"
            + (f"<div>{esc(verdict)}</div>" if verdict else "")
            + members
            + fused
            + answer
            + "</div>"
        )


@dataclass(frozen=True)
class MemberDiff(Result):
    """What changed in one member's retrieval between two federated runs, and why (``reasons``:
    chunk id -> the member's lineage sentence)."""

    name: str
    left_version: int
    right_version: int
    entered: list[str]
    left: list[str]
    moved: list[dict[str, Any]]  # chunk_id, rank_before, rank_after
    reasons: dict[str, str]


@dataclass(frozen=True)
class FederationDiff(Result):
    left_id: str
    right_id: str
    left_query: str
    right_query: str
    members: list[MemberDiff]

    def to_text(self) -> str:
        lines = [f"federated diff {self.left_id} -> {self.right_id}"]
        if self.left_query != self.right_query:
            lines.append(f"  WARNING: different questions: {self.left_query!r} vs {self.right_query!r}")
        for m in self.members:
            lines.append(
                f"  {m.name} v{m.left_version} -> v{m.right_version}: {len(m.entered)} entered, "
                f"{len(m.left)} left, {len(m.moved)} moved"
            )
            lines += [f"    {m.reasons[c]}" for c in [*m.left, *m.entered] if c in m.reasons]
            lines += [
                f"    chunk {x['chunk_id'][:10]} moved #{x['rank_before']} -> #{x['rank_after']}" for x in m.moved
            ]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        rows = []
        for m in self.members:
            rows += [(m.name, "left", c[:10], m.reasons.get(c, "")) for c in m.left]
            rows += [(m.name, "entered", c[:10], m.reasons.get(c, "")) for c in m.entered]
            rows += [
                (m.name, "moved", x["chunk_id"][:10], f"#{x['rank_before']} -> #{x['rank_after']}") for x in m.moved
            ]
        heads = "".join(f"<li>{esc(m.name)}: v{m.left_version} &rarr; v{m.right_version}</li>" for m in self.members)
        return (
            f"{STYLE}{BOX}<b>Federated diff</b> <code>{esc(self.left_id)}</code> &rarr; "
            f"<code>{esc(self.right_id)}</code><ul>{heads}</ul>"
            + table(["member", "change", "chunk", "why"], rows)
            + "</div>"
        )


@dataclass(frozen=True)
class FederationInfo(Result):
    """What a federation is: its members (name, project id, folder, current version) and fusion."""

    path: str
    federation_id: str
    members: list[dict[str, Any]]
    fusion: dict[str, Any]

    def to_text(self) -> str:
        weights = self.fusion.get("weights", {})
        lines = [f"federation {self.federation_id} at {self.path} (rrf k={self.fusion.get('k')})"]
        lines += [
            f"  {m['name']}: v{m['version']} of project {m['project_id']} at {m['path']} "
            f"(weight {weights.get(m['name'])})"
            for m in self.members
        ]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        weights = self.fusion.get("weights", {})
        rows = [(m["name"], m["version"], m["project_id"], m["path"], weights.get(m["name"])) for m in self.members]
        return (
            f"{STYLE}{BOX}<b>Federation</b> <code>{esc(self.federation_id)}</code> at {esc(self.path)}"
            + table(["member", "version", "project", "folder", "weight"], rows)
            + "</div>"
        )
