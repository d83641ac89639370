"""The ``backup`` verb: a consistent copy of the project, taken while writers may run."""

from __future__ import annotations

from ragtt.verbs import Arg, Verb, verb
from ragtt.verbs import results as r
from ragtt.verbs.render import as_dict, as_text

__all__: list[str] = []

verb(
    Verb(
        name="backup",
        help="copy the project to a new folder while writers may run; `ragtt verify --deep` proves the copy",
        args=(
            Arg(name="dest", type=str, help="the new folder to copy the project into", required=True, server_path=True),
        ),
        call=lambda p, a: p.backup(a["dest"]),
        to_json=as_dict,
        to_text=as_text,
        result=r.BackupReport,
        route=("POST", "/backup"),
    )
)
