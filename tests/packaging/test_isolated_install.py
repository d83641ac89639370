"""The wheel as a user gets it: built by the real backend (hatchling and its jupyter-builder
hook, with the JS this checkout built: ``./dev test`` runs the one JS build first), installed
in a fresh virtualenv, and run with no Node on PATH.

The fresh virtualenv borrows the heavy third-party packages (jupyterlab, lancedb, ...) from the
test's own environment through a ``.pth`` line, so the check takes seconds, not a full install;
ragtt itself comes only from the wheel (the shared environment's editable ragtt is a ``.pth``
file of its own, which Python does not read in a folder a ``.pth`` line adds), and each check
asserts so. JupyterLab's own built assets come from that environment too (``JUPYTERLAB_DIR``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.nb.jupyter import running

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(sys.prefix)
BUNDLES = [
    f"{name}.{ext}" for name in ("timeline", "chunk_diff", "drift_scatter", "pdf_overlay") for ext in ("js", "css")
]
TIMEOUT = 240  # each step; the whole module runs in about a minute


def build_wheel(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """``python -m build --wheel`` (isolated, the real backend); the hook's npm step is skipped,
    so the wheel carries the JS already built in ``source`` and its ensured-targets check it."""
    env = {**os.environ, "HATCH_JUPYTER_BUILDER_SKIP_NPM": "1"}
    return subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(source)],
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = build_wheel(REPO, out)
    assert done.returncode == 0, (
        f"the wheel did not build (run ./dev build first):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    )
    (built,) = out.glob("ragtt-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A fresh virtualenv holding the wheel, and the environment to run it in: PATH is the
    virtualenv's bin only (no Node), no PYTHONPATH, Jupyter's user folders in the temp dir."""
    home = tmp_path_factory.mktemp("isolated")
    prefix = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True, timeout=TIMEOUT)
    python = prefix / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(purelib) / "shared_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        timeout=TIMEOUT,
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH")}
    env.update(
        PATH=str(prefix / "bin"),
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_DIR=str(SHARED / "share" / "jupyter" / "lab"),
        RAGTT_EMBEDDER="hash",
    )
    return {"prefix": prefix, "python": python, "env": env, "home": home}


def run_in(venv: dict[str, Any], *args: str) -> str:
    done = subprocess.run(
        [str(venv["python"]), *args],
        capture_output=True,
        text=True,
        env=venv["env"],
        cwd=venv["home"],
        timeout=TIMEOUT,
    )
    output = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)  # the lists colour "enabled"
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{output[-4000:]}"
    return output


def test_wheel_ships_the_js_the_template_and_both_extensions(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in BUNDLES:
        assert f"ragtt/views/static/{name}" in names
    assert not any(n.startswith("js/") for n in names)  # sources stay in the repository
    data = "ragtt-0.1.0.data/data/"
    template = "share/jupyter/nbconvert/templates/ragtt/"
    for part in (
        "conf.json",
        "index.html.j2",
        "static/require.js",
        "static/embed-amd.js",
        "static/anywidget.js",
        "static/THIRD_PARTY_LICENSES.md",
    ):
        assert f"ragtt_nb/templates/ragtt/{part}" in names and data + template + part in names
    lab = data + "share/jupyter/labextensions/ragtt/"
    assert {lab + "package.json", lab + "install.json"} <= names
    assert any(n.startswith(lab + "static/") and n.endswith(".js") for n in names)
    assert data + "etc/jupyter/jupyter_server_config.d/ragtt.json" in names


def test_a_wheel_without_a_bundle_fails_to_build(tmp_path: Path) -> None:
    # lonboard's habit: the build stops rather than ship a wheel without its JS
    source = tmp_path / "src"
    for part in ("ragtt", "ragtt_nb", "labextension", "jupyter-config"):
        shutil.copytree(REPO / part, source / part, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    for part in ("pyproject.toml", "README.md", "package.json"):
        shutil.copy2(REPO / part, source / part)
    (source / "ragtt" / "views" / "static" / "timeline.js").unlink()
    done = build_wheel(source, tmp_path / "dist")
    assert done.returncode != 0 and not list((tmp_path / "dist").glob("*.whl"))
    assert "ragtt/views/static/timeline.js" in done.stdout + done.stderr


def test_ragtt_runs_from_the_wheel_with_no_node(venv: dict[str, Any]) -> None:
    assert shutil.which("node", path=venv["env"]["PATH"]) is None
    code = (
        "import ragtt, ragtt_nb, ragtt_nb.server, jupyterlab; from ragtt.views import static_file;"
        "print(ragtt.__file__); print(ragtt_nb.__file__); print(static_file('timeline.js')); print(jupyterlab.__file__)"
    )
    ragtt_file, nb_file, bundle, jupyterlab_file = run_in(venv, "-c", code).split()
    prefix = str(venv["prefix"])
    assert ragtt_file.startswith(prefix) and nb_file.startswith(prefix) and bundle.startswith(prefix)
    assert jupyterlab_file.startswith(sysconfig.get_paths()["purelib"])  # borrowed, as intended


def test_both_extensions_are_listed_enabled_and_ok(venv: dict[str, Any]) -> None:
    labext = run_in(venv, "-m", "jupyterlab.labextensions", "list")
    home = str(venv["prefix"] / "share" / "jupyter" / "labextensions")
    assert home in labext, labext
    line = next((ln for ln in labext.splitlines() if ln.split()[:1] == ["ragtt"]), "")
    assert "enabled" in line and "OK" in line and "python, ragtt" in line, labext
    server = run_in(venv, "-m", "jupyter_server.extension.serverextension", "list")
    assert str(venv["prefix"] / "etc" / "jupyter") in server, server
    assert any(ln.split()[:2] == ["ragtt_nb.server", "enabled"] for ln in server.splitlines()), server
    assert any("ragtt_nb.server" in ln and "OK" in ln for ln in server.splitlines()), server


def test_browser_check_passes(venv: dict[str, Any]) -> None:
    # Its browser half installs Playwright with npm (no Node here): the server half is this
    # call, the page itself the next test's Chromium.
    args = ["-m", "jupyterlab.browser_check", "--no-browser-test"]
    out = run_in(venv, *args, *(["--allow-root"] if os.geteuid() == 0 else []))
    assert "ragtt_nb.server" in out, out[-3000:]


@pytest.fixture
def lab(venv: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.delenv("PYTHONPATH", raising=False)  # the server's environment is the virtualenv's
    token = "isolated-install-token"
    args = [f"--IdentityProvider.token={token}", "--LabApp.expose_app_in_browser=True", "--LabApp.news_url="]
    command = [str(venv["python"]), "-m", "jupyterlab"]
    with running("jupyter-lab", tmp_path, tmp_path / "state", args, env=venv["env"], command=command) as url:
        yield f"{url}/lab?token={token}"


@pytest.mark.browser
def test_lab_shows_the_history_panel_from_the_wheel(lab: str, browser: Any) -> None:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(lab)
        page.wait_for_function("window.jupyterapp && window.jupyterapp.shell", timeout=120_000)
        page.wait_for_selector("#ragtt-history", state="attached", timeout=60_000)
        listed = page.evaluate("() => window.jupyterapp.commands.listCommands().filter(c => c.startsWith('ragtt:'))")
    finally:
        page.close()
    assert "ragtt:open-history" in listed and not errors, (listed, errors)
