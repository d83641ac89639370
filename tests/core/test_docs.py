"""The docs stay true and readable: every path, module and name they cite exists, the README
and the architecture stay short, no paragraph runs long, and nothing points outside the
repository.

Every Markdown file under docs/ is checked (found at collection time, so a new guide is
covered with no change here), with README.md and bench/README.md.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

import ragtt

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").rglob("*.md")])
LINE_LIMITS = {"README.md": 250, "docs/ARCHITECTURE.md": 250}  # fewer lines than this
MAX_PARAGRAPH_WORDS = 150

# The folders of the repository a doc cites paths in (a path elsewhere, like a project's own
# `lancedb/` or a user's `docs/` folder in an example, is not a reference to the tree).
TREE_ROOTS = ("ragtt", "ragtt_nb", "tests", "bench", "docs", "js", "notebooks", ".ci")
PATH = re.compile(r"(?<![\w./~:}-])((?:" + "|".join(re.escape(r) for r in TREE_ROOTS) + r")/[\w./*-]*)")
DOTTED = re.compile(r"(?<![\w.])(ragtt(?:_nb)?(?:\.\w+)+)")
CLASS_ATTR = re.compile(r"(?<![\w.])([A-Z]\w*)\.([a-z_]\w*)")
PROJ_ATTR = re.compile(r"(?<![\w.])proj\.([a-z_]\w*)")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
FILE_SUFFIXES = (".json", ".py", ".md", ".db", ".toml", ".html", ".ipynb", ".png", ".parquet", ".arrows")

# What points outside the repository, or belongs in a tracker or a results file, not a doc.
OUTSIDE = {
    "a parent-relative path": re.compile(r"\.\./"),
    "the shared folder beside the repository": re.compile(r"(?<![\w-])shared/"),
    "a machine's work folder": re.compile(r"(?<![\w.])/work/"),
    "a document outside the repository": re.compile(r"house plan", re.I),
}
TRACKER = {
    "an issue number": re.compile(r"\bissues?\s+#?\d+|\brequirement\s+\d+", re.I),
    "a dated run": re.compile(r"\b20\d\d-\d\d-\d\d\b"),
    "a commit hash": re.compile(r"(?<![\w-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])"),
}


def _id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def split_fences(text: str) -> tuple[str, str]:
    """(prose, code): the text outside fenced code blocks, and inside them."""
    prose: list[str] = []
    code: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        (code if fenced else prose).append(line)
    return "\n".join(prose), "\n".join(code)


def paragraphs(prose: str) -> list[str]:
    """Blocks between blank lines; a list item is a paragraph of its own; tables and headings
    are not paragraphs."""
    out: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            out.append(" ".join(current))
            current.clear()

    for line in prose.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("|", "#")):
            flush()
            continue
        if re.match(r"([-*+]|\d+\.)\s", stripped):
            flush()
        current.append(stripped)
    flush()
    return out


@functools.cache
def classes() -> dict[str, list[str]]:
    """Class name -> the modules of ragtt and ragtt_nb that define a class of that name."""
    found: dict[str, list[str]] = {}
    for package in ("ragtt", "ragtt_nb"):
        for path in sorted((ROOT / package).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    found.setdefault(node.name, []).append(module)
    return found


@functools.cache
def string_literals() -> frozenset[str]:
    """Every string constant in the package sources (span attribute keys such as
    ``ragtt.query_id`` are names ragtt emits, not Python objects)."""
    out: set[str] = set()
    for package in ("ragtt", "ragtt_nb"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    out.add(node.value)
    return frozenset(out)


def has_member(cls: type, name: str) -> bool:
    """A class attribute, a method, a dataclass or pydantic field, or an attribute its own
    methods set (``self.name = ...``)."""
    if hasattr(cls, name) or name in getattr(cls, "__dataclass_fields__", {}):
        return True
    if name in getattr(cls, "model_fields", {}):
        return True
    import inspect

    for klass in cls.__mro__:
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        if re.search(rf"\bself\.{re.escape(name)}\s*[:=]", source):
            return True
    return False


def resolve_dotted(name: str) -> bool:
    """``ragtt.a.b.c``: the longest importable module prefix, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if isinstance(obj, type) and not hasattr(obj, attr):
                return has_member(obj, attr)
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def resolve_class_attr(cls_name: str, attr: str) -> bool | None:
    """True / False for a class of ragtt's own; None for another library's class."""
    modules = classes().get(cls_name)
    if not modules:
        return None
    return any(has_member(getattr(importlib.import_module(m), cls_name), attr) for m in modules)


