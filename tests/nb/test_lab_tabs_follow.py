"""The "RAG history" sidebar and its tabs in a real JupyterLab, as a newcomer used them: each
tab's title names what it shows (two timelines differ), a "Diff with now" replay is listed
under the query it asked again, the sidebar lists a project again after a magic in a notebook
wrote to it (no reload, no polling), and a matrix tab shows the evaluation it was opened on,
before and after a reload, though the same dataset and plan were evaluated later at more
versions."""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path
from typing import Any

from .conftest import settle
from .test_lab_sidebar import (
    EVIL_DATASET,
    EVIL_PDF,
    EVIL_QUERY,
    PANEL_JS,
    RAGTT_TABS_JS,
    SETTLED_MS,
    TOKEN,
    lab,
    lab_root,
    open_lab,
    tab,
)

__all__ = ["lab", "lab_root"]

# The current main-area widget's title: as set, and as the tab bar draws it (label, tooltip).
TITLE_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const tab = document.querySelector('.lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current');
  return {label: w.title.label, caption: w.title.caption,
          shown: tab.querySelector('.lm-TabBar-tabLabel').textContent, tip: tab.title};
}"""

# Runs `code` in the notebook's active cell once its kernel answered, bounded; its outputs.
RUN_CELL_JS = """async ([code, ms]) => {
  const app = window.jupyterapp;
  const nb = Array.from(app.shell.widgets('main')).find((w) => w.content && w.sessionContext);
  app.shell.activateById(nb.id);
  const late = (what) => new Promise((_, no) => setTimeout(() => no(new Error(what)), ms));
  await Promise.race([nb.sessionContext.ready.then(() => nb.sessionContext.session.kernel.info), late('no kernel')]);
  const cell = nb.content.activeCell;
  cell.model.sharedModel.setSource(code);
  await Promise.race([app.commands.execute('notebook:run-cell'), late('the cell did not finish')]);
  return cell.model.outputs.toJSON();
}"""

ROW_TEXTS_JS = "() => [...document.querySelectorAll('#ragtt-history .ragtt-history-row')].map((r) => r.innerText)"


def cut(text: str) -> str:
    """A tab label's text: at most 40 characters, its start and its last 15 (tab.ts cutMiddle)."""
    return text if len(text) <= 40 else f"{text[:24].rstrip()}…{text[-15:].lstrip()}"


def title(page: Any) -> dict[str, str]:
    return dict(page.evaluate(TITLE_JS))


def run_cell(page: Any, code: str) -> list[dict[str, Any]]:
    outputs = list(page.evaluate(RUN_CELL_JS, [code, 120_000]))
    assert not [o for o in outputs if o.get("output_type") == "error"], outputs
    return outputs


def shot(page: Any, path: Path) -> None:
    """The whole 1400x900 window: the tab bar, the sidebar and the tab."""
    settle(page)
    page.screenshot(path=str(path))


