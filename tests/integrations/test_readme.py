"""The README's Integrations section runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def integration_snippets() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Integrations\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_integrations_snippets_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snippets = integration_snippets()
    assert len(snippets) == 2  # LangChain, then LlamaIndex on the same project
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    try:
        for snippet in snippets:
            exec(compile(snippet, str(README), "exec"), namespace)
    finally:
        proj = namespace.get("proj")
        if proj is not None:
            proj.close()  # type: ignore[attr-defined]
    assert namespace["out"]["answer"] == "30 days."  # type: ignore[index]
    assert (tmp_path / "proj-chain" / "ragtt.json").exists()
