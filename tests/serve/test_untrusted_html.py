"""Untrusted text never runs: every ``_repr_html_`` in ragtt and ragtt_nb, and every HTML page
the server serves, rendered in Chromium over data full of payloads (documents, source names,
queries, suite names, assertion text), opens zero dialogs. The reprs and the pages are found
by walking the packages and the app's routes, so a new one without a case here fails."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.responses import HTMLResponse

import ragtt
import ragtt_nb
from ragtt.feeds.watch import WatchBatch
from ragtt.serve import create_app
from ragtt.temporal import AssertionStore, RetrievalQuery
from ragtt.timetravel.compare import compare_configs
from tests.nb.conftest import Offline
from tests.serve.conftest import live
from tests.temporal.conftest import NS, episode, make

PAYLOADS = ("<script>alert('script')</script>", "<img src=x onerror=alert('img')>", "<svg onload=alert('svg')>")
EVIL = " ".join(PAYLOADS)
SOURCE = "evil<img src=x onerror=alert('source')>.md"
QUERY = f"refund days {EVIL}"
SUITE = f"golden {EVIL}"
SHOWS_QUERY = {
    "ragtt.evaluation.matrix.HistoryMatrix",
    "ragtt.federation.results.FederatedResult",
    "ragtt.results.QueryResult",
    "ragtt.timetravel.diff.DiffReport",
    "ragtt.timetravel.regression.RegressionReport",
}


def _repr_classes() -> set[str]:
    """Every class in ragtt and ragtt_nb with an HTML repr (its own or inherited)."""
    found = set()
    for package in (ragtt, ragtt_nb):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if cls.__module__ == info.name and hasattr(cls, "_repr_html_"):
                    found.add(f"{cls.__module__}.{cls.__qualname__}")
    return found


@pytest.fixture(scope="module")
def evil(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A project whose documents, source names, queries and golden suite carry payloads, and
    every result object with an HTML repr built from it."""
    root = tmp_path_factory.mktemp("evil")
    docs = {SOURCE: f"# Refunds\n\nRefunds within 30 days. {EVIL}\n", "refund.md": f"Refunds within 30 days. {EVIL}\n"}
    out: dict[str, Any] = {"path": root / "proj"}
    with ragtt.Project.open(root / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        objects: dict[str, Callable[[], Any]] = {}
        first = proj.ingest_texts(docs)
        proj.snapshot("s1")
        then = proj.query(QUERY, generate=False)
        proj.ingest_texts({SOURCE: f"# Refunds\n\nRefunds within 14 days. {EVIL} <b>now</b>\n"})
        proj.snapshot("s2")
        now = proj.query(QUERY, generate=False)
        suite = proj.regression.capture([QUERY], SUITE)
        golden = suite.save(root / "golden.json")
        store = AssertionStore.open(root / "assertions.db", embedder=ragtt.HashEmbedder(64))
        episode(store)
        store.write_assertion(make("a1", f"the refund window is 30 days {EVIL}", 0, entity_id=SOURCE))
        asked = RetrievalQuery(NS, 10, query_text="refund window", strategy="bm25")
        other = ragtt.Project.open(root / "other", embedder=ragtt.HashEmbedder(), progress=False)
        other.ingest_texts({f"ticket {SOURCE}": f"Refund refused. {EVIL}\n", **docs})  # a duplicate text merges
        fed = ragtt.Federation.create(root / "fed", members={"proj": proj, "tickets": other})
        fed_then = fed.query(QUERY, generate=True)
        objects = {
            "ragtt.results.IngestReport": lambda: first,
            "ragtt.results.QueryResult": lambda: then,
            "ragtt.results.ReplayResult": lambda: proj.replay(then.query_id),
            "ragtt.results.Snapshot": lambda: proj.snapshots()[0],
            "ragtt.results.Snapshots": proj.snapshots,
            "ragtt.timetravel.diff.DiffReport": lambda: proj.diff(then.query_id, now.query_id),
            "ragtt.timetravel.lineage.LineageReport": lambda: proj.lineage(then.query_id, now.query_id),
            "ragtt.timetravel.drift.DriftReport": lambda: proj.drift("s1", "s2"),
            "ragtt.timetravel.snapshot_diff.SnapshotDiff": lambda: proj.snapshot_diff("s1", "s2"),
            "ragtt.timetravel.bisect.BisectReport": lambda: proj.bisect(then.query_id, "answer:days"),
            "ragtt.timetravel.regression.RegressionReport": lambda: proj.regression.run(golden),
            "ragtt.verify.VerifyReport": proj.verify,
            "ragtt.timetravel.compare.ConfigComparison": lambda: compare_configs(
                docs, ragtt.PipelineConfig(), ragtt.PipelineConfig(top_k=2), [QUERY], embedder=ragtt.HashEmbedder()
            ),
            "ragtt.temporal.results.RetrievalResult": lambda: store.retrieve(asked),
            "ragtt.temporal.results.AssembledContext": lambda: store.assemble_context(asked, 1000),
            "ragtt.retention.PruneReport": lambda: pruned_copy(root),
            "ragtt.timetravel.regression.GoldenSuite": lambda: suite,
            "ragtt.backup.BackupReport": lambda: proj.backup(root / f"backup-{len(list(root.iterdir()))}"),
            "ragtt.restore.RestoreReport": lambda: proj.restore(root / f"restored-{len(list(root.iterdir()))}"),
            "ragtt.feeds.stream.StreamReport": lambda: proj.ingest_stream([(f"{SOURCE}.stream", f"Streamed {EVIL}")]),
            "ragtt.feeds.watch.WatchBatch": lambda: WatchBatch(
                at=datetime.now(UTC),
                catch_up=False,
                index_version_before=1,
                index_version_after=2,
                added=[SOURCE],
                failed=[(SOURCE, EVIL)],
                snapshot=SUITE,
            ),
            "ragtt.evaluation.matrix.HistoryMatrix": lambda: proj.evaluate(
                ragtt.EvalDataset.from_records(
                    [{"question": QUERY, "reference_contexts": [f"Refunds within 30 days. {EVIL}"]}], name=SUITE
                ),
                judge=ragtt.LiteLLMJudge("openai/gpt-4o-mini", mock_response=EVIL),  # an unparseable verdict
            ),
            "ragtt.federation.results.FederatedResult": lambda: fed.replay(fed_then.query_id),
            "ragtt.federation.results.FederationDiff": lambda: fed.diff(fed_then.query_id, fed.query(QUERY).query_id),
            "ragtt.federation.results.FederationInfo": fed.info,
        }
        out.update(objects=objects, then=then.query_id, now=now.query_id)
        yield out
        fed.close()
        other.close()
        store.close()


def pruned_copy(root: Path) -> Any:
    """A prune's report, made on a copy: the other cases still need every snapshot."""
    shutil.copytree(root / "proj", root / "pruned")
    with ragtt.Project.open(root / "pruned", embedder=ragtt.HashEmbedder(), progress=False) as copy:
        report = copy.prune(max_snapshots=1)
    assert report.queries_pruned > 0
    return report


def _dialogs(o: Offline, html: str) -> list[str]:
    o.page.set_content(html, wait_until="load")
    o.page.evaluate("() => new Promise(r => setTimeout(r, 100))")  # let error/load handlers fire
    return list(o.dialogs)


@pytest.fixture
def offline(browser: Any) -> Iterator[Offline]:
    o = Offline(browser, allowed=("data:", "about:"))
    yield o
    o.context.close()


def test_every_html_repr_has_a_payload_case(evil: dict[str, Any]) -> None:
    assert _repr_classes() == set(evil["objects"])


def test_no_html_repr_runs_a_payload(evil: dict[str, Any], offline: Offline) -> None:
    assert _dialogs(offline, f"<div>{PAYLOADS[1]}</div>") == ["img"]  # the harness sees a payload that runs
    offline.dialogs.clear()
    for name, build in evil["objects"].items():
        html = build()._repr_html_()
        assert _dialogs(offline, html) == [], name
        if name in SHOWS_QUERY:  # escaped, not dropped: the reader sees the text as it was
            assert PAYLOADS[0] in offline.page.locator("body").inner_text(), name


def _html_routes(routes: list[Any]) -> set[str]:
    """The paths of the HTML routes, into included routers too (FastAPI 0.165 includes them lazily;
    the dashboard's and the docs' HTML routes carry their full paths)."""
    found = set()
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            found |= _html_routes(inner.routes)
        elif getattr(route, "response_class", None) is HTMLResponse:
            found.add(route.path)
    return found


def test_no_served_page_runs_a_payload(evil: dict[str, Any], browser: Any) -> None:
    app = create_app(evil["path"], embedder=ragtt.HashEmbedder())
    ready = {
        "/ui": ("/ui", ".ragtt-ui[data-ready]"),
        "/docs": ("/docs", ".opblock"),
        "/diff/{left}/{right}/html": (f"/diff/{evil['then']}/{evil['now']}/html", "table"),
    }
    assert _html_routes(app.routes) == set(ready)
    with live(app) as url:
        o = Offline(browser, allowed=(f"{url}/", "blob:", "data:"))
        try:
            for path, selector in ready.values():
                assert o.page.goto(url + path).status == 200, path
                o.page.wait_for_selector(selector, timeout=60_000)
                o.page.evaluate("() => new Promise(r => setTimeout(r, 100))")
                assert o.dialogs == [] and o.aborted == [], path
            o.page.goto(url + ready["/diff/{left}/{right}/html"][0])
            assert "<script>" in o.page.locator("body").inner_text()
        finally:
            o.context.close()


def test_docs_render_the_routes_with_no_request_off_the_server(evil: dict[str, Any], browser: Any) -> None:
    with live(create_app(evil["path"], embedder=ragtt.HashEmbedder())) as url:
        o = Offline(browser, allowed=(f"{url}/",))
        try:
            o.page.goto(f"{url}/docs")
            o.page.wait_for_selector(".opblock-summary-path", timeout=60_000)
            paths = set(o.page.locator(".opblock-summary-path").all_inner_texts())
            assert {"/query", "/snapshots", "/health"} <= {p.replace("\u200b", "") for p in paths}
            assert o.aborted == [] and o.errors == []
        finally:
            o.context.close()
