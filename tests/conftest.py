from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("RUST_LOG", "error")

import ragtt

# An index on S3 mirrors the versions it reads (ragtt/index/cache.py): into a folder of the
# session's own (crash children inherit it), never the user's cache folder.
_INDEX_CACHE = None if "RAGTT_INDEX_CACHE" in os.environ else tempfile.mkdtemp(prefix="ragtt-index-cache-")
if _INDEX_CACHE is not None:
    os.environ["RAGTT_INDEX_CACHE"] = _INDEX_CACHE

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


# The browser tests' screenshots go to one folder per run: $RAGTT_SCREENSHOTS, else a temporary
# folder that outlives the run (pytest prunes its own after three runs). The process that runs
# pytest makes it before any worker starts, so parallel workers (they inherit the environment)
# all save into it, and that process names it at the end.
SCREENS_ENV = "RAGTT_SCREENSHOTS"
_SCREENS_MADE = SCREENS_ENV not in os.environ
if _SCREENS_MADE:
    os.environ[SCREENS_ENV] = tempfile.mkdtemp(prefix="ragtt-screens-")
SCREENS = Path(os.environ[SCREENS_ENV])

# Parallel runs (pytest-xdist; `./dev test` runs `-n auto --dist loadfile`): a file's tests run
# on one worker, in order, so a module's fixtures (the `backend` parameters, a module's
# project) are built once and a module's closing checks see all of its tests. Each worker
# starts its own servers (PostgreSQL, moto, Azurite, Phoenix, Chromium) on free loopback ports
# in folders of its own and builds its own session fixtures; the index cache above is shared,
# which it is made for (processes share it safely).


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if _is_worker(config):
        return
    shots = sorted(p.name for p in SCREENS.glob("*.png"))
    if shots:
        terminalreporter.write_line(f"ragtt widget screenshots (1400x900): {SCREENS} ({', '.join(shots)})")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _is_worker(session.config):
        return  # the folders are the run's, not this worker's: the controlling process removes them
    if _INDEX_CACHE is not None:
        shutil.rmtree(_INDEX_CACHE, ignore_errors=True)
    if _SCREENS_MADE and SCREENS.is_dir() and not any(SCREENS.iterdir()):
        SCREENS.rmdir()


def corpus(*parts: str) -> Path:
    """A path inside ../shared/corpora; fails (never skips) with where it was expected."""
    path = CORPORA.joinpath(*parts)
    if not path.exists():
        pytest.fail(
            f"test corpus not found: expected {path} (the shared corpora live beside the repo in ../shared/corpora)"
        )
    return path


def flask_releases() -> list[Path]:
    root = corpus("evolving", "flask")
    return sorted(p for p in root.iterdir() if p.is_dir())


def release_label(release: Path) -> str:
    """A Flask release folder's label: 2018-04-26_flask-1.0 -> flask-1.0."""
    return release.name.split("_", 1)[1]


def ingest_releases(proj: ragtt.Project, labels: Iterable[str]) -> None:
    """Ingest the Flask releases named ``labels``, oldest first, each snapshot under its label."""
    wanted = set(labels)
    for release in flask_releases():
        if release_label(release) in wanted:
            proj.ingest(release)
            proj.snapshot(release_label(release))


@pytest.fixture
def project(tmp_path: Path) -> Iterator[ragtt.Project]:
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        yield proj


@pytest.fixture
def open_project(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Open projects under tmp_path with the hash embedder; all closed at teardown."""
    opened: list[ragtt.Project] = []

    from tests.backends import events_uri, index_args

    def _open(name: str = "proj", **kwargs):  # type: ignore[no-untyped-def]
        kwargs.setdefault("embedder", ragtt.HashEmbedder())
        kwargs.setdefault("progress", False)
        kwargs.setdefault("events_uri", events_uri(tmp_path / name))  # the module's backend, if it has one
        for key, value in index_args(tmp_path / name).items():
            kwargs.setdefault(key, value)
        proj = ragtt.Project.open(tmp_path / name, **kwargs)
        opened.append(proj)
        return proj

    yield _open
    for proj in opened:
        proj.close()


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A throwaway PostgreSQL server for the whole session (started on first use)."""
    from tests.backends import postgres_server

    with postgres_server() as uri:
        yield uri


@pytest.fixture(scope="session")
def s3() -> Iterator[dict[str, str]]:
    """An S3-compatible server (moto) on loopback for the whole session; its storage_options."""
    from tests.backends import s3_server

    with s3_server() as options:
        yield options


@pytest.fixture(scope="session")
def azure() -> Iterator[dict[str, str]]:
    """Azurite, the Azure Blob emulator, on loopback for the whole session; its storage_options."""
    from tests.backends import azure_server

    with azure_server() as options:
        yield options


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run a storage-facing module against both event-log backends (see tests/backends.py)."""
    from tests.backends import backend_for

    with backend_for(request) as name:
        yield name


# One Chromium for the whole session: two sync Playwright instances cannot share a thread, so
# every browser test (tests/nb, tests/serve) asks for this one fixture.
@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: install it with `apt-get install -y chromium` (./dev test does this)"
        )
    from playwright.sync_api import expect, sync_playwright

    # expect()'s retrying assertions wait 5 s by default: too short on a loaded 2-core CI running
    # JupyterLab, Postgres and Chromium at once. Bounded still: a real defect fails in 30 s.
    expect.set_options(timeout=30_000)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()
