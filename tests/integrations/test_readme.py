"""The README's example and the integrations guide's examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "integrations.md"


def python_blocks(path: Path, section: str) -> list[str]:
    """The ```python blocks of one ``## section`` of a Markdown file."""
    text = path.read_text(encoding="utf-8")
    assert f"\n## {section}\n" in text, f"{path.name} has no '## {section}' section"
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, flags=re.S)


def test_the_readme_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (snippet,) = python_blocks(README, "A short example")
    monkeypatch.chdir(tmp_path)
    exec(compile(snippet, str(README), "exec"), {})
    out = capsys.readouterr().out
    assert "[-30-] {+14+}" in out  # the diff shows the edited passage
    assert "refunds.md was re-ingested" in out  # and lineage says why
    assert (tmp_path / "proj" / "ragtt.json").exists()


def test_the_integrations_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snippets = python_blocks(GUIDE, "Examples")
    assert len(snippets) == 2  # LangChain, then LlamaIndex on the same project
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    try:
        for snippet in snippets:
            exec(compile(snippet, str(GUIDE), "exec"), namespace)
    finally:
        proj = namespace.get("proj")
        if proj is not None:
            proj.close()  # type: ignore[attr-defined]
    assert namespace["out"]["answer"] == "30 days."  # type: ignore[index]
    assert (tmp_path / "proj-chain" / "ragtt.json").exists()


def test_the_readme_history_matrix_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (snippet,) = python_blocks(README, "Which answers got worse?")
    monkeypatch.chdir(tmp_path)
    exec(compile(snippet, str(README), "exec"), {})
    out = capsys.readouterr().out
    assert "release-1" in out and "release-3" in out  # one column per snapshot
    assert "refund-policy.md" in out  # the regression's reason names the changed source
