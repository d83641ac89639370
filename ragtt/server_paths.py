"""Path arguments from a remote front end stay inside one folder of the server.

A verb's ``Arg(server_path=...)`` is a file or folder on the machine that runs the verb. In
the CLI and the magics that is the user's own machine; over REST, the Jupyter server
extension and MCP it is the server's, named by whoever can reach it. ``confine_path`` turns
each such value into a real path inside ``root`` (the project's folder unless the server
was given ``files_root``, or ``$RAGTT_FILES_ROOT``): a relative path is taken from ``root``,
and a path whose real location (``..`` and symbolic links resolved) is outside it is refused
with a ``ConfigError``. Front ends call it before the verb runs; the verbs themselves never
see an unconfined path.

    RAGTT_FILES_ROOT=/srv/ragtt-files ragtt serve --project proj   # backups under /srv/ragtt-files
"""

from __future__ import annotations

import os
from pathlib import Path

from ragtt.errors import ConfigError

__all__ = ["FILES_ROOT_ENV", "confine_path", "files_root"]

FILES_ROOT_ENV = "RAGTT_FILES_ROOT"


def files_root(project: Path, given: str | Path | None = None) -> Path:
    """The folder remote callers' paths must stay in: ``given``, else ``$RAGTT_FILES_ROOT``,
    else the project's own folder."""
    chosen = given if given is not None else os.environ.get(FILES_ROOT_ENV) or project
    return Path(os.path.realpath(Path(chosen).expanduser()))


def confine_path(value: str, root: Path, what: str) -> str:
    """``value`` as a real path inside ``root`` (relative: from ``root``); else a ConfigError
    naming the argument ``what``."""
    if not isinstance(value, str) or not value or "\x00" in value:
        raise ConfigError(f"{what} must be a path inside {root}; got {value!r}")
    real = Path(os.path.realpath(root / Path(value).expanduser() if not os.path.isabs(value) else value))
    if real != root and root not in real.parents:
        raise ConfigError(
            f"{what} must be inside {root} on this server (a relative path is taken from there); got {value!r}, "
            f"which is {real}. Start the server with {FILES_ROOT_ENV} (or files_root=) set to the folder it may use"
        )
    return str(real)
