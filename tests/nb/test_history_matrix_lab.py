"""The HistoryMatrix widget in one real JupyterLab: ``%ragtt eval`` shows it, a click on a cell
whose diff the (bounded) state left out is answered by the kernel over ``model.send``, a
question's timeline too, and the click reaches Python as ``selected``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

import ragtt
from ragtt.views import history_matrix as hm

from .conftest import write_notebook
from .test_history_matrix import DATASET, build_flask
from .test_jupyterlab import READ_BACK, lab, run_all_cells

__all__ = ["lab"]


def test_the_kernel_answers_what_the_state_left_out(lab: str, tmp_path: Path, browser: Any) -> None:
    project = build_flask(tmp_path / "proj")
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(row) + "\n" for row in DATASET), encoding="utf-8")
    with ragtt.Project.open(project, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        wire = proj.evaluate(questions).to_dict()
        full, bounded = hm.build(proj, wire), hm.build(proj, wire, limit=1)
    states = np.frombuffer(full["cell"]["view"], dtype="u1").reshape(3, 4)
    embedded = int(np.frombuffer(bounded["diffs"]["cell"]["view"], dtype="<i4")[0])
    q, c = next((int(a), int(b)) for a, b in np.argwhere(states == hm.CHANGED) if a * 4 + b != embedded)
    write_notebook(
        tmp_path / "matrix.ipynb",
        [
            f"%load_ext ragtt_nb\nproj = %ragtt open {project}\nfrom ragtt_nb import HistoryMatrix\n"
            f"shown = %ragtt eval {questions}\n"
            "w = HistoryMatrix(shown.matrix, proj=proj, embed_limit=1)  # one diff: the rest from the kernel\nw",
        ],
    )
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        run_all_cells(page, f"{lab}/lab/tree/matrix.ipynb")
        page.wait_for_selector(".ragtt-history-matrix[data-painted]", timeout=120_000)
        widget = page.locator(".ragtt-history-matrix")
        canvas = widget.locator(".ragtt-hm-canvas")
        canvas.scroll_into_view_if_needed()
        box = canvas.bounding_box()
        geo = {k: float(canvas.get_attribute(f"data-{k}")) for k in ("left", "top", "cell-w", "cell-h")}
        y = box["y"] + geo["top"] + (q + 0.5) * geo["cell-h"]
        page.mouse.click(box["x"] + geo["left"] + (c + 0.5) * geo["cell-w"], y)
        page.wait_for_function(
            "() => document.querySelector('.ragtt-history-matrix').dataset.panel === 'diff'", timeout=60_000
        )
        assert widget.locator(".ragtt-chunk-diff .ragtt-cd-id").all_inner_texts() == [
            wire["query_ids"][q][c - 1],
            wire["query_ids"][q][c],
        ]
        deadline = time.monotonic() + 60
        while True:  # the trait syncs to the kernel asynchronously
            selected = page.evaluate(READ_BACK, "print(w.selected)")
            if selected == str({"question": q, "column": c}) or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert selected == str({"question": q, "column": c})
        page.mouse.click(box["x"] + 20, y)  # the question: its timeline, from the kernel too
        page.wait_for_function(
            "() => document.querySelector('.ragtt-history-matrix').dataset.panel === 'timeline'", timeout=60_000
        )
        assert widget.locator(".ragtt-timeline .ragtt-chunk").count() > 0
        page.evaluate("() => window.jupyterapp.serviceManager.sessions.shutdownAll()")
    finally:
        context.close()