def cited_paths(text: str) -> set[str]:
    return {m.rstrip(".,:;") for m in PATH.findall(text)}


@functools.cache
def ignored_folders() -> tuple[str, ...]:
    """The folders inside the tree that .gitignore names (``bench/out/``): what the tools
    generate there is never committed, so a doc may name them without their existing."""
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    return tuple(line.strip().lstrip("/") for line in lines if line.strip().endswith("/") and "/" in line.strip()[:-1])


def path_exists(cited: str) -> bool:
    if any(ch in cited for ch in "*?["):
        return any(ROOT.glob(cited))
    if any(f"{cited}/".startswith(folder) for folder in ignored_folders()):
        return True
    return (ROOT / cited).exists()


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_cited_paths_exist(doc: Path) -> None:
    missing = sorted(p for p in cited_paths(doc.read_text(encoding="utf-8")) if not path_exists(p))
    assert not missing, f"{_id(doc)} cites paths that are not in the tree: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_links_resolve(doc: Path) -> None:
    bad = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        dest = (doc.parent / path_part).resolve() if path_part else doc
        if not dest.is_relative_to(ROOT) or not dest.exists():
            bad.append(f"{target} (no such file in the repository)")
        elif anchor and dest.is_file() and anchor not in anchors(dest):
            bad.append(f"{target} (no heading with that anchor)")
    assert not bad, f"{_id(doc)} has broken links: {bad}"


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    prose, _ = split_fences(path.read_text(encoding="utf-8"))
    out = set()
    for line in prose.splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", title)))
    return out


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_cited_names_exist(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    missing: set[str] = set()
    for name in set(DOTTED.findall(text)):
        if name.endswith(FILE_SUFFIXES) or name in string_literals():
            continue
        if not resolve_dotted(name):
            missing.add(name)
    for cls_name, attr in set(CLASS_ATTR.findall(text)):
        if resolve_class_attr(cls_name, attr) is False:
            missing.add(f"{cls_name}.{attr}")
    for attr in set(PROJ_ATTR.findall(text)):
        if not has_member(ragtt.Project, attr):
            missing.add(f"proj.{attr} (ragtt.Project has no {attr})")
    assert not missing, f"{_id(doc)} cites names that do not exist: {sorted(missing)}"


def command_lines(text: str) -> list[str]:
    """``ragtt ...`` and ``%ragtt ...`` commands: in inline code, and on the lines of code blocks
    (a line may hold several, separated by ``;``), without their comments."""
    prose, code = split_fences(text)
    found = []
    for candidate in [*re.findall(r"`([^`\n]+)`", prose), *code.splitlines()]:
        for segment in candidate.split(" #")[0].split(";"):
            segment = segment.strip()
            if re.match(r"%?ragtt (?:[a-z-]|--)", segment):
                found.append(segment)
    return found


def subcommands(parser: Any) -> dict[str, Any]:
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def flags(segment: str) -> list[str]:
    """The long options a command line uses (``[--at LABEL]`` and ``--match=x`` included)."""
    return [t.strip("[]").split("=")[0] for t in segment.split() if t.strip("[]").startswith("--")]


@functools.cache
def cli_parser() -> Any:
    """The ``ragtt`` command's parser, plugins included (``ragtt report``); built once."""
    from ragtt.cli import build_parser

    return build_parser()


def check_command(segment: str) -> str | None:
    """None when the command and its options exist; else what is wrong."""
    words = segment.split()
    if words[0] == "%ragtt":
        from ragtt_nb.magics import parser_for

        name = words[1]
        try:
            options = set(parser_for(name)._option_string_actions)
        except Exception:  # UsageError: the magic says which verbs exist
            return f"{segment!r}: no %ragtt {name}"
        unknown = [f for f in flags(segment) if f not in options]
        return f"{segment!r}: %ragtt {name} has no {unknown}" if unknown else None
    parser = cli_parser()
    where, path = parser, ["ragtt"]
    rest = iter(words[1:])
    for word in rest:
        if word.startswith("-"):
            action = where._option_string_actions.get(word.split("=")[0])
            if action is not None and action.nargs is None and "=" not in word:
                next(rest, None)  # the option's value
            continue
        choices = subcommands(where)
        if not choices or not re.fullmatch(r"[a-z][a-z-]*", word):
            break  # an argument, or a placeholder such as VERB
        if word not in choices:
            return f"{segment!r}: {' '.join(path)} has no command {word!r}"
        where = choices[word]
        path.append(word)
    options = set(where._option_string_actions) | set(parser._option_string_actions)
    unknown = [f for f in flags(segment) if f not in options]
    return f"{segment!r}: {' '.join(path)} has no {unknown}" if unknown else None


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_cited_commands_and_options_exist(doc: Path) -> None:
    problems = [p for p in map(check_command, command_lines(doc.read_text(encoding="utf-8"))) if p]
    assert not problems, f"{_id(doc)}: {problems}"


def narrative(text: str) -> str:
    """The prose a reader reads as the doc's own words: no code blocks, and no inline code
    except a bare hex token (an example's date or chunk id is not a dated run or a commit)."""
    prose, _ = split_fences(text)
    return re.sub(r"`([^`\n]+)`", lambda m: m.group(1) if re.fullmatch(r"[0-9a-f]{7,40}", m.group(1)) else "``", prose)


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_nothing_points_outside_the_repository(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    found = [f"{what}: {m.group(0)!r}" for what, pattern in OUTSIDE.items() for m in pattern.finditer(text)]
    found += [f"{what}: {m.group(0)!r}" for what, pattern in TRACKER.items() for m in pattern.finditer(narrative(text))]
    assert not found, f"{_id(doc)}: {found}"


@pytest.mark.parametrize("doc", DOCS, ids=_id)
def test_no_paragraph_over_150_words(doc: Path) -> None:
    prose, _ = split_fences(doc.read_text(encoding="utf-8"))
    long = [(len(p.split()), p[:80]) for p in paragraphs(prose) if len(p.split()) > MAX_PARAGRAPH_WORDS]
    assert not long, f"{_id(doc)}: paragraphs over {MAX_PARAGRAPH_WORDS} words (words, start): {long}"


@pytest.mark.parametrize(("name", "limit"), sorted(LINE_LIMITS.items()))
def test_line_limits(name: str, limit: int) -> None:
    lines = len((ROOT / name).read_text(encoding="utf-8").splitlines())
    assert lines < limit, f"{name} has {lines} lines; keep it under {limit} (move detail into a guide)"


def test_the_readme_starts_with_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    assert text.index("```bash") < text.index("\n\n", len("# ragtt\n") + 1) + 2, "the commands come first"
    assert [line.split("#")[0].strip() for line in block.splitlines()] == ["./dev demo", "./dev test"]


DECISIONS = ROOT / "docs" / "decisions"
RECORD_LINES = 60  # "a page each at most"


def test_decision_records_are_short_pages_of_context_decision_evidence() -> None:
    index = (DECISIONS / "README.md").read_text(encoding="utf-8")
    records = sorted(p for p in DECISIONS.glob("*.md") if p.name != "README.md")
    assert records, "docs/decisions/ holds no records"
    problems = []
    for number, record in enumerate(records, start=1):
        text = record.read_text(encoding="utf-8")
        if not re.fullmatch(r"\d{4}-[a-z0-9-]+\.md", record.name):
            problems.append(f"{record.name}: name it NNNN-title.md")
        elif int(record.name[:4]) != number:
            problems.append(f"{record.name}: numbers run 0001, 0002, ... with no gap or repeat")
        if not text.startswith(f"# {record.name[:4]}: "):
            problems.append(f"{record.name}: its title starts with '# {record.name[:4]}: '")
        if [h for h in re.findall(r"^## (.+)$", text, flags=re.M)] != ["Context", "Decision", "Evidence"]:
            problems.append(f"{record.name}: sections are ## Context, ## Decision, ## Evidence")
        if len(text.splitlines()) > RECORD_LINES:
            problems.append(f"{record.name}: over {RECORD_LINES} lines (a page at most)")
        if f"({record.name})" not in index:
            problems.append(f"{record.name}: not listed in docs/decisions/README.md")
    assert not problems, problems


# The checks themselves: each must fail on the kind of text it exists to catch.


# The code and the files it ships read alone too: a docstring, comment or notice that points
# at the shared folder, a machine's work folder or a document beside the repository points
# nowhere in a clone or a wheel. Tests and benches read the shared corpora (they say where
# they expect them), but point at no design document.
SHIPPED = ("ragtt", "ragtt_nb", "js", "labextension")
SHIPPED_OUTSIDE = {k: v for k, v in OUTSIDE.items() if k != "a parent-relative path"}  # (js imports across js/)
CHECKS_OUTSIDE = {
    "the shared design documents": re.compile(r"shared/design|RECIPES\.md|STYLE\.md"),
    "a machine's work folder": OUTSIDE["a machine's work folder"],
}


def tracked(*folders: str) -> list[Path]:
    """The text files git tracks under ``folders`` (not what a build or an install put there)."""
    listed = subprocess.run(["git", "ls-files", "-z", *folders], cwd=ROOT, capture_output=True, check=True)
    files = [ROOT / name for name in listed.stdout.decode("utf-8").split("\0") if name]
    return [f for f in files if f.suffix in (".py", ".js", ".mjs", ".cjs", ".ts", ".css", ".json", ".md", ".j2")]


def outside_references(files: list[Path], patterns: dict[str, re.Pattern[str]]) -> list[str]:
    return [
        f"{_id(f)}: {what}: {m.group(0)!r}"
        for f in files
        for what, pattern in patterns.items()
        for m in pattern.finditer(f.read_text(encoding="utf-8", errors="replace"))
    ]


def test_the_code_points_nowhere_outside_the_repository() -> None:
    shipped = tracked(*SHIPPED)
    assert len(shipped) > 100 and ROOT / "ragtt_nb" / "export.py" in shipped
    found = outside_references(shipped, SHIPPED_OUTSIDE)
    checks = [f for f in tracked("tests", "bench") if f != Path(__file__).resolve()]  # (this file names them)
    found += outside_references(checks, CHECKS_OUTSIDE)
    assert not found, found


def test_the_checks_catch_what_they_are_for() -> None:
    assert not path_exists("ragtt/no_such_module.py") and path_exists("ragtt/commit.py")
    assert path_exists("js/src/*.js") and not path_exists("js/*.nothing")
    assert path_exists("bench/out/bench.json") and "bench/out/" in ignored_folders()  # generated, ignored
    assert cited_paths("see `ragtt/commit.py`. and ../shared/x") == {"ragtt/commit.py"}
    assert resolve_dotted("ragtt.timetravel.run.execute") and not resolve_dotted("ragtt.timetravel.run.nothing")
    assert resolve_dotted("ragtt.PipelineConfig.ann_min_rows") and not resolve_dotted("ragtt.nothing_here")
    assert resolve_class_attr("Project", "replay") and resolve_class_attr("Project", "nothing") is False
    assert resolve_class_attr("RetrievedChunk", "regions")  # a dataclass field
    assert resolve_class_attr("LanceDataset", "anything") is None  # not ragtt's class
    assert "ragtt.query_id" in string_literals()  # a span attribute ragtt emits
    assert [w for w, p in OUTSIDE.items() if p.search("the layers (`../shared/design/ARCHITECTURE.md`)")]
    assert list(SHIPPED_OUTSIDE) == [
        "the shared folder beside the repository",
        "a machine's work folder",
        "a document outside the repository",
    ]
    assert outside_references([ROOT / "tests" / "conftest.py"], CHECKS_OUTSIDE) == []  # its ../shared/corpora is data
    logged = narrative("issue 14's bench, on 2026-12-01, measured at `ac7e42f`")
    assert [w for w, p in TRACKER.items() if p.search(logged)] == list(TRACKER)
    example = narrative("`replay --as-of 2021-06-01`, `ragtt bisect 987ebdc660 --predicate x`\n```\nac7e42f\n```")
    assert not [w for w, p in TRACKER.items() if p.search(example)]
    assert not [w for w, p in TRACKER.items() if p.search("SHA-256 of a 4,096-row block, deadline")]
    words = " ".join(["word"] * 151)
    assert [len(p.split()) for p in paragraphs(f"# T\n\n{words}\n\n- one\n- two\n\n| a | b |\n")] == [151, 2, 2]
    assert "invariant-the-crash-protocol" in anchors(ROOT / "docs" / "ARCHITECTURE.md")
    lines = command_lines("`ragtt diff --left A --right B`; run:\n```bash\nragtt snapshot v1; ragtt nosuch # x\n```\n")
    assert lines == ["ragtt diff --left A --right B", "ragtt snapshot v1", "ragtt nosuch"]
    assert check_command("ragtt test run golden.json --threshold 0.8 [--match 0.8|chunks|sources]") is None
    assert check_command("ragtt --version") is None and check_command("ragtt VERB --help") is None
    assert "no command 'nosuch'" in str(check_command("ragtt nosuch --project P"))
    assert "--no-such-flag" in str(check_command("ragtt replay --no-such-flag"))
    assert "--no-such-flag" in str(check_command("ragtt test capture --name g --no-such-flag"))
    assert check_command("%ragtt timeline last --axis time") is None
    assert "no %ragtt" in str(check_command("%ragtt nosuch"))
