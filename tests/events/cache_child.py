"""A second machine: opens the project with only the URIs in its environment (a workspace
folder of its own when the index is on object storage), replays a query, asks two more, and
prints how many texts it had to embed for each (JSON)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

import ragtt


class CountingEmbedder(ragtt.HashEmbedder):
    """The hash embedder (same model id, same vectors) that counts the texts it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.extend(texts)
        return super().embed(texts)


def main() -> None:
    folder, query_id, old_text, new_text = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    embedder = CountingEmbedder()
    seen: dict[str, object] = {}
    with ragtt.Project.open(folder, embedder=embedder, progress=False) as proj:
        seen["replay_matches"] = proj.replay(query_id).matches_original
        seen["replay"] = len(embedder.calls)
        proj.query(old_text, generate=False)
        seen["old_text"] = len(embedder.calls)
        proj.query(new_text, generate=False)
        seen["new_text"] = len(embedder.calls)
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
