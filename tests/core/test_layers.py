"""The house plan's arrows, read from the source: every import statement of every module in
``ragtt`` (inside functions too, where the heavy ones live), and every SQL statement it runs.

- ``ragtt`` never imports ``ragtt_nb``, IPython, ipywidgets or anywidget: the core must stay
  usable without Jupyter (the widgets' state lives in ``ragtt.views``).
- Front ends (``ragtt.cli``, ``ragtt.serve``, ``ragtt.serve_mcp``, ``ragtt.verbs``) may import the
  core; the core never imports a front end.
- SQL runs only in the store packages: ``ragtt.events`` (the log) and ``ragtt.temporal`` (the
  assertion store, its own SQLite database), through ``ragtt._sqlite``'s connections.

A walk over the AST rather than import-linter: the rules are three, the SQL one is no import
contract, and a failure here names the file and line to fix.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ragtt"

NOTEBOOK_STACK = ("ragtt_nb", "IPython", "ipywidgets", "anywidget")
FRONT_ENDS = ("ragtt.cli", "ragtt.serve", "ragtt.serve_mcp", "ragtt.verbs")
SQL_HOMES = (
    "ragtt.events",  # the event log, in SQLite or Postgres
    "ragtt.temporal",  # the assertion store: its own SQLite database (sqlite-vec, FTS5)
    "ragtt._sqlite",  # the connection helper both stores open through: PRAGMAs only
)
DRIVERS = ("sqlite3", "pysqlite3", "psycopg", "adbc_driver_postgresql", "adbc_driver_manager", "sqlite_vec")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def within(name: str, packages: tuple[str, ...] | set[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def modules() -> list[tuple[str, Path, ast.Module]]:
    return [(module_name(p), p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(PACKAGE.rglob("*.py"))]


MODULES = modules()


def imports(module: str, path: Path, tree: ast.Module) -> list[tuple[int, str]]:
    """(line, imported module) for every import, relative ones resolved; ``from m import x``
    yields ``m`` and ``m.x`` (x may be a submodule)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, *([node.module] if node.module else [])])
            found += [(node.lineno, base)] + [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return found


def runs_sql(tree: ast.Module) -> list[int]:
    """Lines that execute SQL text (``.execute*("...")``) or import a database driver."""
    lines = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("execute", "executemany", "executescript")
            and node.args
            and isinstance(node.args[0], ast.Constant | ast.JoinedStr)
        ):
            lines.append(node.lineno)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(n.split(".")[0] in DRIVERS for n in names):
                lines.append(node.lineno)
    return sorted(lines)


def test_the_walk_sees_the_package() -> None:
    names = {m for m, _, _ in MODULES}
    assert {"ragtt", "ragtt.project", "ragtt.views.timeline", "ragtt.verbs.model", "ragtt.serve.ui"} <= names
    board = next((m, p, t) for m, p, t in MODULES if m == "ragtt.views.dashboard")
    assert "ragtt.views.timeline" in {name for _, name in imports(*board)}  # imported inside a function


def test_ragtt_never_imports_the_notebook_stack() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for module, path, tree in MODULES
        for line, name in imports(module, path, tree)
        if name.split(".")[0] in NOTEBOOK_STACK
    ]
    assert bad == []


def test_ragtt_does_not_name_ragtt_nb() -> None:
    """Not even in a string or a comment (an importlib call, a path): ``grep -rn ragtt_nb ragtt/``."""
    named = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted(PACKAGE.rglob("*"))
        if path.is_file() and path.suffix in (".py", ".md", ".txt", ".toml", ".json", ".html", ".css", ".js")
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if "ragtt_nb" in line
    ]
    assert named == []


def test_the_core_never_imports_a_front_end() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for module, path, tree in MODULES
        if not within(module, FRONT_ENDS)
        for line, name in imports(module, path, tree)
        if within(name, FRONT_ENDS)
    ]
    assert bad == []


def test_sql_runs_only_in_the_store_packages() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line}"
        for module, path, tree in MODULES
        if not within(module, SQL_HOMES)
        for line in runs_sql(tree)
    ]
    assert bad == []


def test_the_rules_catch_a_violation() -> None:
    """What the walks above report, on a module that breaks all three rules."""
    tree = ast.parse(
        "import sqlite3\n"
        "def f(conn):\n"
        "    from ragtt_nb import Timeline\n"
        "    from ..verbs import VERBS\n"
        "    return conn.execute('SELECT 1')\n"
    )
    path = PACKAGE / "index" / "fake.py"
    found = dict(imports("ragtt.index.fake", path, tree))
    assert found[3] == "ragtt_nb.Timeline" and found[4] == "ragtt.verbs.VERBS"
    assert runs_sql(tree) == [1, 5]
