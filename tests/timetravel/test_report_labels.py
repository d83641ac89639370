"""One version label form in every report, and HTML reprs that survive JupyterLab (MathJax, table CSS)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import ragtt
from ragtt.results import Snapshot, iso_utc, version_label, version_names

DOCS = {
    "refund-policy.md": "Refunds: you can ask for a refund within 30 days of purchase. Prices start at $5 and $10.",
    "install.md": "Install with the shell prompt $ pip install flask and then run $ flask run.",
}


def _labelled(project: ragtt.Project) -> tuple[int, int]:
    project.ingest_texts(DOCS)
    first = project.snapshot("flask-1.0").index_version
    project.ingest_texts(
        {
            "refund-policy.md": "Refunds: you can ask for a refund within 14 days of purchase. "
            "Prices start at $5 and $10.",
            "new.md": "A new page about $HOME.",
        }
    )
    project.remove("install.md")
    return first, project.version


def test_version_label_names_a_snapshot_or_falls_back_to_the_number() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    snaps = [
        Snapshot("a", "auto-v6", 6, t0, 1, 1),
        Snapshot("b", "flask-1.0", 6, t0 + timedelta(1), 1, 1),
        Snapshot("c", "auto-v9", 9, t0 + timedelta(2), 1, 1),
        Snapshot("d", "rc", 7, t0, 1, 1),
        Snapshot("e", "final", 7, t0 + timedelta(3), 1, 1),
    ]
    names = version_names(reversed(snaps))
    assert names == {6: "flask-1.0", 7: "final", 9: "auto-v9"}  # a chosen name beats auto-v*; latest wins
    assert version_label(6, names) == "flask-1.0 (v6)" and version_label(8, names) == "v8"
    assert iso_utc(datetime(2026, 5, 1, 14, 0, tzinfo=UTC)) == "2026-05-01T14:00:00Z"


def test_reports_and_cli_lines_use_the_label(project: ragtt.Project) -> None:
    first, last = _labelled(project)
    assert project.version_label(first) == f"flask-1.0 (v{first})" and project.version_label(last) == f"v{last}"
    assert project.version_labels() == {first: "flask-1.0"}
    span = f"flask-1.0 (v{first}) -> v{last}"
    assert span in project.snapshot_diff("flask-1.0", last).to_text()
    drift = project.drift("flask-1.0", last)
    assert span in drift.to_text()
    html = drift._repr_html_()
    for source in drift.sources:  # the notebook table says what the CLI says, "removed (1 chunks)" included
        assert f"{source.source}: {source.summary()}" in drift.to_text() and source.summary() in html
    assert "removed (1 chunks)" in html and "n/a" not in html


def test_bisect_has_an_html_repr_with_predicate_versions_and_the_first_change(project: ragtt.Project) -> None:
    project.ingest_texts(DOCS)
    query = project.query("refund days", top_k=2, generate=False)
    project.ingest_texts({"other.md": "unrelated words about cats"})
    project.ingest_texts({"refund-policy.md": "Refunds within 14 days."})
    project.snapshot("flask-2.0")
    report = project.bisect(query.query_id, "chunk:" + query.chunks[0].chunk_id)
    assert report.first_version == project.version
    label = f"flask-2.0 (v{project.version})"
    assert f"first changed at {label}" in report.to_text()
    html = report._repr_html_()
    assert "Bisect" in html and "chunk:" + query.chunks[0].chunk_id in html and f"<b>{label}</b>" in html
    tried = re.findall(r"<tr><td>(v\d+|flask-2\.0 \(v\d+\))</td>", html)
    assert tried == [project.version_label(v) for v, _ in sorted(report.steps)] and len(tried) >= 2
    assert "tex2jax_ignore mathjax_ignore" in html


def test_html_reprs_keep_dollars_away_from_mathjax_and_left_align_text(project: ragtt.Project) -> None:
    first, last = _labelled(project)
    result = project.query("refund prices", generate=True)
    assert any("$5 and $10" in c.text for c in result.chunks)
    reports = [
        result,
        project.diff(result.query_id, project.replay(result.query_id).query_id),
        project.snapshots(),
        project.drift(first, last),
        project.snapshot_diff(first, last),
        project.ingest_texts({"x.md": "Costs $3 and $4."}),
    ]
    for report in reports:
        html = report._repr_html_()
        # Every report sits in one element MathJax skips, and its tables carry the class the CSS targets.
        assert html.count("tex2jax_ignore mathjax_ignore") == 1, type(report).__name__
        assert "<table>" not in html and ("<table" not in html or "<table class='ragtt-t'>" in html)
    css = reports[0]._repr_html_()
    # (0,2,2) beats JupyterLab's ":not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td" (0,2,1).
    assert ".ragtt-r table.ragtt-t td{" in css.replace(".ragtt-r table.ragtt-t th,", "")
    assert "text-align:left" in css


def test_claim_retrieval_html_shows_iso_windows_and_skips_mathjax(project: ragtt.Project) -> None:
    from ragtt.temporal import Assertion, Citation, Episode, RetrievalQuery

    store = project.assertions
    store.init_namespace("policy")
    start = datetime(2026, 5, 1, 12, 0, tzinfo=UTC).timestamp()
    store.write_episode(Episode("ep", "policy", start, "2026-05-01T12:00:00+00:00", "doc", "policy.md"))
    content = "Plans cost $5 and $10 a month."
    store.write_assertion(
        Assertion(
            id="price",
            namespace="policy",
            type="fact",
            content=content,
            valid_from=start,
            confidence=1.0,
            source_episode_id="ep",
            citations=(Citation("c", "ep", "policy.md", content),),
        )
    )
    html = store.retrieve(
        RetrievalQuery(namespace="policy", temporal_anchor=start + 60, query_text="plans cost", strategy="bm25")
    )._repr_html_()
    assert "[2026-05-01T12:00:00Z, open)" in html and "1.7779e+09" not in html
    assert "tex2jax_ignore mathjax_ignore" in html and "<table class='ragtt-t'>" in html and "$5 and $10" in html
