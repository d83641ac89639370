"""The federation verbs: ``ragtt federation create|query|replay|diff``, several projects
queried as one (``ragtt.Federation``). Each names its federation's folder; none needs the
front end's own project, so each opens the federation, runs and closes it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ragtt.verbs import Arg, Verb, verb
from ragtt.verbs import results as r
from ragtt.verbs.args import QUERY_ID, TOP_K
from ragtt.verbs.render import as_dict, as_text

if TYPE_CHECKING:
    from ragtt.federation import Federation
    from ragtt.index.embedders import Embedder

FEDERATION = Arg("federation", str, "the federation's folder", required=True, flags=("--federation",), server_path=True)
GENERATE = Arg("generate", bool, "also generate an answer from the fused chunks", default=False, flags=("--generate",))


def _with(run: Callable[[Federation, dict[str, Any]], Any]) -> Callable[[Embedder | None, dict[str, Any]], Any]:
    """``run`` on the federation the args name, opened for the call (its members from their folders)."""

    def call(embedder: Embedder | None, a: dict[str, Any]) -> Any:
        from ragtt.federation import Federation

        with Federation.open(a["federation"]) as fed:
            return run(fed, a)

    return call


def _create(embedder: Embedder | None, a: dict[str, Any]) -> Any:
    from ragtt.federation import Federation

    with Federation.create(a["federation"], a["members"], a["fusion"], a["weights"] or None) as fed:
        return fed.info()


def _declare(name: str, help: str, args: tuple[Arg, ...], alone: Callable[..., Any], result: Any, **kw: Any) -> None:
    verb(
        Verb(
            name=name,
            help=help,
            args=(FEDERATION, *args),
            call=lambda p, a: alone(None, a),  # a server's own project is not a member: unused
            alone=alone,
            to_json=as_dict,
            to_text=as_text,
            result=result,
            **kw,
        )
    )


_declare(
    "federation_create",
    "make a federation of existing projects, fused at query time by weighted reciprocal-rank fusion",
    (
        Arg(
            "members",
            dict[str, str],
            'the member projects: {name: project folder}, e.g. {"docs": "./docs"}',
            required=True,
            flags=("--members",),
            server_path=True,
        ),
        Arg("fusion", str, "how member lists are fused", default="rrf", flags=("--fusion",), choices=("rrf",)),
        Arg(
            "weights",
            dict[str, float],
            'member weights in the fusion, e.g. {"docs": 2} (default 1)',
            default={},
            flags=("--weights",),
        ),
    ),
    _create,
    r.FederationInfo,
    route=("POST", "/federation/create"),
    cli_name="federation create",
)

_declare(
    "federation_query",
    "search every member at its current version, fuse, log one federated run",
    (
        Arg("text", str, "the question (several words are one text)", required=True, words=True),
        TOP_K,
        Arg("generate", bool, "also generate an answer from the fused chunks", default=True, flags=("--generate",)),
    ),
    _with(lambda fed, a: fed.query(a["text"], top_k=a["top_k"], generate=a["generate"])),
    r.FederatedResult,
    route=("POST", "/federation/query"),
    cli_name="federation query",
)

_declare(
    "federation_replay",
    "re-run a logged federated run: each member at its recorded version and plan, the same fusion",
    (QUERY_ID, GENERATE),
    _with(lambda fed, a: fed.replay(a["query_id"], generate=a["generate"])),
    r.FederatedResult,
    route=("POST", "/federation/replay"),
    cli_name="federation replay",
)

_declare(
    "federation_replay_as_of",
    "ask a text of every member as it was at a datetime or snapshot label",
    (
        Arg("text", str, "the question", required=True, flags=("--text",)),
        Arg(
            "at", str, "an ISO datetime, or a snapshot label every member has", required=True, flags=("--at", "--as-of")
        ),
        TOP_K,
        GENERATE,
    ),
    _with(lambda fed, a: fed.replay_text(a["text"], at=a["at"], top_k=a["top_k"], generate=a["generate"])),
    r.FederatedResult,
    route=("POST", "/federation/replay/as-of"),
    cli_name="federation replay",
)

_declare(
    "federation_diff",
    "per member, what entered, left and moved between two federated runs, and why",
    (
        Arg(
            "left",
            str,
            "federated query or replay id on the left ('last': the newest query)",
            required=True,
            flags=("--left",),
        ),
        Arg("right", str, "federated query or replay id on the right", required=True, flags=("--right",)),
    ),
    _with(lambda fed, a: fed.diff(a["left"], a["right"])),
    r.FederationDiff,
    route=("POST", "/federation/diff"),
    cli_name="federation diff",
)
