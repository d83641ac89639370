"""Every verb's ``writes`` declaration against what a real call does: a verb that declares
``writes=False`` changes nothing on disk (no event, no version, no file, in the project or
beside it), and one that declares ``True`` is seen to change something. Read-only servers
(``RagttExtension.read_only``, the lab setting) refuse exactly the verbs that declare True."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import ragtt
from ragtt.serve import create_app
from ragtt.verbs import VERBS, Verb
from tests.serve.conftest import call_every_verb

# SQLite's shared-memory index is written by readers too; its WAL is compared through the rows.
SCRATCH = ("-shm", "-wal", "-journal")


def state(home: Path) -> dict[str, Any]:
    """What is on disk under ``home``: each database's row count per table, every other file's hash."""
    seen: dict[str, Any] = {}
    for path in sorted(p for p in home.rglob("*") if p.is_file() and not p.name.endswith(SCRATCH)):
        name = str(path.relative_to(home))
        if path.suffix == ".db":
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
                tables = [r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")]
                for table in tables:
                    try:
                        seen[f"{name}:{table}"] = conn.execute(f'select count(*) from "{table}"').fetchone()[0]
                    except sqlite3.OperationalError:  # a virtual table of an extension stdlib sqlite lacks
                        continue
            continue
        seen[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return seen


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bool]:
    """verb name -> whether any of its calls (``call_every_verb``'s) changed what is on disk."""
    home = tmp_path_factory.mktemp("writes")
    changed: dict[str, bool] = {}

    def call(verb: str, **values: Any) -> Any:
        method, path = VERBS[verb].route or ("", "")
        for key in [k for k in values if "{" + k + "}" in path]:
            path = path.replace("{" + key + "}", str(values.pop(key)))
        before = state(home)
        response = client.post(path, json=values) if method == "POST" else client.get(path, params=values)
        assert response.status_code == 200, (verb, response.text)
        changed[verb] = changed.get(verb, False) or state(home) != before
        return response.json()

    with TestClient(create_app(home / "p", embedder=ragtt.HashEmbedder(), files_root=home)) as client:
        call_every_verb(call, home)
    return changed


def test_every_verb_is_called(observed: dict[str, bool]) -> None:
    assert set(observed) == set(VERBS)


@pytest.mark.parametrize("name", list(VERBS))
def test_a_verb_declares_whether_it_writes(name: str, observed: dict[str, bool]) -> None:
    declared = VERBS[name].writes
    assert observed[name] == declared, (
        f"{name} declares writes={declared}, but calling it {'changed' if observed[name] else 'left'} "
        "the files under its project's folder"
    )


def test_a_verb_that_writes_the_index_cannot_say_it_does_not() -> None:
    base = VERBS["snapshots"]
    with pytest.raises(ValueError, match="writes the index"):
        Verb(
            name="x",
            help="x",
            args=(),
            call=base.call,
            to_json=base.to_json,
            to_text=base.to_text,
            writes_index=True,
            writes=False,
        )
