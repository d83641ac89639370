"""Query and replay: a live run at the latest version, and re-runs of the past."""

from __future__ import annotations

from ragtt.verbs import Arg, At, Verb, verb
from ragtt.verbs import results as r
from ragtt.verbs.args import MODE, QUERY_ID, TOP_K
from ragtt.verbs.render import as_dict, labelled_text, result_text

verb(
    Verb(
        name="query",
        help="retrieve (and answer) at the latest index version",
        args=(
            Arg("text", str, "the question (several words are one text)", required=True, words=True),
            TOP_K,
            MODE,
            Arg("generate", bool, "also generate an answer", default=True, flags=("--generate",)),
        ),
        call=lambda p, a: p.query(a["text"], top_k=a["top_k"], mode=a["mode"], generate=a["generate"]),
        to_json=as_dict,
        to_text=result_text,
        result=r.QueryResult,
        route=("POST", "/query"),
        to_text_in=labelled_text,
    )
)

verb(
    Verb(
        name="replay",
        help="re-run a logged query against the exact version and plan it ran with",
        args=(QUERY_ID, Arg("generate", bool, "also generate an answer", default=False, flags=("--generate",))),
        call=lambda p, a: p.replay(a["query_id"], generate=a["generate"]),
        to_json=as_dict,
        to_text=result_text,
        result=r.ReplayResult,
        route=("POST", "/replay"),
        to_text_in=labelled_text,
    )
)

verb(
    Verb(
        name="replay_as_of",
        help="run a text against the index as it was at a version, snapshot label or datetime",
        args=(
            Arg("text", str, "the question", required=True, flags=("--text",)),
            Arg("at", At, "version number, snapshot label, or ISO datetime", required=True, flags=("--at", "--as-of")),
            TOP_K,
            MODE,
            Arg("generate", bool, "also generate an answer", default=False, flags=("--generate",)),
        ),
        call=lambda p, a: p.replay_text(
            a["text"], at=a["at"], top_k=a["top_k"], mode=a["mode"], generate=a["generate"]
        ),
        to_json=as_dict,
        to_text=result_text,
        result=r.ReplayResult,
        route=("POST", "/replay/as-of"),
        cli_name="replay",
        to_text_in=labelled_text,
    )
)
