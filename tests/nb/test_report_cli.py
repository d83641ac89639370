"""`ragtt report` as users run it: --execute --allow-errors, notebooks saved without widget
state, and nothing but ragtt's own lines in the output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from ragtt_nb.export import ReportError, export_report, views_without_state
from tests.conftest import corpus

RAGTT = str(Path(sys.executable).parent / "ragtt")


def _report(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RAGTT, "report", *args], capture_output=True, text=True, timeout=300)


def test_a_notebook_saved_without_widget_state_is_refused_with_what_to_do(tmp_path: Path) -> None:
    nb = json.loads(corpus("notebooks", "anywidget__counter.ipynb").read_text(encoding="utf-8"))
    nb["metadata"].pop("widgets")  # what JupyterLab saves with "Save Widget State Automatically" off
    stateless = tmp_path / "counter.ipynb"
    stateless.write_text(json.dumps(nb), encoding="utf-8")
    assert len(views_without_state(nbformat.read(stateless, as_version=4))) == 2
    with pytest.raises(ReportError, match=r"2 widget output\(s\) without saved widget state"):
        export_report(stateless, tmp_path / "r.html")
    done = _report(str(stateless), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 2 and not (tmp_path / "r.html").exists()
    assert len(done.stderr.strip().splitlines()) == 1
    assert "--execute" in done.stderr and "Save Widget State Automatically" in done.stderr
    with_state = _report(str(corpus("notebooks", "anywidget__counter.ipynb")), "-o", str(tmp_path / "ok.html"))
    assert with_state.returncode == 0, with_state.stderr


def test_execute_allow_errors_keeps_going_and_no_kernel_warning_is_printed(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell("print('before the failure')"),
        nbformat.v4.new_code_cell("1 / 0"),
        nbformat.v4.new_code_cell("print('after the failure')"),
    ]
    notebook = tmp_path / "fails.ipynb"
    nbformat.write(nb, notebook)
    out = tmp_path / "fails.html"
    stopped = _report(str(notebook), "-o", str(out), "--execute")
    assert stopped.returncode == 1 and "--allow-errors" in stopped.stderr and not out.exists()
    done = _report(str(notebook), "-o", str(out), "--execute", "--allow-errors")
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    assert "ZeroDivisionError" in html and "after the failure" in html
    assert done.stdout.strip().startswith(f"wrote {out}")
    assert done.stderr.strip() == "1 cell(s) of fails.ipynb failed; the report shows their errors"
    for run in (stopped, done):
        assert "without encryption" not in run.stdout + run.stderr
    misuse = _report(str(notebook), "--allow-errors")
    assert misuse.returncode == 2 and "--allow-errors needs --execute" in misuse.stderr
