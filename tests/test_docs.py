"""The docs point at things that exist, their commands run as written, and the README
stays a five-minute read.

Every relative link in README.md and docs/*.md must name a file or folder of the
repository (and, with `#anchor`, a heading of that file), and every backticked repository
path (`app/memory/scopes.py`, `tests/security/`, `manifest.agent.yaml`) must exist. Code and
tests cite the docs too: each `docs/….md` they name must exist, and none cites a design
file that is not in the repository.

Every command in them (a line of a shell code block, or an inline `scripts/uv …` span)
must run as written from a fresh clone, whose route to uv is the README's `scripts/uv`
(it leaves no `uv` on `PATH`): `scripts/uv run orion …` must parse as `orion` parses its
arguments (and its `--help` too), a `pytest` path must exist, a `python -m` module must
be one that runs and reads each option given. The CI section of docs/testing.md names
every step of `.ci/run`, and the operations doc quotes only texts Orion's code holds.

What counts as a repository path: a token in an inline code span whose first segment is
an entry at the top of the repository (`app/…`, `tests/…`, `gcs-lifecycle.json`), or any
YAML / TOML / lock file name — so a mistyped manifest is caught too. Object keys
(`users/{user_id}/…`), URLs, endpoints (`/slack/events`) and environment variables
(`$PORT`) are not.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from app.cli import _parser as orion_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
README_MAX_LINES = 200

_FENCED_BLOCK = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)
_URL_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
# Placeholders, variables and wildcards: a pattern, not a path.
_NOT_A_PATH = re.compile(r"[{}…*<>$|\\]")
_CONFIG_SUFFIXES = (".yaml", ".yml", ".toml", ".lock")
# A citation of a design document outside the repository ("DESIGN §2", "DESIGN.md §3").
_DESIGN_CITATION = re.compile("DESIGN" + r"(\.md)?\s*§")
_DOCS_CITATION = re.compile(r"\bdocs/[\w.-]+\.md\b")


def _prose(markdown: str) -> str:
    return _FENCED_BLOCK.sub("", markdown)


def repo_paths(markdown: str, top_level: set[str]) -> list[str]:
    """The repository paths named in `markdown`'s inline code spans."""
    found = []
    for span in _INLINE_CODE.findall(_prose(markdown)):
        for token in span.split():
            token = token.rstrip(".,;:")
            if "://" in token or _NOT_A_PATH.search(token) or token.startswith(("/", "-")):
                continue
            first = token.split("/", 1)[0]
            if first in top_level or ("/" not in token and token.endswith(_CONFIG_SUFFIXES)):
                found.append(token)
    return found


def relative_links(markdown: str) -> list[str]:
    """The targets of `markdown`'s links that point into the repository."""
    return [
        target
        for target in _LINK.findall(_prose(markdown))
        if not _URL_SCHEME.match(target) and not target.startswith("<")
    ]


