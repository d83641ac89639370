"""The ``backup`` verb: a consistent copy of the project, taken while writers may run."""

from __future__ import annotations

from typing import Any

from ragtt.verbs import Arg, Verb, verb

__all__: list[str] = []


def _text(report: Any) -> str:
    return str(report.to_text())


verb(
    Verb(
        name="backup",
        help="copy the project to a new folder while writers may run; `ragtt verify --deep` proves the copy",
        args=(Arg(name="dest", type=str, help="the new folder to copy the project into", required=True),),
        call=lambda p, a: p.backup(a["dest"]),
        to_json=lambda report: report.to_dict(),
        to_text=_text,
        route=("POST", "/backup"),
    )
)
