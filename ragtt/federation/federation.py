"""``Federation``: several projects queried as one, with a log of its own.

The member projects stay independent (each keeps its folder, log and index; the federation
never writes to them). A federated query searches every member at its current version with
its own plan, fuses the lists (``ragtt.federation.fusion``) and logs ONE run recording each
member's project id, version and plan and the fusion settings, so its replay is each
member's replay plus the same fusion.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt.errors import ConfigError, NotAProjectError, NotFoundError, ProjectDamagedError
from ragtt.federation import runs
from ragtt.federation.fusion import check_fusion, check_weights
from ragtt.federation.results import FederatedResult, FederationDiff, FederationInfo, MemberDiff
from ragtt.federation.store import Member, Record, create_log, member_path, open_log
from ragtt.values import check_text

if TYPE_CHECKING:
    from ragtt.events.base import EventLog
    from ragtt.generate import Generator
    from ragtt.project import Project
    from ragtt.verify import VerifyReport

__all__ = ["Federation"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class Federation:
    """Member projects fused at query time. ``Federation.create(path, members={...})``, then
    ``Federation.open(path)``.

    >>> fed = ragtt.Federation.create("./fed", members={"docs": "./docs", "tickets": proj})  # doctest: +SKIP
    >>> res = fed.query("how do I rotate the secret key?")                                   # doctest: +SKIP
    >>> fed.replay(res.query_id).matches_original                                           # doctest: +SKIP
    True
    """

    def __init__(
        self,
        path: Path,
        log: EventLog,
        record: Record,
        members: dict[str, Project],
        owned: list[Project],
        generator: Generator | None,
    ) -> None:
        self.path = path
        self._log = log
        self._record = record
        self._members = members
        self._owned = owned
        self._generator = generator
        self._pool = ThreadPoolExecutor(max_workers=len(members), thread_name_prefix="ragtt-federation")

    # -- making and opening ---------------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: str | Path,
        members: Mapping[str, Project | str | Path],
        fusion: str = "rrf",
        weights: Mapping[str, float] | None = None,
        *,
        generator: Generator | None = None,
    ) -> Federation:
        """A new federation in ``path`` (a new or empty folder) over ``members``: name ->
        an open Project or a project folder. ``weights``: member name -> weight in the fusion
        (default 1 each). ``generator`` answers a query's ``generate`` (default: the offline
        extractive answer)."""
        from ragtt.index.retrieve import RRF_K
        from ragtt.project import Project

        if not isinstance(members, Mapping) or not members:
            raise ConfigError("a federation needs members: a dict of name -> Project or project folder")
        check_fusion(fusion)
        names = list(members)
        for name in names:
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                raise ConfigError(
                    f"a member name is 1 to 64 letters, digits, '.', '-' or '_' (starting with a letter or digit); "
                    f"got {name!r}"
                )
        chosen = check_weights(weights, names)
        opened: dict[str, Project] = {}
        owned: list[Project] = []
        try:
            for name, given in members.items():
                if isinstance(given, Project):
                    opened[name] = given
                elif isinstance(given, str | Path):
                    opened[name] = _open_member(name, given)
                    owned.append(opened[name])
                else:
                    raise ConfigError(
                        f"member {name!r} must be a ragtt.Project or a project folder; got {type(given).__name__}"
                    )
            seen: dict[str, str] = {}
            for name, proj in opened.items():
                if proj.project_id in seen:
                    raise ConfigError(f"members {seen[proj.project_id]!r} and {name!r} are the same project")
                seen[proj.project_id] = name
            import uuid

            record = Record(
                uuid.uuid4().hex,
                [Member(n, p.project_id, member_path(p.path)) for n, p in opened.items()],
                {"method": fusion, "k": RRF_K, "weights": chosen},
            )
            folder = Path(path).expanduser()
            log = create_log(folder, record)
        except BaseException:
            for proj in owned:
                proj.close()
            raise
        return cls(folder, log, record, opened, owned, _generator(generator))

    @classmethod
    def open(cls, path: str | Path, *, generator: Generator | None = None) -> Federation:
        """The federation in ``path``, its members opened from the folders it recorded."""
        folder = Path(path).expanduser()
        log, record = open_log(folder)
        owned: list[Project] = []
        try:
            for member in record.members:
                proj = _open_member(member.name, member.path)
                owned.append(proj)
                if proj.project_id != member.project_id:
                    raise ProjectDamagedError(
                        f"member {member.name!r}: {member.path} now holds project {proj.project_id}, not "
                        f"{member.project_id}, which this federation was made with; put that project back there"
                    )
        except BaseException:
            for proj in owned:
                proj.close()
            log.close()
            raise
        members = {m.name: p for m, p in zip(record.members, owned, strict=True)}
        return cls(folder, log, record, members, owned, _generator(generator))

    def close(self) -> None:
        """Close the log and the members this federation opened (not Projects it was given)."""
        self._pool.shutdown()
        for proj in self._owned:
            proj.close()
        self._owned = []
        self._log.close()

    def __enter__(self) -> Federation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        members = ", ".join(f"{n}=v{p.version}" for n, p in self._members.items())
        return f"Federation({str(self.path)!r}, {members}, rrf k={self._record.fusion['k']})"

    # -- what it is -----------------------------------------------------------------------

    @property
    def federation_id(self) -> str:
        return self._record.federation_id

    @property
    def members(self) -> dict[str, Project]:
        """Member name -> its open Project, in fusion order."""
        return dict(self._members)

    @property
    def fusion(self) -> dict[str, Any]:
        """The fusion settings: ``method`` ("rrf"), ``k`` and ``weights`` (member -> weight)."""
        return dict(self._record.fusion)

    def info(self) -> FederationInfo:
        """The members (with their current versions) and the fusion, as a result to show."""
        members = [
            {"name": m.name, "project_id": m.project_id, "path": m.path, "version": self._members[m.name].version}
            for m in self._record.members
        ]
        return FederationInfo(str(self.path), self.federation_id, members, self.fusion)

    @property
    def events(self) -> EventLog:
        """The federation's own event log (``fed.events.frame()``)."""
        return self._log

    # -- runs -----------------------------------------------------------------------------

    def query(self, text: str, *, top_k: int | None = None, generate: bool = True) -> FederatedResult:
        """Search every member at its current version with its own plan (``top_k`` for each,
        default each member's config), fuse, answer with ``generate``; one logged run."""
        check_text("the query", text)
        searches = [
            runs.Search(name, proj, proj.version, proj.plan(top_k=top_k)) for name, proj in self._members.items()
        ]
        return self._run(text, searches, self._record.fusion, top_k, generate)

    def replay(self, query_id: str, *, generate: bool = False) -> FederatedResult:
        """Re-run a logged federated run: each member at the version and with the plan it
        recorded, fused with the recorded settings; ``matches_original`` says if the fused list
        (ids, order, scores) is identical. ``"last"``: the newest live query."""
        from ragtt.index.retrieve import RetrievalPlan

        original = runs.load(self._log, query_id)
        searches = []
        for member in original.members:
            proj = self._member(member["name"], member["project_id"])
            plan = RetrievalPlan.from_dict(member["plan"])
            searches.append(runs.Search(member["name"], proj, int(member["index_version"]), plan, replaying=True))
        return self._run(
            original.query,
            searches,
            original.fusion,
            original.top_k,
            generate,
            extra={"original_query_id": original.query_id},
            original=original,
        )

    def replay_text(
        self, text: str, at: datetime | str, *, top_k: int | None = None, generate: bool = False
    ) -> FederatedResult:
        """``text`` asked of every member as it was at ``at``: a datetime (each member's own log
        says which of its versions was current then) or a snapshot label every member has."""
        check_text("the query", text)
        if isinstance(at, bool) or not isinstance(at, datetime | str) or (isinstance(at, str) and at.isdigit()):
            raise ConfigError(
                "at must be a datetime or a snapshot label: a version number means a different index in each "
                f"member; got {at!r}"
            )
        searches = []
        for name, proj in self._members.items():
            try:
                version = proj.resolve_version(at)
            except NotFoundError as exc:
                raise NotFoundError(f"member {name!r}: {exc}") from None
            searches.append(runs.Search(name, proj, version, proj.plan(top_k=top_k)))
        when = at.isoformat() if isinstance(at, datetime) else at
        return self._run(text, searches, self._record.fusion, top_k, generate, extra={"at": when})

    def run(self, query_id: str) -> runs.LoggedFederatedRun:
        """A logged federated query or replay as recorded: text, members (version, plan, chunks),
        fusion and fused list. ``"last"``: the newest live query."""
        return runs.load(self._log, query_id)

    def _run(
        self,
        text: str,
        searches: list[runs.Search],
        fusion: dict[str, Any],
        top_k: int | None,
        generate: bool,
        *,
        extra: dict[str, Any] | None = None,
        original: runs.LoggedFederatedRun | None = None,
    ) -> FederatedResult:
        generator = self._generator if generate else None
        prefix = "" if extra is None else "replay."
        return runs.run(
            self._log,
            self._pool,
            text,
            searches,
            fusion,
            top_k,
            generator,
            prefix=prefix,
            extra=extra,
            original=original,
        )

    def _member(self, name: str, project_id: str) -> Project:
        proj = self._members.get(name)
        if proj is None or proj.project_id != project_id:
            raise NotFoundError(f"the run searched member {name!r} (project {project_id}), which this federation lacks")
        return proj

    def diff(self, left_id: str, right_id: str) -> FederationDiff:
        """Per member, what entered, left and moved in its retrieval between two federated runs,
        with the member's lineage sentences (why, from the member's own log)."""
        from ragtt.index.retrieve import RetrievalPlan
        from ragtt.timetravel.run import LoggedRun

        left, right = runs.load(self._log, left_id), runs.load(self._log, right_id)
        theirs = {m["name"]: m for m in right.members}
        members = []
        for mine in left.members:
            other = theirs.get(mine["name"])
            if other is None:
                continue
            proj = self._member(mine["name"], mine["project_id"])
            sides = [
                LoggedRun(
                    run.query_id,
                    run.query,
                    int(m["index_version"]),
                    RetrievalPlan.from_dict(m["plan"]),
                    "",
                    m["chunks"],
                    None,
                    None,
                    None,
                )
                for run, m in ((left, mine), (right, other))
            ]
            before = {c["chunk_id"]: c["rank"] for c in mine["chunks"]}
            after = {c["chunk_id"]: c["rank"] for c in other["chunks"]}
            moved = [
                {"chunk_id": c, "rank_before": before[c], "rank_after": after[c]}
                for c in before
                if c in after and before[c] != after[c]
            ]
            members.append(
                MemberDiff(
                    mine["name"],
                    sides[0].index_version,
                    sides[1].index_version,
                    [c for c in after if c not in before],
                    [c for c in before if c not in after],
                    moved,
                    proj.lineage_of(sides[0], sides[1]).reasons(),
                )
            )
        return FederationDiff(left.query_id, right.query_id, left.query, right.query, members)

    # -- checks ---------------------------------------------------------------------------

    def verify(self) -> VerifyReport:
        """Re-walk the federation's log: SQLite's own check, the hash chain, the guards, and
        that every member is where the log says, with the project id it recorded."""
        from ragtt.events.probe import EVENT_LOG_GUARDS
        from ragtt.verify import VerifyReport

        log = self._log
        problems = [
            f"the federation log {log.location}: SQLite finds it damaged ({p})" for p in log.integrity_problems()
        ]
        checked, chain = log.verify_chain()
        problems += [p.replace("event log", "federation log", 1) for p in chain]
        missing = sorted(set(EVENT_LOG_GUARDS) - set(log.guards()))
        if missing:
            problems.append(f"federation log: history guards removed: {', '.join(missing)}")
        for member in self._record.members:
            try:
                with _open_member(member.name, member.path) as proj:
                    if proj.project_id != member.project_id:
                        problems.append(f"member {member.name!r}: {member.path} holds another project now")
            except (NotAProjectError, ProjectDamagedError) as exc:
                problems.append(str(exc).splitlines()[0])
        return VerifyReport(not problems, problems, checked)


def _open_member(name: str, path: str | Path) -> Project:
    from ragtt.project import Project

    try:
        return Project.open(path, progress=False, create=False)
    except NotAProjectError:
        raise NotAProjectError(
            f"member {name!r}: {path} is not a ragtt project (missing or moved); give the folder of an existing "
            "project, or put it back where the federation recorded it"
        ) from None
    except ProjectDamagedError as exc:
        raise ProjectDamagedError(f"member {name!r}: {exc}") from None


def _generator(generator: Generator | None) -> Generator:
    from ragtt.generate import ExtractiveGenerator

    return generator if generator is not None else ExtractiveGenerator()
