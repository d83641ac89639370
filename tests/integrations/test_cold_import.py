"""``import ragtt`` never imports LangChain or LlamaIndex: they are optional extras."""

from __future__ import annotations

import json
import subprocess
import sys

FRAMEWORKS = ("langchain_core", "langchain", "llama_index", "llama_index.core")

# every public name of ragtt loaded, the CLI and the framework-free integrations module too
PROBE = (
    "import json, sys, ragtt, ragtt.cli, ragtt.integrations, ragtt.integrations.records; "
    "[getattr(ragtt, name) for name in ragtt.__all__]; "
    f"print(json.dumps([m for m in {FRAMEWORKS!r} if m in sys.modules]))"
)


def loaded_by(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_import_ragtt_imports_no_framework() -> None:
    assert loaded_by(PROBE) == []


def test_each_integration_imports_only_its_own_framework() -> None:
    # the same probe does see a framework once one is imported
    probe = "import json, sys, ragtt.integrations.{} as _; print(json.dumps([m for m in {!r} if m in sys.modules]))"
    assert loaded_by(probe.format("langchain", FRAMEWORKS)) == ["langchain_core"]
    assert loaded_by(probe.format("llama_index", FRAMEWORKS)) == ["llama_index", "llama_index.core"]
