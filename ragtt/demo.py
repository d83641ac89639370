"""The guided demo: three releases of the bundled sample, a query, its replay, and the diff.

``ragtt demo`` (and the README's first command) runs it offline on the default embedder.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

__all__ = ["SAMPLE", "run_demo", "sample_releases"]

SAMPLE = Path(__file__).parent / "sample"
QUESTION = "How many days do I have to ask for a refund?"


def sample_releases() -> list[Path]:
    """The bundled sample's release folders, oldest first."""
    return sorted(p for p in SAMPLE.iterdir() if p.is_dir() and p.name.startswith("release-"))


def run_demo(out: Path, *, embedder: str | None = None) -> int:
    import ragtt

    started = time.perf_counter()
    out = Path(out)
    project_dir = out / "project"
    if project_dir.exists():
        shutil.rmtree(project_dir)  # the demo always tells the same story from the start
    out.mkdir(parents=True, exist_ok=True)
    chosen = ragtt.HashEmbedder() if embedder == "hash" else None

    def say(text: str = "") -> None:
        print(text, flush=True)

    with ragtt.Project.open(project_dir, embedder=chosen, progress=False) as proj:
        releases = sample_releases()
        say(f"ragtt demo: {len(releases)} releases of the Nimbus Notes policies -> {project_dir}")
        say(f"embedder: {proj.embedder.model_id}")
        first = proj.ingest(releases[0])
        proj.snapshot(releases[0].name)
        say(f"\n[1] ingest {releases[0].name}: {first.summary()}")
        then = proj.query(QUESTION)
        say(f"\n[2] query: {QUESTION!r}  (query id {then.query_id}, index v{then.index_version})")
        for chunk in then.chunks[:2]:
            say(f"    #{chunk.rank} {chunk.score:.3f} {chunk.source}: {_preview(chunk.text)}")
        say("    " + then.answer.replace("\n", "\n    ") if then.answer else "")
        for release in releases[1:]:
            report = proj.ingest(release)
            proj.snapshot(release.name)
            say(f"\n[3] ingest {release.name}: {report.summary()}")
        now = proj.query(QUESTION)
        say(f"\n[4] same query today (index v{now.index_version}):")
        say("    " + (now.answer or "").replace("\n", "\n    "))
        replayed = proj.replay(then.query_id, generate=True)
        verdict = "identical to" if replayed.matches_original else "DIFFERENT from"
        say(f"\n[5] replay of {then.query_id} at v{replayed.index_version}: retrieval {verdict} the original")
        diff = proj.diff(then.query_id, now.query_id)
        say("\n[6] then vs now:")
        say(diff.to_text())
        report_path = out / "report.html"
        report_path.write_text(diff.to_html(), encoding="utf-8")
        proj.events.frame().write_csv(out / "events.csv")
        say(f"\nreport: {report_path} ({report_path.stat().st_size:,} bytes, opens offline)")
        say(f"events: {out / 'events.csv'}; project: {project_dir}")
        say(f"done in {time.perf_counter() - started:.1f} s")
        return 0 if replayed.matches_original else 1


def _preview(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat[:width] + ("…" if len(flat) > width else "")
