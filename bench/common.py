"""Shared by both sides of the benchmark: the corpus, the deterministic embedder, statistics.

This module must import with the standard library and numpy only: the peer worker runs
it inside rag-timetravel's own virtualenv, where ragtt is not installed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import re
import statistics
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np

CRANFIELD = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "cranfield" / "beir_format"
FLASK = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "evolving" / "flask"
DOC_MAX_CHARS = 600  # "small documents": one chunk on both sides (ragtt 800 chars, peer 512 words)
HASH_DIM = 256

# -- the deterministic embedder ---------------------------------------------------------------
# An exact re-implementation of ragtt.HashEmbedder.embed (ragtt/index/embedders.py), so the
# peer embeds with the same function without ragtt installed. bench/run.py checks, before
# every run, that both produce bit-identical vectors.

_TOKEN = re.compile(r"\w+", re.UNICODE)


def _features(text: str) -> list[tuple[str, float]]:
    words = _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())
    features: list[tuple[str, float]] = [("w:" + w, 1.0) for w in words]
    for w in words:
        padded = f"<{w}>"
        features.extend(("c:" + padded[i : i + 3], 0.3) for i in range(len(padded) - 2))
    return features


def hash_embed(texts: list[str], dim: int = HASH_DIM) -> np.ndarray:
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for row, text in enumerate(texts):
        for feature, weight in _features(text):
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            out[row, value % dim] += weight if (value >> 63) & 1 else -weight
        norm = float(np.linalg.norm(out[row]))
        if norm > 0:
            out[row] /= norm
    return out


SELF_CHECK_TEXTS = [
    "The refund window is 30 days.",
    "Ünïcödé ﬁ ligatures — and CASE folding: STRASSE straße",
    "",
    "boundary layer transition at supersonic mach numbers . " * 5,
]

# -- the corpus -------------------------------------------------------------------------------


def corpus_source() -> str:
    return "cranfield" if (CRANFIELD / "corpus.jsonl").is_file() else "synthetic"


def _sentences_cranfield() -> tuple[list[list[str]], list[str]]:
    abstracts: list[list[str]] = []
    with open(CRANFIELD / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            text = json.loads(line)["text"].strip()
            sentences = [s.strip(" .") + " ." for s in text.split(" . ") if s.strip(" .")]
            if sentences:
                abstracts.append([_cap(s) for s in sentences])
    queries = []
    with open(CRANFIELD / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            queries.append(json.loads(line)["text"].strip())
    return abstracts, queries


def _cap(sentence: str) -> str:
    if len(sentence) <= DOC_MAX_CHARS:
        return sentence
    return sentence[:DOC_MAX_CHARS].rsplit(" ", 1)[0]


def _sentences_synthetic(seed: int) -> tuple[list[list[str]], list[str]]:
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "pe", "da", "gor", "lin", "tem", "ax", "qu"]
    vocab = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(4000)})
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]  # Zipf-like word frequencies
    rng.shuffle(vocab)

    def sentence() -> str:
        return " ".join(rng.choices(vocab, weights, k=rng.randint(8, 22))) + " ."

    abstracts = [[sentence() for _ in range(rng.randint(3, 9))] for _ in range(1500)]
    queries = [" ".join(rng.choices(vocab, weights, k=rng.randint(4, 9))) for _ in range(200)]
    return abstracts, queries


def make_corpus(n_docs: int, seed: int = 7) -> tuple[list[tuple[str, str]], list[str], str]:
    """``n_docs`` small documents ``(name, text)`` and the query texts; deterministic for a seed.

    Documents pack consecutive sentences of one Cranfield abstract into at most
    DOC_MAX_CHARS characters; past the abstracts' supply, seeded recombinations of their
    sentences. Without the shared corpora, a seeded synthetic Zipfian text stands in.
    """
    source = corpus_source()
    abstracts, queries = _sentences_cranfield() if source == "cranfield" else _sentences_synthetic(seed)
    packed: list[str] = []
    for sentences in abstracts:
        current = ""
        for s in sentences:
            if current and len(current) + 1 + len(s) > DOC_MAX_CHARS:
                packed.append(current)
                current = s
            else:
                current = f"{current} {s}" if current else s
        if current:
            packed.append(current)
    rng = random.Random(seed)
    rng.shuffle(packed)
    pool = [s for sentences in abstracts for s in sentences]
    while len(packed) < n_docs:
        text = ""
        while True:
            s = rng.choice(pool)
            if text and len(text) + 1 + len(s) > DOC_MAX_CHARS:
                break
            text = f"{text} {s}" if text else s
        packed.append(text)
    docs = [(f"doc-{i:05d}.md", text) for i, text in enumerate(packed[:n_docs])]
    return docs, queries, source


# -- the changes for drift and lineage (issue 5) --------------------------------------------------

REVISE_EVERY = 10  # one document in ten is re-ingested with changed text


def revisions(docs: list[tuple[str, str]], queries: list[str], top_sources: list[list[str]]) -> dict[str, str]:
    """The re-ingest for the drift and lineage rows: ``{source: new text}``, one call's worth.

    Every REVISE_EVERY-th document loses the first third of its words (its vector moves, most
    sources stay above a 0.9 centroid cosine); every source in a lineage query's top-k (vector
    search before the change, ``top_sources[i]`` for ``queries[i]``) gets that query's text put
    in front, so its new chunk competes for that top-k and the old one goes: lineage then has
    chunks that left and entered to explain. Deterministic; both sides get the same dict.
    """
    texts = dict(docs)
    out: dict[str, str] = {}
    for i, (name, text) in enumerate(docs):
        if i % REVISE_EVERY == 0:
            words = text.split()
            out[name] = " ".join(words[len(words) // 3 :]) + " (revised)"
    led: set[str] = set()  # a source in several top-ks is led by the first of those queries
    for query, sources in zip(queries, top_sources, strict=False):
        for name in sources:
            if name in texts and name not in led:
                led.add(name)
                body = texts[name][: max(0, DOC_MAX_CHARS - len(query) - 1)].rsplit(" ", 1)[0]
                out[name] = f"{query} {body}"
    return out


# -- statistics and sizes ---------------------------------------------------------------------


def p50(samples: list[float]) -> float:
    return float(statistics.median(samples)) if samples else float("nan")


def pct(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])


def summary(samples: list[float]) -> dict[str, Any]:
    return {
        "n": len(samples),
        "p50_ms": p50(samples),
        "p90_ms": pct(samples, 0.9),
        "min_ms": min(samples) if samples else None,
        "samples_ms": [round(s, 4) for s in samples],
    }


def dir_bytes(path: str | Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(FileNotFoundError):  # a file may vanish mid-walk
                total += os.stat(os.path.join(root, name)).st_size
    return total


def file_count(path: str | Path) -> int:
    return sum(len(files) for _root, _dirs, files in os.walk(path))


# -- the results table (bench/run.py prints it, bench/render.py renders it as Markdown) ----------

TABLE_HEAD = ("#", "metric", "ragtt", "peer / baseline", "ratio", "goal", "result")


def ratio_text(row: dict[str, Any]) -> str:
    if row["ratio"] is None:
        return "-"
    digits = 3 if row["ratio"] >= 0.01 else 5
    return ("< " if row.get("lower_bound") else "") + f"{row['ratio']:.{digits}f}x"


def table_cells(row: dict[str, Any]) -> tuple[str, ...]:
    """One row of the results table, as text, in ``TABLE_HEAD``'s order."""
    return (
        row["target"],
        row["metric"],
        row["ragtt_text"],
        row["baseline_text"],
        ratio_text(row),
        row["goal"] or "",
        row["status"],
    )


def flask_releases() -> list[Path]:
    """Flask's docs, one folder per release, oldest first (none without the shared corpora)."""
    return sorted(p for p in FLASK.iterdir() if p.is_dir()) if FLASK.is_dir() else []
