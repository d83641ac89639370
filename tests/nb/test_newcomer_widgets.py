"""Issue 30 (what a newcomer hit), the widgets' and magics' side, on real data: a PDF overlay
embeds every page holding a retrieved chunk, ``%ragtt open`` with a typo keeps the project,
``%ragtt qurey`` suggests ``query``, ``%ragtt test capture`` shows a summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import ragtt
from ragtt_nb.pdf_overlay import PdfOverlay
from tests.conftest import corpus

PDF = "docling__normal_4pages.pdf"


def test_a_lazy_pdf_overlay_embeds_every_page_with_a_retrieved_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The newcomer's report said "page 4 ... not embedded" where chunk #2 was."""
    monkeypatch.delenv("RAGTT_REPORT", raising=False)  # as in JupyterLab: lazy
    with ragtt.Project.open(tmp_path / "p", embedder=ragtt.HashEmbedder(), progress=False, create=True) as proj:
        proj.ingest(corpus("pdfs", PDF))
        res = proj.query("table of results and the evaluation of the model", top_k=8, generate=False)
        ov = PdfOverlay(proj, PDF, query_id=res.query_id)
        pages = ov.retrieved_pages()
        assert len(pages) >= 2, pages
        assert set(pages) <= set(ov.embedded_pages)
        assert ov.embedded_pages != list(range(1, ov.page_count + 1)) or ov.page_count == len(pages)
        plain = PdfOverlay(proj, PDF)  # no query: just the page shown
        assert plain.embedded_pages == [plain.page]


def _flask_shell(shell: Any, tmp_path: Path) -> Path:
    from tests.nb.newcomer import releases

    project = tmp_path / "flaskproj"
    shell.run_line_magic("ragtt", f"open {project} --create")
    for tag, path in releases()[:2]:
        shell.run_line_magic("ragtt", f"ingest {path}")
        shell.run_line_magic("ragtt", f"snapshot flask-{tag}")
    return project


def test_open_with_a_typo_keeps_the_project_and_suggests_the_similar_one(shell: Any, tmp_path: Path) -> None:
    from IPython.core.error import UsageError

    project = _flask_shell(shell, tmp_path)
    typo = f"{tmp_path}/flaskprj"
    with pytest.raises(UsageError) as info:
        shell.run_line_magic("ragtt", f"open {typo}")
    message = str(info.value)
    assert f"did you mean {project}?" in message and f"%ragtt open {project}" in message
    assert "--create" not in message and "ragtt ingest" not in message
    assert f"{project} is still the current project" in message
    assert shell.run_line_magic("ragtt", "query What is the default for SECRET_KEY?").query_id  # still open
    with pytest.raises(UsageError) as info:
        shell.run_line_magic("ragtt", f"open {tmp_path}/nothing-like-it")
    assert f"%ragtt open {tmp_path}/nothing-like-it --create" in str(info.value)
    assert "proj." not in str(info.value) and "Project.open" not in str(info.value)


def test_a_verb_typo_suggests_the_verb(shell: Any) -> None:
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match=r"did you mean %ragtt query\?"):
        shell.run_line_magic("ragtt", "qurey What is the default for SECRET_KEY?")


def test_test_capture_shows_a_summary(shell: Any, tmp_path: Path) -> None:
    _flask_shell(shell, tmp_path)
    suite = shell.run_line_magic(
        "ragtt", 'test capture --name golden --query "What is SECRET_KEY?" --query "How do I install Flask?"'
    )
    text = repr(suite)
    assert len(text) < 200, text  # it was thousands of characters of chunk ids
    assert "'golden': 2 golden queries captured at v" in text
    html = suite._repr_html_()
    assert "How do I install Flask?" in html and "<table" in html


def test_removing_an_unknown_source_lists_the_indexed_ones(tmp_path: Path) -> None:
    from tests.nb.newcomer import releases

    with ragtt.Project.open(tmp_path / "p", embedder=ragtt.HashEmbedder(), progress=False, create=True) as proj:
        proj.ingest(releases()[0][1])
        with pytest.raises(ragtt.NotFoundError, match=r"never in the index \(indexed: .*'docs/config.rst'"):
            proj.remove("docs/confg.rst")
