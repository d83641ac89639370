"""Issue 14, requirement 1: the ONNX Runtime embedder against sentence-transformers on torch.

    python bench/bench_embed.py                 # 500 Flask chunks, batch 32, 3 rounds, Cranfield nDCG@10
    python bench/bench_embed.py --quick         # 200 chunks, 1 round, no nDCG (indicative only)

The backends embed the same chunks (the Flask docs of ../shared/corpora, release by
release, chunked as ragtt chunks them), round-robin within each round so load
drift on the shared cores hits all of them, and the best round of each is compared. Every
ONNX vector is compared to torch's (cosine). With --ndcg (the default outside --quick),
Cranfield's 1,400 abstracts are ingested once per ONNX precision into a fresh project, its
225 queries are run in vector and hybrid mode, and nDCG@10 against cranqrel decides whether
int8 may be the default (within 0.005 of fp32, both modes).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("RUST_LOG", "error")

import numpy as np

from ragtt.index.embedders import DEFAULT_ONNX_PRECISION

FLASK = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "evolving" / "flask"
CRANFIELD = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "cranfield" / "beir_format"
SPEEDUP_TARGET = 3.0
COSINE_TARGET = 0.9999
NDCG_TOLERANCE = 0.005
DEFAULT = f"onnx-{DEFAULT_ONNX_PRECISION}"  # the default embedder, measured against torch
PREVIOUS = "onnx-int8-v2"  # the default before it, beside it as an info row


def flask_chunks(n: int) -> list[str]:
    """The first ``n`` chunks of the Flask releases in date order, as ragtt chunks them
    (4 files a release, so later releases repeat earlier chunks: an embedder never knows)."""
    from ragtt.ingest import build_chunks

    texts: list[str] = []
    for release in sorted(p for p in FLASK.iterdir() if p.is_dir()):
        for path in sorted(release.rglob("*")):
            if path.suffix in (".rst", ".md") and path.is_file():
                texts.extend(c.text for c in build_chunks(path.read_text(encoding="utf-8", errors="replace")))
        if len(texts) >= n:
            return texts[:n]
    return texts


def throughput(texts: list[str], rounds: int, batch: int) -> dict[str, Any]:
    from ragtt.index.embedders import OnnxEmbedder, SentenceTransformerEmbedder

    embedders: dict[str, Any] = {
        "torch": SentenceTransformerEmbedder(batch_size=batch),
        "onnx-fp32": OnnxEmbedder(precision="fp32", batch_size=batch),
        DEFAULT: OnnxEmbedder(precision=DEFAULT_ONNX_PRECISION, batch_size=batch),
        PREVIOUS: OnnxEmbedder(precision=PREVIOUS.removeprefix("onnx-"), batch_size=batch),
    }
    for e in embedders.values():  # load (and build the ONNX files once) outside the timing
        e.embed(texts[:2])
    seconds: dict[str, list[float]] = {name: [] for name in embedders}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(rounds):
        for name, e in embedders.items():
            started = time.perf_counter()
            vectors[name] = e.embed(texts)
            seconds[name].append(time.perf_counter() - started)
    out: dict[str, Any] = {"chunks": len(texts), "batch": batch, "rounds": rounds}
    for name in embedders:
        best = min(seconds[name])
        cos = (vectors[name] * vectors["torch"]).sum(axis=1)
        out[name] = {
            "chunks_per_s": len(texts) / best,
            "seconds": seconds[name],
            "cosine_min": float(cos.min()),
            "cosine_mean": float(cos.mean()),
        }
    return out


def ndcg_at_10(ranked: list[str], relevant: dict[str, int]) -> float:
    dcg = sum((2 ** relevant.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def cranfield_ndcg(work: Path) -> dict[str, dict[str, float]]:
    import ragtt
    from ragtt.index.embedders import OnnxEmbedder

    docs = {}
    with (CRANFIELD / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            docs[f"{row['_id']}.txt"] = (row.get("title", "") + "\n\n" + row["text"]).strip() or "(empty)"
    queries = {}
    with (CRANFIELD / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            queries[row["_id"]] = row["text"]
    qrels: dict[str, dict[str, int]] = {}
    qrel_file = next((CRANFIELD / "qrels").glob("test.tsv"))
    for line in qrel_file.read_text(encoding="utf-8").splitlines()[1:]:
        qid, did, score = line.split("\t")[:3]
        if int(score) > 0:
            qrels.setdefault(qid, {})[f"{did}.txt"] = int(score)
    out: dict[str, dict[str, float]] = {}
    for precision in ("fp32", DEFAULT_ONNX_PRECISION):
        config = ragtt.PipelineConfig(top_k=10, chunk_size=4000, chunk_overlap=0)
        with ragtt.Project.open(
            work / precision, config=config, embedder=OnnxEmbedder(precision=precision), progress=False
        ) as proj:
            proj.ingest_texts(docs)
            scores: dict[str, float] = {}
            for mode in ("vector", "hybrid"):
                values = []
                for qid, rel in qrels.items():
                    res = proj.query(queries[qid], top_k=10, mode=mode, generate=False)
                    ranked = list(dict.fromkeys(c.source for c in res.chunks))
                    values.append(ndcg_at_10(ranked, rel))
                scores[mode] = float(np.mean(values))
            out[precision] = scores
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, default=500)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ndcg", action=argparse.BooleanOptionalAction, default=None)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if args.quick:
        args.chunks, args.rounds = min(args.chunks, 200), 1
    if args.ndcg is None:
        args.ndcg = not args.quick

    texts = flask_chunks(args.chunks)
    result: dict[str, Any] = {"throughput": throughput(texts, args.rounds, args.batch)}
    if args.ndcg:
        with tempfile.TemporaryDirectory(prefix="ragtt-bench-embed-") as tmp:
            result["ndcg"] = cranfield_ndcg(Path(tmp))

    t = result["throughput"]
    base = t["torch"]["chunks_per_s"]
    rows = []
    for name in (DEFAULT, PREVIOUS, "onnx-fp32"):
        ratio = t[name]["chunks_per_s"] / base
        judged = name == DEFAULT  # the target is the default's; the others are for comparison
        rows.append(
            (
                f"{name} chunks/s / torch ({t['chunks']} Flask chunks, batch {t['batch']})",
                f"{ratio:.2f}x",
                f">= {SPEEDUP_TARGET:.0f}x" if judged else "info",
                ratio >= SPEEDUP_TARGET if judged else None,
            )
        )
    rows.append(
        (
            "onnx-fp32 cosine to torch, min",
            f"{t['onnx-fp32']['cosine_min']:.6f}",
            f">= {COSINE_TARGET}",
            t["onnx-fp32"]["cosine_min"] >= COSINE_TARGET,
        )
    )
    rows.append(
        (
            f"{DEFAULT} cosine to torch, min / mean",
            f"{t[DEFAULT]['cosine_min']:.4f} / {t[DEFAULT]['cosine_mean']:.4f}",
            "info",
            None,
        )
    )
    if "ndcg" in result:
        n = result["ndcg"]
        for mode in ("vector", "hybrid"):
            q = n[DEFAULT_ONNX_PRECISION][mode]
            gap = n["fp32"][mode] - q
            rows.append(
                (
                    f"Cranfield nDCG@10 {mode}: fp32 {n['fp32'][mode]:.4f}, {DEFAULT_ONNX_PRECISION} {q:.4f}",
                    f"fp32 - {DEFAULT_ONNX_PRECISION} = {gap:+.4f}",
                    f"<= {NDCG_TOLERANCE}",
                    gap <= NDCG_TOLERANCE,
                )
            )
    print(
        f"\nissue 14 / embedder (chunks/s: torch {base:.1f}, onnx-fp32 {t['onnx-fp32']['chunks_per_s']:.1f}, "
        f"{PREVIOUS} {t[PREVIOUS]['chunks_per_s']:.1f}, {DEFAULT} {t[DEFAULT]['chunks_per_s']:.1f}; "
        f"best of {t['rounds']} round-robin rounds)"
    )
    width = max(len(r[0]) for r in rows)
    for label, value, target, ok in rows:
        verdict = "info" if ok is None else ("PASS" if ok else "FAIL")
        print(f"  {label:<{width}}  {value:>22}  {target:>10}  {verdict}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