def heading_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[`*_\[\]()]", "", heading).strip().lower()
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", text))


def _anchors(markdown_file: Path) -> set[str]:
    return {heading_anchor(h) for h in _HEADING.findall(_prose(markdown_file.read_text()))}


def _top_level() -> set[str]:
    """The repository's own top-level entries: what a fresh clone has, not what running
    Orion or the tests left beside it (`.venv/`, `.orion/` — the .gitignore's names)."""
    ignored = {
        line.strip().strip("/")
        for line in (ROOT / ".gitignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    return {entry.name for entry in ROOT.iterdir() if entry.name not in ignored}


def _docs_ids(paths: list[Path]) -> list[str]:
    return [str(path.relative_to(ROOT)) for path in paths]


def test_there_are_docs_and_the_readme_links_to_each() -> None:
    assert DOCS, "docs/ has no Markdown files"
    linked = {target.split("#", 1)[0] for target in relative_links(README.read_text())}
    assert {f"docs/{doc.name}" for doc in DOCS} <= linked


@pytest.mark.parametrize("markdown_file", [README, *DOCS], ids=_docs_ids([README, *DOCS]))
def test_every_relative_link_resolves(markdown_file: Path) -> None:
    broken = []
    for target in relative_links(markdown_file.read_text()):
        path_part, _, anchor = target.partition("#")
        resolved = (markdown_file.parent / path_part).resolve() if path_part else markdown_file
        if not resolved.is_relative_to(ROOT) or not resolved.exists():
            broken.append(f"{target}: no such file or folder")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: no heading #{anchor} in {resolved.name}")
    assert not broken, f"{markdown_file.name}: {broken}"


@pytest.mark.parametrize("markdown_file", [README, *DOCS], ids=_docs_ids([README, *DOCS]))
def test_every_backticked_repository_path_exists(markdown_file: Path) -> None:
    missing = [
        path
        for path in repo_paths(markdown_file.read_text(), _top_level())
        if not (ROOT / path).exists()
    ]
    assert not missing, f"{markdown_file.name} names paths that do not exist: {missing}"


def test_the_readme_stays_short() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_code_and_tests_cite_only_docs_that_exist() -> None:
    problems = []
    for folder in ("app", "tests", "bench"):
        for source in sorted((ROOT / folder).rglob("*.py")):
            if source == Path(__file__).resolve():
                continue  # this file names bad citations on purpose, to test the checks
            text = source.read_text()
            where = source.relative_to(ROOT)
            if _DESIGN_CITATION.search(text):
                problems.append(f"{where}: cites a design file outside the repository")
            problems += [
                f"{where}: {cited} does not exist"
                for cited in _DOCS_CITATION.findall(text)
                if not (ROOT / cited).is_file()
            ]
    assert not problems, problems


# --- the commands, as written ------------------------------------------------------------

ROUTE = "scripts/uv"
_SHELL_BLOCK = re.compile(r"^```(?:bash|sh|shell|console)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_UV_SPAN = re.compile(r"^(?:scripts/)?uv\s")
# uv's own options before the program `uv run` starts (those that take a value, and not).
_UV_VALUE_OPTIONS = {"--only-group", "--group", "--project", "--python", "--with", "--extra"}
_UV_FLAGS = {"--no-dev", "--locked", "--frozen", "--all-groups", "--no-sync", "--quiet", "-q"}
# The dev group's tools with programs of their own (pyproject.toml), run by CI.
_DEV_TOOLS = ("ruff", "mypy", "hadolint")
# A placeholder for an id (`U…`, `T…`, `USER_ID`): an id of that kind.
_ID_PLACEHOLDER = re.compile(r"^([A-Z])…$")


def commands(markdown: str) -> list[str]:
    """Every command `markdown` gives to type: each line of its shell code blocks (a
    trailing comment and `&` left out, continued lines joined), and each inline code span
    that is a uv command."""
    found = []
    for block in _SHELL_BLOCK.findall(markdown):
        for line in block.replace("\\\n", " ").splitlines():
            command = re.split(r"\s#\s", line, maxsplit=1)[0].strip().removesuffix("&").strip()
            if command and not command.startswith("#"):
                found.append(command)
    found += [span for span in _INLINE_CODE.findall(_prose(markdown)) if _UV_SPAN.match(span)]
    return found


def command_problems(command: str) -> list[str]:
    """Why `command` would not run as written from a fresh clone (none: it would)."""
    words = shlex.split(command.replace("\\|", "|"))
    if "…" in words:
        return []  # `scripts/uv run …`: any command, not one to type
    if words[0] == "uv":
        return [f"{command}: no `uv` on PATH after the README's route; write {ROUTE} {command[3:]}"]
    if words[0] != ROUTE:
        return []  # not Orion's (git, cp, gcloud, slack): the tool's own business
    if words[1] != "run":
        return [] if words[1] == "sync" else [f"{command}: uv has no `{words[1]}` here"]
    program = _after_uv_options(words[2:])
    if not program:
        return [f"{command}: runs nothing"]
    check = {"orion": _orion_problems, "pytest": _pytest_problems, "python": _python_problems}
    check |= dict.fromkeys(_DEV_TOOLS, lambda _: [])
    return [f"{command}: {problem}" for problem in check.get(program[0], _unknown)(program)]


def _after_uv_options(words: list[str]) -> list[str]:
    while words and words[0].startswith("-"):
        words = words[2:] if words[0] in _UV_VALUE_OPTIONS else words[1:]
    return words


def _unknown(program: list[str]) -> list[str]:
    return [f"`{program[0]}` is not a program the project installs"]


def _expanded(arguments: list[str]) -> list[list[str]]:
    """A pattern's argument lists: `show|export|forget` gives one each, `[--quick]` is
    given, `U…` and `USER_ID` are ids."""
    variants: list[list[str]] = [[]]
    for word in arguments:
        word = word.strip("[]")
        if word == "USER_ID":
            word = "U0123ABCD"
        elif placeholder := _ID_PLACEHOLDER.match(word):
            word = f"{placeholder[1]}0123ABCD"
        variants = [[*v, choice] for v in variants for choice in word.split("|")]
    return variants


def _orion_problems(program: list[str]) -> list[str]:
    problems = []
    for arguments in _expanded(program[1:]):
        for argv, wanted in ((arguments, None), ([*arguments, "--help"], 0)):
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()) as err,
            ):
                try:
                    orion_parser().parse_args(argv)
                    code = None
                except SystemExit as exit_:
                    code = exit_.code
            if code != wanted:
                problems.append(
                    f"`orion {' '.join(argv)}` does not parse: {err.getvalue().strip()}"
                )
    return problems


def _pytest_problems(program: list[str]) -> list[str]:
    paths = [w for w in program[1:] if not w.startswith("-") and ("/" in w or w.endswith(".py"))]
    return [f"{path} does not exist" for path in paths if not (ROOT / path).exists()]


