"""The ``restore`` verb: a backup put back into a new Postgres log and/or object-store index."""

from __future__ import annotations

from ragtt.verbs import Arg, Verb, verb
from ragtt.verbs import results as r
from ragtt.verbs.render import as_dict, as_text

__all__: list[str] = []

verb(
    Verb(
        name="restore",
        help="restore this project (a backup) as a new project in an empty folder, its log and index where "
        "--to-events-uri / --to-index-uri say; each index file is checked against its recorded hash",
        args=(
            Arg(
                name="dest",
                type=str,
                help="the new, empty folder of the restored project (its marker; its log and index without URIs)",
                required=True,
                server_path=True,
            ),
            Arg(
                name="to_events_uri",
                type=str,
                help="an empty Postgres database for the restored log (postgresql://...; default: DEST/events.db)",
                flags=("--to-events-uri",),
            ),
            Arg(
                name="to_index_uri",
                type=str,
                help="an empty object-store prefix for the restored index (s3://bucket/prefix; credentials from "
                "the AWS_* environment; default: DEST/lancedb)",
                flags=("--to-index-uri",),
            ),
        ),
        call=lambda p, a: p.restore(a["dest"], to_events_uri=a["to_events_uri"], to_index_uri=a["to_index_uri"]),
        to_json=as_dict,
        to_text=as_text,
        result=r.RestoreReport,
        route=("POST", "/restore"),
    )
)