def test_tabs_are_named_for_what_they_show_and_a_replay_belongs_to_its_query(
    lab: str, browser: Any, screens: Path
) -> None:
    context, page, dialogs = open_lab(browser, lab)
    try:
        panel = page.locator("#ragtt-history")
        rows = panel.locator(".ragtt-history-row")

        # two timelines: each tab names its query (the label cut, the tooltip whole)
        rows.filter(has_text="register a blueprint").click()
        tab(page, "timeline", ".ragtt-timeline")
        blueprint = title(page)
        assert blueprint["label"] == blueprint["shown"] == "Timeline · how do I register a blueprint"
        assert blueprint["tip"] == blueprint["caption"]
        assert blueprint["caption"].startswith(
            "Timeline · how do I register a blueprint\nproject: flask\n%ragtt timeline "
        )
        rows.filter(has_text="application context teardown").click()
        tab(page, "timeline", ".ragtt-timeline")
        assert title(page)["shown"] == "Timeline · application context teardown"
        rows.filter(has_text="onerror").click()  # the query with markup: its title is text
        tab(page, "timeline", ".ragtt-timeline")
        evil = title(page)
        assert evil["shown"] == f"Timeline · {cut(EVIL_QUERY)}" and evil["caption"].startswith(
            f"Timeline · {EVIL_QUERY}\n"
        )

        # "Diff with now" on the first question: "Diff · question · then → now"; its replay is
        # listed under that question, not as a second question without an answer
        rows.filter(has_text="register a blueprint").click()
        tab(page, "timeline", ".ragtt-timeline")
        latest = page.evaluate(f"() => {PANEL_JS}.latest")
        panel.get_by_role("button", name="diff the selected query with a replay now").click()
        diff = tab(page, "chunk_diff", ".ragtt-chunk-diff")
        named = title(page)
        then, now = diff.locator(".ragtt-cd-id").all_inner_texts()
        assert re.fullmatch(
            rf"Diff · how do I register a blueprint · v\d+ → v{latest} \(now\)\nproject: flask\n"
            rf"%ragtt diff --left {then} --right {now}",
            named["caption"],
        ), named
        whole = named["caption"].splitlines()[0].removeprefix("Diff · ")
        assert named["shown"] == f"Diff · {cut(whole)}"
        assert named["shown"].startswith("Diff · how do I register") and named["shown"].endswith(f"v{latest} (now)")
        page.wait_for_function(  # the sidebar lists the project again by itself (bounded)
            "() => [...document.querySelectorAll('#ragtt-history .ragtt-history-replays')].length > 0",
            timeout=60_000,
        )
        page.evaluate(f"() => {PANEL_JS}.refresh()")  # and any listing shows the same
        texts = page.evaluate(ROW_TEXTS_JS)
        asked = [t for t in texts if t.startswith("how do I register a blueprint\n")]
        # one click, one replay: the replay answers, so the diff logs no replay of it to generate one
        assert len(asked) == 1 and "(no answer)" not in asked[0] and "↻ 1 replay · " in asked[0], "\n~~~\n".join(texts)
        assert panel.locator(".ragtt-history-row[data-kind='replay']", has_text="register a blueprint").count() == 0
        shot(page, screens / "lab_replay_under_its_query.png")

        # a drift and a PDF: the versions' names, the source's name
        for version in ("3", "8"):
            panel.locator(f".ragtt-history-snapshots li[data-version='{version}'] input").check()
        panel.get_by_role("button", name="open the drift between the two picked versions").click()
        tab(page, "drift_scatter", ".ragtt-drift-scatter[data-painted]")
        drift = title(page)
        assert re.fullmatch(r"Drift · v3 \S+ → v8 with-payloads", drift["caption"].split("\n")[0]), drift
        panel.locator(".ragtt-history-pdf button").click()
        tab(page, "pdf_overlay", ".ragtt-pdf-overlay[data-page]")
        pdf = title(page)
        assert pdf["caption"].startswith(f"PDF · {EVIL_PDF}\n") and pdf["shown"] == f"PDF · {cut(EVIL_PDF)}"
        labels = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tabLabel").all_inner_texts()
        timelines = [x for x in labels if x.startswith("Timeline · ")]
        assert len(timelines) == len(set(timelines)) == 3, labels  # no two alike
        page.hover(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")
        shot(page, screens / "lab_tab_titles.png")

        assert page.evaluate("window.__pwned") is None and dialogs == []
        assert page.locator(".lm-TabBar img, #ragtt-history img").count() == 0
        page.evaluate("() => window.jupyterapp.serviceManager.sessions.shutdownAll()")
    finally:
        context.close()


def matrix_tabs(page: Any) -> list[tuple[str, str]]:
    """Each matrix tab's %ragtt line and the counts its matrix shows ("2 questions × 5 versions")."""
    return sorted(
        page.evaluate(
            """() => [...document.querySelectorAll('.ragtt-tab')]
              .filter((t) => t.querySelector('.ragtt-tab-host[data-widget=history_matrix]'))
              .map((t) => [t.querySelector('.ragtt-tab-line').textContent,
                           t.querySelector('.ragtt-hm-counts')?.textContent ?? ''])"""
        )
    )


def at_count(line: str) -> int:
    words = shlex.split(line)
    return len(words[words.index("--at") + 1].split(","))


def test_the_sidebar_follows_the_kernels_writes_and_a_matrix_tab_keeps_its_evaluation(
    lab: str, lab_root: dict[str, Any], browser: Any, screens: Path
) -> None:
    context, page, dialogs = open_lab(browser, lab)
    try:
        panel = page.locator("#ragtt-history")
        evaluation = panel.locator(f".ragtt-history-evaluation[data-evaluation='{lab_root['evaluation']}']")
        assert "2 questions × 5 versions" in evaluation.inner_text()
        evaluation.locator("button").click()
        matrix = tab(page, "history_matrix", ".ragtt-history-matrix[data-painted]")
        assert matrix.locator(".ragtt-hm-counts").inner_text() == "2 questions × 5 versions"
        named = title(page)
        assert named["caption"].startswith(f"Matrix · {EVIL_DATASET} (@ 5 versions)\n"), named
        assert (
            named["shown"] == f"Matrix · {cut(f'{EVIL_DATASET} (@ 5 versions)')}" and "(@ 5 versions)" in named["shown"]
        )

        # magics in the notebook write: the sidebar lists them, with no reload
        flask, dataset = shlex.quote(str(lab_root["root"] / "flask")), shlex.quote(str(lab_root["dataset"]))
        run_cell(page, f"%load_ext ragtt_nb\n%ragtt open {flask}\n%ragtt eval {dataset} --at versions --table")
        more = page.wait_for_function(  # the same dataset and plan at more versions: the same row, more columns
            f"""() => {{ const e = document.querySelector(
                  "#ragtt-history .ragtt-history-evaluation[data-evaluation='{lab_root["evaluation"]}']");
                const n = e && /× (\\d+) versions/.exec(e.textContent);
                return n && Number(n[1]) > 5 && Number(n[1]); }}""",
            timeout=60_000,
        ).json_value()
        run_cell(page, f"%ragtt eval {dataset} --top-k 3 --at latest --table")
        page.wait_for_function(
            "() => document.querySelectorAll('#ragtt-history .ragtt-history-evaluation').length === 2",
            timeout=60_000,
        )
        # two evaluations of one dataset name: their titles say what tells them apart (both read
        # the dataset's name alone, the line below them the only difference)
        titles = panel.locator(".ragtt-history-evaluation button").all_inner_texts()
        assert sorted(titles) == [f"{EVIL_DATASET} · vector top 3", f"{EVIL_DATASET} · vector top 4"], titles
        run_cell(page, "%ragtt query how are sessions signed")
        page.wait_for_function(
            "() => document.querySelector('#ragtt-history .ragtt-history-row .ragtt-history-text')"
            "?.textContent === 'how are sessions signed'",
            timeout=60_000,
        )
        shot(page, screens / "lab_sidebar_after_magics.png")

        # the open tab still shows the evaluation it was opened on; the row opens the larger one
        assert matrix.locator(".ragtt-hm-counts").inner_text() == "2 questions × 5 versions"
        evaluation.locator("button").click()
        wider = tab(page, "history_matrix", ".ragtt-history-matrix[data-painted]")
        assert wider.locator(".ragtt-hm-counts").inner_text() == f"2 questions × {more} versions"
        assert title(page)["caption"].startswith(f"Matrix · {EVIL_DATASET} · vector top 4 (@ {more} versions)\n")
        shown = matrix_tabs(page)
        assert sorted(at_count(line) for line, _ in shown) == [5, more], shown
        assert all(counts == f"2 questions × {at_count(line)} versions" for line, counts in shown), shown

        # reload: each tab comes back showing exactly its own evaluation
        saved_js = """(n) => fetch('/lab/api/workspaces/default', {headers: {Authorization: 'token ' + n}})
          .then((r) => r.json()).then((w) => {
            const main = JSON.stringify((w.data['layout-restorer:data'] || {}).main || {});
            return Object.keys(w.data).filter((k) => k.startsWith('ragtt:') && main.includes(JSON.stringify(k))).length;
          })"""
        opened = page.evaluate(RAGTT_TABS_JS)
        deadline = time.monotonic() + 30
        while page.evaluate(saved_js, TOKEN) < len(opened) and time.monotonic() < deadline:
            page.wait_for_timeout(500)
        page.reload(wait_until="commit", timeout=120_000)
        page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=120_000)
        page.evaluate("() => window.jupyterapp.restored")
        assert page.evaluate(RAGTT_TABS_JS) == opened
        page.wait_for_function(
            """() => { const tabs = [...document.querySelectorAll('.ragtt-tab-host[data-widget=history_matrix]')];
                       return tabs.length === 2 && tabs.every((h) => h.dataset.state === 'ready'
                         && h.querySelector('.ragtt-hm-counts')?.textContent); }""",
            timeout=SETTLED_MS,
            polling=500,
        )
        restored = matrix_tabs(page)
        assert restored == shown, {"before": shown, "after": restored}
        assert sorted(at_count(line) for line, _ in restored) == sorted([5, more])
        titles = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab").evaluate_all("ts => ts.map((t) => t.title)")
        assert {t.split("\n")[0] for t in titles if t.startswith("Matrix · ")} == {
            f"Matrix · {EVIL_DATASET} (@ 5 versions)",
            f"Matrix · {EVIL_DATASET} · vector top 4 (@ {more} versions)",  # opened once a namesake was listed
        }
        # the tab opened on 5 versions, current (clicked until it is: a restored layout may still move)
        five = '.lm-DockPanel-tabBar .lm-TabBar-tab[title*="(@ 5 versions)"]'
        deadline = time.monotonic() + 30
        while page.locator(f"{five}.lm-mod-current").count() == 0 and time.monotonic() < deadline:
            page.locator(five).click()
            page.wait_for_timeout(500)
        counts = tab(page, "history_matrix", ".ragtt-hm-counts")
        assert counts.inner_text() == "2 questions × 5 versions"
        shot(page, screens / "lab_matrix_tab_restored.png")

        assert page.evaluate("window.__pwned") is None and dialogs == []
        page.evaluate("() => window.jupyterapp.serviceManager.sessions.shutdownAll()")
    finally:
        context.close()
