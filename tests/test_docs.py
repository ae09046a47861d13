"""The docs point at things that exist, and the README stays a five-minute read.

Every relative link in README.md and docs/*.md must name a file or folder of the
repository (and, with `#anchor`, a heading of that file), and every backticked repository
path (`app/memory/scopes.py`, `tests/security/`, `manifest.agent.yaml`) must exist. Code and
tests cite the docs too: each `docs/….md` they name must exist, and none cites a design
file that is not in the repository.

What counts as a repository path: a token in an inline code span whose first segment is
an entry at the top of the repository (`app/…`, `tests/…`, `gcs-lifecycle.json`), or any
YAML / TOML / lock file name — so a mistyped manifest is caught too. Object keys
(`users/{user_id}/…`), URLs, endpoints (`/slack/events`) and environment variables
(`$PORT`) are not.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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
