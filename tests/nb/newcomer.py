"""The newcomer's notebook (README "In Jupyter" on 6 of Flask's releases, a snapshot each,
real questions), and running it as JupyterLab does before it saves: the finished progress
bars' models are closed, so their state is gone from the saved notebook."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from tests.conftest import flask_releases

QUESTION = "What is the default for SEND_FILE_MAX_AGE_DEFAULT?"
RELEASES = ("0.10", "0.12", "1.0", "2.0.0", "2.3.0", "3.1.3")


def releases() -> list[tuple[str, Path]]:
    found = {p.name.split("_flask-")[1]: p for p in flask_releases()}
    return [(tag, found[tag]) for tag in RELEASES]


def code_notebook(*cells: str) -> Any:
    """A notebook of these code cells, for the python3 kernel."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    return nb


def notebook(project: str = "./flaskproj", *, as_of: bool = False) -> Any:
    """README's flow: open, ingest each release and snapshot it, ask, then the widgets."""
    cells = ["%load_ext ragtt_nb", f"%ragtt open {project} --create"]
    for n, (tag, path) in enumerate(releases()):
        date = f" --as-of-date {path.name.split('_')[0]}" if as_of else ""
        cells.append(f"%ragtt ingest {path}{date}\n%ragtt snapshot flask-{tag}")
        if n == 0:
            cells.append(f"then = %ragtt query {QUESTION}")
    cells += [
        f"res = %ragtt query {QUESTION}",
        "%ragtt timeline last",
        "%ragtt diff {then.query_id} last",
        f"%ragtt drift flask-{RELEASES[0]} flask-{RELEASES[-1]}",
    ]
    return code_notebook(*cells)


class LabClient(NotebookClient):  # type: ignore[misc]
    """nbclient saving widget state as JupyterLab's "Save Widget State Automatically" does:
    only for models still open when the notebook is saved."""

    def handle_comm_msg(self, outs: Any, msg: dict[str, Any], cell_index: int) -> None:
        super().handle_comm_msg(outs, msg, cell_index)
        if msg["msg_type"] == "comm_close":
            self.widget_state.pop(msg["content"]["comm_id"], None)
            self.widget_buffers.pop(msg["content"]["comm_id"], None)


def run_like_jupyterlab(nb: Any, folder: Path, timeout: int = 300) -> Any:
    """Execute ``nb`` in ``folder`` (a real kernel) and return it as JupyterLab would save it."""
    with tempfile.TemporaryDirectory(prefix="ragtt-kernel-") as sockets:
        from traitlets.config import Config

        ipc = Config({"KernelManager": {"transport": "ipc", "ip": str(Path(sockets) / "kernel")}})
        LabClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(folder)}},
            store_widget_state=True,
            config=ipc,
        ).execute()
    return nb
