from __future__ import annotations

from ragtt.generate import EXTRACTIVE_LABEL, ExtractiveGenerator
from ragtt.results import RetrievedChunk

CONFIG = """.. py:data:: SESSION_COOKIE_NAME

    The name of the session cookie. Can be changed in case you already have a cookie with
    the same name.

    Default: ``'session'``

.. py:data:: SEND_FILE_MAX_AGE_DEFAULT

    When serving files, set the cache control max age to this number of seconds.

    Default: ``timedelta(hours=12)`` (``43200`` seconds)
"""


def chunk(text: str, rank: int) -> RetrievedChunk:
    return RetrievedChunk(f"c{rank}", "d", "config.rst", text, rank, 1.0 / rank, {}, (0, len(text)))


def test_extractive_answer_quotes_the_passage_that_names_the_subject() -> None:
    gen = ExtractiveGenerator()
    out = gen.generate("What is the default value of SEND_FILE_MAX_AGE_DEFAULT?",
                       [chunk(CONFIG, 1), chunk("Unrelated text about templates and default filters.", 2)])
    assert out.model == "extractive" and out.answer.startswith(EXTRACTIVE_LABEL)
    body = out.answer.removeprefix(EXTRACTIVE_LABEL)
    assert "43200" in body  # the rare identifier wins, and the lines after it come with it
    assert body.count("[1]") == 1  # one passage, quoted once, not overlapping copies


def test_extractive_answer_without_text_says_so() -> None:
    out = ExtractiveGenerator().generate("anything", [])
    assert "No retrieved text" in out.answer and out.model == "extractive"
