"""The dashboards' list of logged queries over a long history: thousands of live queries and
replays of every kind (of a run, of a replay, a question asked of the past, one nobody asked
live), each nested under the run it belongs to, against owners tracked as the history was
made. (How long the list takes belongs to the bench, not here.)"""

from __future__ import annotations

import random
import re
from pathlib import Path

import ragtt
from ragtt.views.dashboard import logged_queries

QUESTIONS = [f"refund window {n}" for n in range(40)]
NEVER_ASKED = [f"gift card {n}" for n in range(10)]


def spelled(question: str, rng: random.Random) -> str:
    """The question as people type it: the list matches a question case and spacing aside."""
    return rng.choice([question, question.upper(), f"  {question.replace(' ', '   ')} "])


def normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def test_thousands_of_replays_are_each_listed_under_the_run_they_belong_to(tmp_path: Path) -> None:
    rng = random.Random(28)
    owner: dict[str, str | None] = {}  # replay -> the run it belongs to (None: a row of its own)
    newest: dict[str, str] = {}  # question -> its newest live run
    live: list[str] = []
    replays: list[str] = []
    made: list[str] = []  # every run, in the order it was logged
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False, create=True) as proj:
        proj.ingest_texts({"refunds.md": "# Refunds\n\nWithin 30 days.\n", "gifts.md": "# Gift cards\n\nNone.\n"})
        proj.snapshot("before")
        proj.ingest_texts({"refunds.md": "# Refunds\n\nWithin 14 days.\n"})
        for step in range(2000):
            roll = rng.random()
            if step < 20 or roll < 0.5:
                question = rng.choice(QUESTIONS)
                query_id = proj.query(spelled(question, rng), generate=False, mode="bm25").query_id
                live.append(query_id)
                newest[question] = query_id
            elif roll < 0.7:  # a replay of a live run
                original = rng.choice(live)
                query_id = proj.replay(original).query_id
                owner[query_id] = original
            elif roll < 0.8 and replays:  # a replay of a replay: the run the first one belongs to
                original = rng.choice(replays)
                query_id = proj.replay(original).query_id
                owner[query_id] = owner[original] if owner[original] is not None else original
            elif roll < 0.95:  # a question asked of the past, as "Diff with now" does
                question = rng.choice(QUESTIONS)
                query_id = proj.replay_text(spelled(question, rng), at="before", mode="bm25").query_id
                owner[query_id] = newest.get(question)
            else:  # asked of the past only: a row of its own
                query_id = proj.replay_text(rng.choice(NEVER_ASKED), at="before", mode="bm25").query_id
                owner[query_id] = None
            if query_id in owner:
                replays.append(query_id)
            made.append(query_id)

        expected = [q for q in reversed(made) if owner.get(q) is None]  # newest first
        nested: dict[str, list[str]] = {}
        for replay_id in reversed(replays):
            if (belongs := owner[replay_id]) is not None:
                nested.setdefault(belongs, []).append(replay_id)
        assert sum(map(len, nested.values())) > 800 and len(live) > 900

        total, listed, _ = logged_queries(proj, limit=len(expected))
        assert total == len(expected) == len(listed)
        assert [q["query_id"] for q in listed] == expected
        for row in listed:
            assert [r["query_id"] for r in row["replays"]] == nested.get(row["query_id"], [])
            assert row["kind"] == ("replay" if row["query_id"] in owner else "live")
            assert all(normal(r["text"]) == normal(row["text"]) for r in row["replays"])
        _, page, _ = logged_queries(proj, offset=100, limit=50)
        assert page == listed[100:150]
