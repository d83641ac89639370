from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragtt.index.embedders import HashEmbedder
from ragtt.temporal import Assertion, AssertionStore, Citation, Episode

NS = "default"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[AssertionStore]:
    with AssertionStore.open(tmp_path / "assertions.db", embedder=HashEmbedder(64)) as s:
        yield s


def episode(store: AssertionStore, eid: str = "e1", namespace: str = NS, position: float = 0.0) -> Episode:
    if store.get_episode(eid) is None:
        store.namespaces.ensure(namespace)
        store.write_episode(Episode(eid, namespace, position, "2024-01-01T00:00:00+00:00", "note", "source"))
    return store.get_episode(eid)  # type: ignore[return-value]


def make(
    aid: str, content: str, valid_from: float, *, namespace: str = NS, episode_id: str = "e1", **kw: Any
) -> Assertion:
    return Assertion(
        aid,
        namespace,
        kw.pop("type", "fact"),
        content,
        valid_from,
        kw.pop("confidence", 0.9),
        episode_id,
        [Citation(f"c-{aid}", episode_id, f"ref:{aid}", content)],
        **kw,
    )


Fact = Callable[..., Assertion]


@pytest.fixture
def fact(store: AssertionStore) -> Fact:
    """Write an assertion (and its episode, when missing) and return it."""

    def write(aid: str, content: str, valid_from: float, **kw: Any) -> Assertion:
        episode(store, kw.get("episode_id", "e1"), kw.get("namespace", NS))
        return store.write_assertion(make(aid, content, valid_from, **kw))

    return write