def _python_problems(program: list[str]) -> list[str]:
    if len(program) < 3 or program[1] != "-m":
        return [] if len(program) > 1 and (ROOT / program[1]).is_file() else ["no such script"]
    module = program[2]
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return [f"no module {module}"]
    source = Path(spec.origin).read_text()
    problems = [] if 'if __name__ == "__main__":' in source else [f"{module} does not run"]
    options = [w.strip("[]") for w in program[3:] if w.strip("[]").startswith("--")]
    return problems + [f"{module} reads no {o}" for o in options if f'"{o}"' not in source]


MARKDOWN = [README, *DOCS]


@pytest.mark.parametrize("markdown_file", MARKDOWN, ids=_docs_ids(MARKDOWN))
def test_every_command_runs_as_written_from_a_fresh_clone(markdown_file: Path) -> None:
    problems = [p for c in commands(markdown_file.read_text()) for p in command_problems(c)]
    assert not problems, f"{markdown_file.name}: {problems}"


def test_the_route_is_an_executable_file_of_the_clone() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "--stage", ROUTE], cwd=ROOT, capture_output=True, text=True
    )
    assert tracked.stdout.startswith("100755 "), f"{ROUTE} is not committed as executable"
    assert os.access(ROOT / ROUTE, os.X_OK)


def test_the_testing_doc_names_every_ci_step() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    section = (ROOT / "docs" / "testing.md").read_text().split("## CI", 1)[1]
    steps = re.findall(r"^ *uv ([^-].*?)(?: \|\|.*)?$", ci, flags=re.MULTILINE)
    assert len(steps) > 5, f".ci/run runs {steps} through uv"
    missing = [step for step in steps if f"`{ROUTE} {step}`" not in section]
    assert not missing, f"docs/testing.md's CI section leaves out: {missing}"


def _printed_texts() -> list[str]:
    """Every string Orion's code holds but its docstrings, lower-cased (f-strings by
    their literal parts)."""
    texts = []
    for source in sorted((ROOT / "app").rglob("*.py")):
        tree = ast.parse(source.read_text())
        docstrings = {
            id(node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        }
        texts += [
            node.value.lower()
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ]
    return texts


def test_the_operations_doc_quotes_only_texts_orion_prints() -> None:
    """What an operator looks for in a log or a terminal ("Orion cannot start", "Sorry…")
    must be what Orion says: each quotation of two words or more (`…` ending a prefix)."""
    prose = re.sub(r"`[^`]*`", "", _prose((ROOT / "docs" / "operations.md").read_text()))
    quoted = [q for q in re.findall(r'"([^"\n]+)"', prose) if " " in q.strip("…")]
    printed = _printed_texts()
    missing = [q for q in quoted if not any(q.rstrip("…").lower() in t for t in printed)]
    assert quoted and not missing, f"docs/operations.md quotes texts nothing prints: {missing}"


def test_the_checks_catch_what_they_look_for() -> None:
    """The scanners find a broken path and a broken link, and leave keys and URLs alone."""
    text = (
        "See `app/memory/nowhere.py`, `manifest.agnt.yaml`, `users/{user_id}/notes.md`, "
        "`/slack/events`, `0.0.0.0:$PORT`, `https://example.com/app/x` and "
        "[setup](docs/nowhere.md#intro), [site](https://slack.com).\n"
        "```\napp/in/a/code/block.py\n```\n"
    )
    assert repo_paths(text, {"app", "docs"}) == ["app/memory/nowhere.py", "manifest.agnt.yaml"]
    assert relative_links(text) == ["docs/nowhere.md#intro"]
    assert heading_anchor("The person's path under the worst conditions") == (
        "the-persons-path-under-the-worst-conditions"
    )


def test_the_command_checks_catch_what_they_look_for() -> None:
    text = (
        "```bash\nuv run orion\nscripts/uv run orion memory shw U1  # a typo\n"
        "scripts/uv run --no-dev orion chat --usr U1 &\ncp .env.example .env\n```\n"
        "Run `scripts/uv run pytest tests/nowhere.py`, `scripts/uv run python -m bench.run --fast`"
        " or `scripts/uv run orion memory show\\|export USER_ID --team T…`.\n"
    )
    found = commands(text)
    problems = {command: command_problems(command) for command in found}
    assert found[1] == "scripts/uv run orion memory shw U1" and found[3] == "cp .env.example .env"
    assert "no `uv` on PATH" in problems["uv run orion"][0]
    assert "does not parse" in problems[found[1]][0]
    assert "unrecognized arguments: --usr" in problems[found[2]][0]
    assert problems["cp .env.example .env"] == []
    assert problems[found[4]] == [f"{found[4]}: tests/nowhere.py does not exist"]
    assert problems[found[5]] == [f"{found[5]}: bench.run reads no --fast"]
    assert problems[found[6]] == [], "a pattern's alternatives and placeholders parse"
