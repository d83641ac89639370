"""A few real Flask documentation files, as (source, text) pairs for the framework tests."""

from __future__ import annotations

from tests.conftest import flask_releases

QUESTION = "How do I set the SECRET_KEY configuration value?"


def flask_docs() -> list[tuple[str, str]]:
    release = flask_releases()[-1]
    files = [release / "docs" / name for name in ("config.rst", "installation.rst", "web-security.rst")]
    return [(f"docs/{f.name}", f.read_text(encoding="utf-8")) for f in files]
