"""The verb table: every ragtt verb declared once, for every front end.

A ``Verb`` (``model``) names the verb, says what it does, lists its ``Arg``s, calls the
``Project``, renders the result as JSON (``to_json``, whose type is ``result``) and as text.
Nothing here imports lancedb, polars, pydantic, FastAPI or IPython: a front end imports the
table cheaply and loads only what the verb it runs needs.

Modules: ``model`` (Arg, Verb, VERBS, verb), ``render`` (dumps, result_text, shared
renderers), ``results`` (the result types), ``args`` (shared args), ``cli`` (argparse),
``schema`` (pydantic models for REST and MCP), and one module per area that declares its
verbs: ``ingest``, ``query`` (query, replay), ``analysis`` (diff, lineage, drift, bisect,
compare), ``history`` (events, trace, snapshots, golden suites), ``admin`` (verify, prune,
traces).

Adding an area: a new ``ragtt/verbs/<area>.py`` does ``from ragtt.verbs import Arg, Verb,
verb`` and registers each verb with ``verb(Verb(name=..., help=..., args=(...), call=...,
to_json=..., to_text=..., result=..., route=...))``, keywords only; one import line at the
bottom of this file hooks it in (the model is defined above it, so no import is circular).
The import order is the order front ends list verbs in.

Front ends: REST (``ragtt.serve``) makes a route per ``route`` (POST: a pydantic body from
the args; GET: path and query parameters) with ``result`` as its response schema; MCP
(``ragtt.serve_mcp``) a tool per verb with input and output schemas; the CLI
(``ragtt.verbs.cli``) a sub-command per ``cli`` name; the ``%ragtt`` magics the same parser.
``tests/serve/test_front_ends.py`` checks that all four name the same arguments and that
every verb's results match their declared type.
"""

from __future__ import annotations

from ragtt.verbs.cli import cli_type
from ragtt.verbs.model import VERBS, Arg, At, Verb, VerbUsageError, verb
from ragtt.verbs.render import dumps, result_text

__all__ = ["VERBS", "Arg", "At", "Verb", "VerbUsageError", "cli_type", "dumps", "result_text", "verb"]

# The areas, after the model they import, in the order front ends list them (so not sorted):
# a new area is one line at the bottom.
# isort: off
from ragtt.verbs import ingest  # noqa: F401
from ragtt.verbs import query  # noqa: F401
from ragtt.verbs import analysis  # noqa: F401
from ragtt.verbs import history  # noqa: F401
from ragtt.verbs import admin  # noqa: F401
from ragtt.verbs import backup  # noqa: F401
from ragtt.verbs import evaluation  # noqa: F401
from ragtt.verbs import feeds  # noqa: F401
from ragtt.verbs import federation  # noqa: F401
from ragtt.verbs import restore  # noqa: F401
