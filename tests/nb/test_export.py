"""Offline reports: the ragtt template (through `ragtt report` and plain nbconvert) and real
notebooks from ../shared/corpora/notebooks opened with every
non-file request aborted."""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

import ragtt_nb
from tests.conftest import corpus

from .conftest import REPO, Offline, export

VENV_BIN = Path(sys.executable).parent
TEMPLATE = REPO / "ragtt_nb" / "templates" / "ragtt"
EXECUTABLE = "script:not([type]), script[type='text/javascript'], script[type='module']"


def test_public_names_are_pinned_and_lazy() -> None:
    assert ragtt_nb.__all__ == [
        "ChunkDiff",
        "DriftScatter",
        "HistoryMatrix",
        "PdfOverlay",
        "RagttMagics",
        "Timeline",
        "export_report",
        "load_ipython_extension",
    ]
    code = "import sys, ragtt_nb; assert 'anywidget' not in sys.modules and 'IPython' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_installed_template_matches_the_repo() -> None:
    """`jupyter nbconvert --template ragtt` reads the installed copy (shared-data): it must
    be current. If this fails, reinstall: .venv/bin/pip install --no-deps -e ."""
    installed = Path(sys.prefix) / "share" / "jupyter" / "nbconvert" / "templates" / "ragtt"
    for path in TEMPLATE.rglob("*"):
        if path.is_file():
            twin = installed / path.relative_to(TEMPLATE)
            assert twin.is_file() and filecmp.cmp(path, twin, shallow=False), f"stale or missing: {twin}"


def test_plain_nbconvert_finds_the_template(tmp_path: Path, offline: Offline) -> None:
    notebook = corpus("notebooks", "anywidget__counter.ipynb")
    subprocess.run(
        [
            str(VENV_BIN / "jupyter-nbconvert"),
            "--to",
            "html",
            "--template",
            "ragtt",
            str(notebook),
            "--output-dir",
            str(tmp_path),
            "--output",
            "counter",
        ],
        check=True,
        capture_output=True,
    )
    page = offline.open(tmp_path / "counter.html")
    page.wait_for_selector(".widget-subarea button", timeout=30_000)
    page.locator(".widget-subarea button").first.click()
    # the only requests are the notebook's own Markdown images (a Colab badge), never the report's
    assert all(url in notebook.read_text() for url in offline.aborted)
    assert [e for e in offline.errors if "Failed to load resource" not in e] == []


def test_ragtt_report_prints_the_size(tmp_path: Path) -> None:
    notebook = corpus("notebooks", "anywidget__counter.ipynb")
    out = tmp_path / "r.html"
    done = subprocess.run(
        [str(VENV_BIN / "ragtt"), "report", str(notebook), "-o", str(out)], check=True, capture_output=True, text=True
    )
    assert done.stdout.strip() == f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)"
    html = out.read_text()
    assert "cdn.jsdelivr.net/npm/@jupyter-widgets" not in html.split("define(")[0]  # no CDN script tags
    assert "MathJax.Hub.Config" not in html and "mermaid.esm" not in html


def test_report_usage_errors(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(VENV_BIN / "ragtt"), "report", str(tmp_path / "missing.ipynb")], capture_output=True, text=True
    )
    assert done.returncode == 2 and "no notebook at" in done.stderr
    with pytest.raises(ValueError, match=r"expected a \.ipynb"):
        export(tmp_path / "x.txt", tmp_path / "x.html")


@pytest.mark.filterwarnings("ignore:Your element with mimetype:UserWarning")  # its stripped script outputs
def test_adversarial_notebook_runs_no_script(tmp_path: Path, offline: Offline) -> None:
    """nbconvert's own injection notebook: exported (never executed), then opened."""
    out = export(corpus("notebooks", "nbconvert__notebook_inject.ipynb"), tmp_path / "inject.html")
    offline.page.add_init_script("window.__ran = []; window.alert = (m) => window.__ran.push(String(m));")
    page = offline.open(out)
    page.wait_for_load_state("load")
    page.wait_for_timeout(1500)
    assert offline.dialogs == [] and page.evaluate("window.__ran") == []
    injected = page.eval_on_selector_all(EXECUTABLE, "els => els.filter(s => s.textContent.includes('alert(')).length")
    assert injected == 0
    assert page.locator("img[onerror], [onclick], a[href^='javascript:']").count() == 0
    assert page.title() == "TITLE</title><script>alert('title')</script>"  # shown as text
    assert offline.aborted == []


def test_trusted_export_keeps_scripts(tmp_path: Path) -> None:
    notebook = corpus("notebooks", "nbconvert__notebook_inject.ipynb")
    trusted = export(notebook, tmp_path / "t.html", trusted=True).read_text()
    assert "alert('application/javascript output')" in trusted


def test_ipywidgets_notebook_renders_offline(tmp_path: Path, offline: Offline) -> None:
    """ipywidgets' Widget List (187 models): plain widgets render from the inlined manager."""
    out = export(corpus("notebooks", "nbconvert__Widget_List.ipynb"), tmp_path / "widgets.html")
    page = offline.open(out)
    page.wait_for_selector(".widget-subarea .widget-slider", timeout=30_000)
    # the manager renders the views one by one, asynchronously: wait for all of them (bounded)
    expect(page.locator(".widget-subarea")).to_have_count(41)  # every view output (manifest: n_view_outputs)
    assert offline.aborted == []
