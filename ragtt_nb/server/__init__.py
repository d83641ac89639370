"""ragtt inside Jupyter Server: every verb of ``ragtt.verbs`` under ``{base_url}ragtt/api/``,
behind Jupyter's own authentication, over the projects under the server's root.

``GET {base_url}ragtt/api/projects`` lists the folders holding ``ragtt.json`` (at most
``RagttExtension.depth`` levels down, at most ``RagttExtension.limit`` of them) and those named
in ``RagttExtension.projects``; ``{base_url}ragtt/api/projects/{path}/<route>`` runs a verb on
one, with the same bodies and JSON answers as ``ragtt serve``. ``RagttExtension.read_only``
refuses the verbs that write the project. ``pip install 'ragtt[notebook]'`` enables it with
``etc/jupyter/jupyter_server_config.d/ragtt.json``; the JupyterLab sidebar talks to it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from traitlets import Bool, Int, List, Unicode

__all__ = ["RagttExtension"]


class RagttExtension(ExtensionApp):
    """The server extension; configure as ``c.RagttExtension.read_only = True`` and so on."""

    name = "ragtt"
    load_other_extensions = True

    read_only = Bool(
        False,
        help="Refuse every verb that declares it writes (ragtt.verbs.Verb.writes): ingest, query, evaluate, backup...",
    ).tag(config=True)
    projects = List(
        Unicode(), help="Project folders, relative to the server's root, listed even beyond the search depth."
    ).tag(config=True)
    depth = Int(3, help="How many folder levels under the root the project list searches.").tag(config=True)
    limit = Int(200, help="At most this many projects are listed.").tag(config=True)
    files_root = Unicode(
        help="The folder path arguments (a backup's folder, files to ingest, a question set) must lie in; "
        "default: $RAGTT_FILES_ROOT, else the server's root, whose files Jupyter serves already."
    ).tag(config=True)
    embedder = Unicode(
        help="'hash' for the deterministic test embedder; '' for each project's own (default: $RAGTT_EMBEDDER)."
    ).tag(config=True)

    def initialize_settings(self) -> None:
        from ragtt.server_paths import FILES_ROOT_ENV
        from ragtt_nb.server.handlers import Backend

        embedder: Any = None
        if (self.embedder or os.environ.get("RAGTT_EMBEDDER", "")) == "hash":
            import ragtt

            embedder = ragtt.HashEmbedder()
        root = Path(self.serverapp.root_dir if self.serverapp is not None else os.getcwd()).expanduser()
        self.backend = Backend(
            root,
            files_root=self.files_root or os.environ.get(FILES_ROOT_ENV) or root,
            read_only=self.read_only,
            named=list(self.projects),
            depth=self.depth,
            limit=self.limit,
            embedder=embedder,
        )

    def initialize_handlers(self) -> None:
        from ragtt_nb.server.handlers import handlers

        self.handlers.extend(handlers(self.backend))  # ExtensionApp puts the base_url before each

    async def stop_extension(self) -> None:
        self.backend.close()


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    return [{"module": "ragtt_nb.server", "app": RagttExtension}]
