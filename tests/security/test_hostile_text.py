"""Hostile text: a 40,000-character message (Slack's limit) of every shape that makes naive
text handling super-linear, fed to every text function between a Slack event and what the
person sees, and one such DM end to end through the real peers.

The shapes: a run of each whitespace character Python knows (the Unicode space separators,
line and paragraph separators, tabs and the ASCII controls `str.isspace()` accepts), a
"call me …" padded with each of them, zero-width characters, repeated punctuation, nested
brackets, one endless word, a space or tab between every letter, sentence after sentence,
filler after filler, a password label followed by blanks, a line of backticks, digits and
the ideograph they count (one number, or "1月" over and over).

How fast it all runs is measured by bench/hostile_input.py; nothing here is timed. What is
asserted is the structure that keeps the work bounded and right: whitespace is collapsed
before any pattern runs, each function reads a capped prefix (what lies past it changes
nothing), outputs are bounded, and the results are what a person would expect. The code
these tests replaced spent minutes on some of these inputs (or, for the line of backticks,
never finished), so they fail by never ending there.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.agent.history import MAX_MESSAGE_CHARS, TRIM_NOTE, ThreadMessage, build_messages
from app.learning.conversation_record import ConversationOwner, ConversationRecord
from app.learning.plain_text import collapse_spaces, one_line
from app.learning.preference_detection import (
    MAX_SCANNED_CHARS,
    MAX_SENTENCES,
    detect_preferences,
)
from app.learning.preferences import MAX_VALUE_CHARS, Preference
from app.learning.search_index import (
    MAX_DOCUMENT_TERMS,
    MAX_INDEXED_CHARS,
    SearchDocument,
    SearchIndex,
    document_for,
)
from app.learning.search_ranking import rank
from app.learning.search_terms import MAX_QUERY_TERMS, MAX_TERM_CHARS, query_terms
from app.learning.summary_file import MAX_SUMMARY_CHARS, MAX_TITLE_CHARS, Summary
from app.learning.transcript import fallback_summary
from app.memory.homes import preferences_key
from app.memory.scopes import MemoryScope
from app.memory.tool.editing import MAX_LISTED_OCCURRENCES
from app.memory.tool.model_paths import ModelPathStore
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.observability.redaction import SHAPE_REDACTED, redact_secret_shapes
from app.slack.conversation.answer_parts import rest_of, split_markdown
from app.slack.conversation.greeting import greeting_for, messages_tab_prompts
from app.slack.conversation.presence import SESSION_TITLE_CHARS
from app.slack.conversation.reply_stream import MAX_MARKDOWN_CHARS
from app.storage.local_directory import LocalDirectoryStore
from tests.e2e import conversation
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.slack_api import FakeSlack
from tests.memory.tool.helpers import refused, run
from tests.orion_server import OrionServer, make_settings

SLACK_LIMIT = 40_000  # characters in one Slack message's text

WHITESPACE = "".join(
    sorted(
        {c for c in map(chr, range(sys.maxunicode + 1)) if unicodedata.category(c) == "Zs"}
        | set("\t\n\r\v\f\x1c\x1d\x1e\x1f\x85\u2028\u2029")
    )
)
# Where `str.splitlines()` ends a line: a run of these is a sentence break.
LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"


def filled(unit: str, length: int = SLACK_LIMIT) -> str:
    return (unit * (length // len(unit) + 1))[:length]


def call_me(padding: str, length: int = SLACK_LIMIT) -> str:
    """ "call me", `padding` repeated, then the name: `length` characters in all."""
    return "call me" + filled(padding, length - len("call meSam")) + "Sam"


def _name(char: str) -> str:
    return f"U+{ord(char):04X}"


SHAPES: dict[str, str] = {
    **{f"run of {_name(c)}": filled(c) for c in WHITESPACE},
    **{f"call me, {_name(c)} padded": call_me(c) for c in WHITESPACE},
    "every whitespace in turn": filled(WHITESPACE),
    "call me, every whitespace in turn": call_me(WHITESPACE),
    **{f"run of {_name(c)}": filled(c) for c in ZERO_WIDTH},
    "zero-width in turn": filled(ZERO_WIDTH),
    "!?. repeated": filled("!?."),
    ".,; repeated": filled(".,;"),
    "nested (": filled("("),
    "nested [": filled("["),
    "nested ![": filled("!["),
    "one endless word": filled("a"),
    "space, letter": filled(" a"),
    "tab, letter": filled("\ta"),
    "sentence after sentence": filled("Call me Sam. "),
    "filler after filler": "Call me Sam" + filled(", please", SLACK_LIMIT - 11),
    "password label, then blanks": "password:" + filled(" \t", SLACK_LIMIT - 9),
    "line of backticks": filled("`"),
    "line after line": filled("a\n"),
    "digits, then what they count": filled("1", SLACK_LIMIT - 1) + "月",
    "a number and what it counts, repeated": filled("1月"),
}
SHAPE_IDS = list(SHAPES)


def shapes() -> Iterator[str]:
    yield from SHAPES.values()


@pytest.fixture(params=SHAPE_IDS)
def hostile(request: pytest.FixtureRequest) -> str:
    text = SHAPES[request.param]
    assert len(text) == SLACK_LIMIT
    return text


def test_every_shape_is_at_slacks_limit_and_every_whitespace_is_covered() -> None:
    assert all(len(text) == SLACK_LIMIT for text in shapes())
    assert all(c.isspace() for c in WHITESPACE)
    # Every character Python's patterns call whitespace (`\s`, `str.isspace`) is covered.
    assert set(WHITESPACE) == {c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()}


# --- whitespace, collapsed first ----------------------------------------------------------


def test_whitespace_is_collapsed_to_single_separators_and_no_word_is_lost(hostile: str) -> None:
    collapsed = collapse_spaces(hostile)

    assert {c for c in collapsed if c.isspace()} <= {" ", "\n"}
    for pair in ("  ", "\n\n", " \n", "\n "):
        assert pair not in collapsed
    assert collapsed == collapsed.strip()
    assert collapsed.split() == hostile.split()
    # A line break stays a line break: the lines keep their words.
    assert _lines_of_words(collapsed) == _lines_of_words(hostile)


def _lines_of_words(text: str) -> list[list[str]]:
    return [words for words in (line.split() for line in text.splitlines()) if words]


def test_one_line_is_one_short_line(hostile: str) -> None:
    flat = one_line(hostile, MAX_TITLE_CHARS)
    assert len(flat) <= MAX_TITLE_CHARS
    assert {c for c in flat if c.isspace()} <= {" "} and "  " not in flat
    assert flat.split() == " ".join(hostile.split())[:MAX_TITLE_CHARS].split()


# --- preference detection -----------------------------------------------------------------


def test_detection_reads_only_a_bounded_prefix(hostile: str) -> None:
    found = detect_preferences(hostile)

    # Whatever follows the prefix, even a preference, changes nothing.
    assert found == detect_preferences(hostile[:MAX_SCANNED_CHARS] + "\nCall me Mallory.")
    assert len(found) <= MAX_SENTENCES
    assert all(len(p.value) <= MAX_VALUE_CHARS for p in found)


def test_a_sentence_the_prefix_cuts_short_is_not_read() -> None:
    # The prefix read ends right after "Call me Sam" of "Call me Samantha".
    name_at = MAX_SCANNED_CHARS - len("Call me Sam")
    opening = "Hello. " + "x" * (name_at - len("Hello. ") - len(". ")) + ". "
    assert len(opening) == name_at
    assert detect_preferences(opening + "Call me Samantha.") == []
    assert detect_preferences(opening + "Call me Sam") == [Preference("name", "Sam")]


@pytest.mark.parametrize("space", list(WHITESPACE), ids=_name)
def test_call_me_padded_with_any_whitespace_is_read_as_the_person_wrote_it(space: str) -> None:
    padded = call_me(space, MAX_SCANNED_CHARS)
    # Within what detection reads: a run of spaces is a space, a run of line breaks a
    # sentence break ("call me" alone, then "Sam", states nothing).
    expected = [] if space in LINE_BREAKS else [Preference("name", "Sam")]
    assert detect_preferences(padded) == expected
    # Past it, the name is not read at all.
    assert detect_preferences(call_me(space)) == []


def test_detection_reads_a_bounded_number_of_sentences() -> None:
    found = detect_preferences(SHAPES["sentence after sentence"])
    assert found == [Preference("name", "Sam")] * MAX_SENTENCES
    # A preference after the last sentence read is not learned.
    short = "Fine. " * MAX_SENTENCES + "Call me Sam."
    assert len(short) < MAX_SCANNED_CHARS and detect_preferences(short) == []
    assert detect_preferences("Fine. " * (MAX_SENTENCES - 1) + "Call me Sam.") == [
        Preference("name", "Sam")
    ]


def test_closing_fillers_come_off_however_many_there_are() -> None:
    assert detect_preferences("Call me Sam" + ", please" * 400) == [Preference("name", "Sam")]
    assert detect_preferences("Always use metric units" + " thanks," * 400) == [
        Preference("always", "use metric units")
    ]


# --- redaction ------------------------------------------------------------------------------


def test_redaction_leaves_hostile_text_without_secrets_as_it_is(hostile: str) -> None:
    assert redact_secret_shapes(hostile) == hostile


@pytest.mark.parametrize("blanks", [" ", "\t", " \t"], ids=["spaces", "tabs", "both"])
def test_a_password_after_a_long_run_of_blanks_is_still_redacted(blanks: str) -> None:
    label = "password:"
    value = "hunter2-correct-horse"
    text = label + filled(blanks, SLACK_LIMIT - len(label) - len(value)) + value

    scrubbed = redact_secret_shapes(text)

    assert value not in scrubbed
    assert scrubbed == text.removesuffix(value) + SHAPE_REDACTED


# --- what Claude is sent, and what is kept of the conversation -----------------------------


def test_the_message_sent_to_claude_is_trimmed(hostile: str) -> None:
    messages = build_messages([ThreadMessage("user", hostile)])
    assert all(len(m["content"]) <= MAX_MESSAGE_CHARS + len(TRIM_NOTE) for m in messages)


@dataclass(frozen=True)
class _Said:
    role: str
    text: str
    sent_at: float | None = None


def test_the_summary_written_without_a_model_is_bounded(hostile: str) -> None:
    draft = fallback_summary(None, [_Said("user", hostile), _Said("assistant", "Noted.")])

    assert len(draft.title) <= MAX_TITLE_CHARS and "\n" not in draft.title
    assert len(draft.body) <= MAX_SUMMARY_CHARS
    # Kept in the conversation's object, and read back whole.
    now = datetime.now(UTC)
    record = ConversationRecord("1712345678.000100", ConversationOwner("U0TEXT", "D0TEXT"), now)
    kept = ConversationRecord.parse(
        record.with_summary(Summary(draft.title, draft.body, now)).render()
    )
    assert kept is not None and kept.summary is not None
    assert (kept.summary.title, kept.summary.body) == (draft.title, draft.body)


# --- the answer, cut into Slack messages ----------------------------------------------------


def test_an_answer_of_any_shape_is_cut_into_messages_within_the_limit(hostile: str) -> None:
    parts = split_markdown(hostile, MAX_MARKDOWN_CHARS)

    assert all(0 < len(part) <= MAX_MARKDOWN_CHARS for part in parts)
    # Nothing added or lost (none of these holds a code block that fits a message).
    assert "".join(parts) == hostile
    assert len(parts) <= 2 * len(hostile) // MAX_MARKDOWN_CHARS + 1
    shown = len(parts[0])
    assert rest_of(hostile, shown) == hostile[shown:]


def test_a_fence_longer_than_half_a_message_is_cut_like_text() -> None:
    fence = "`" * (MAX_MARKDOWN_CHARS // 2)
    answer = f"{fence}python\n" + "x = 1\n" * 3_000 + fence
    parts = split_markdown(answer, MAX_MARKDOWN_CHARS)
    assert all(0 < len(part) <= MAX_MARKDOWN_CHARS for part in parts)
    assert "".join(parts) == answer


# --- recall (the model's query, the stored summaries) ---------------------------------------


def test_recall_query_terms_are_few_whatever_the_query(hostile: str) -> None:
    groups = query_terms(hostile)
    assert len(groups) <= MAX_QUERY_TERMS
    assert all(len(t) <= MAX_TERM_CHARS for group in groups for t in group)
    many = " ".join(f"topic{n}" for n in range(100))
    assert query_terms(many) == [(f"topic{n}",) for n in range(MAX_QUERY_TERMS)]


def _document(title: str, body: str) -> SearchDocument:
    return document_for("1712345678.000100", title, body, [], datetime.now(UTC))


def _found(title: str, body: str, question: str) -> bool:
    index = SearchIndex()
    index.add([_document(title, body)])
    return rank(index, query_terms(question), 1) != []


def test_recall_indexes_a_hostile_summary_whole_within_its_bounds(hostile: str) -> None:
    assert _found("Notes", "Budget: " + hostile, "budget")
    assert not _found("Notes", hostile, "budget")
    document = _document("Notes", hostile)
    assert len(document.terms) <= MAX_DOCUMENT_TERMS
    assert MAX_INDEXED_CHARS > SLACK_LIMIT  # a whole message is indexed, not its start
    if len(document.terms) < MAX_DOCUMENT_TERMS:
        # On a line of its own: after `password:` and blanks, a word is taken for the
        # password (and redacted), however many blanks come first.
        assert _found("Notes", hostile + "\nbudget", "budget")
    # However many terms the text holds, the title's come first.
    assert _found("Q3 budget " + hostile, hostile, "q3 budget")


# --- the memory tool (the model's edits) ----------------------------------------------------

USER, THREAD = "U0TEXT", "1712345678.000100"
NOTES = f"/memories/users/{USER}/notes.md"


@pytest.fixture
def memory_tool(tmp_path: Path) -> ScopedMemoryTool:
    scope = MemoryScope(USER, THREAD)
    return ScopedMemoryTool(
        ModelPathStore(LocalDirectoryStore(tmp_path / "memories"), scope), scope
    )


@pytest.mark.parametrize("old_str", ["", "a", "a\na"], ids=["empty", "one letter", "overlapping"])
async def test_an_old_str_found_everywhere_lists_a_bounded_number_of_lines(
    memory_tool: ScopedMemoryTool, old_str: str
) -> None:
    content = "a\n" * 50_000  # 100,000 bytes: the largest file the tool keeps
    await run(memory_tool, command="create", path=NOTES, file_text=content)

    error = await refused(
        memory_tool, {"command": "str_replace", "path": NOTES, "old_str": old_str, "new_str": "b"}
    )

    listed = error.split("in lines: ", 1)[1].split(". Please", 1)[0].split(", ")
    assert listed[-1] == "…" and len(listed) == MAX_LISTED_OCCURRENCES + 1
    # The lines are right: one occurrence per line ("a", "aa"), or per character ("").
    per_line = 2 if old_str == "" else 1
    expected = [str(1 + n // per_line) for n in range(MAX_LISTED_OCCURRENCES)]
    assert listed[:-1] == expected
    view = await run(memory_tool, command="view", path=NOTES)
    assert view.count("\n") == content.count("\n") + 1  # every line, numbered, unchanged


# --- what a person sees: greetings built from whatever the preferences file holds -----------


def test_a_greeting_is_one_short_line_whatever_the_preferences_hold(hostile: str) -> None:
    stored = json.dumps({"name": hostile, "team": hostile, "timezone": hostile})

    greeting = greeting_for(stored)
    title, _ = messages_tab_prompts(stored)

    assert "\n" not in greeting and len(greeting) <= 3 * MAX_VALUE_CHARS + 200
    assert "\n" not in title and len(title) <= MAX_VALUE_CHARS + 50


# --- end to end ------------------------------------------------------------------------------

# 40,000 characters: every whitespace but the line breaks, in turn (one run, no sentence
# break in it: what made sentence splitting quadratic).
HOSTILE_DM = call_me("".join(c for c in WHITESPACE if c not in LINE_BREAKS))
HOSTILE_ANSWER = "Happy to help, whatever the spacing."
OTHER_USER, OTHER_DM = "U0CALM", "D0CALM"
OWNER, OWNER_DM = "U0SPACES", "D0SPACES"
# The hostile turn's answer is held this long, so that the rest of the test happens while
# Orion is working on it. Only a window: nothing asserts how long anything took.
HOLD_S = 1.0


def _hold_the_hostile_answer(claude: FakeClaude) -> None:
    def respond(body: dict[str, object]) -> script.Reply | None:
        if last_user_text(body).startswith("call me"):  # the answer, not the summary
            return script.text(HOSTILE_ANSWER, delay=HOLD_S)
        return None

    claude.responder = respond


def test_a_hostile_dm_is_answered_while_everyone_else_still_is(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    _hold_the_hostile_answer(claude)
    thread_ts = slack.open_assistant_thread(OWNER_DM)
    conversation.post_user_message(orion, slack, OWNER, OWNER_DM, thread_ts, HOSTILE_DM)

    # Meanwhile: the liveness probe, and another person's message, are answered.
    assert orion.http.get("/healthz").status_code == 200
    other_thread = slack.open_assistant_thread(OTHER_DM)
    conversation.post_user_message(orion, slack, OTHER_USER, OTHER_DM, other_thread, "Hello?")
    conversation.wait_for_answer(slack, OTHER_DM, other_thread, "(fake claude) you said: Hello?")

    def answered_and_healthy() -> list[str]:
        assert orion.http.get("/healthz").status_code == 200
        return conversation.finished(slack, OWNER_DM, thread_ts)

    assert slack.wait_for(answered_and_healthy, timeout=30, what="the answer") == [HOSTILE_ANSWER]
    orion.wait_idle(timeout=30)
    # What was sent to Claude was trimmed; the name past what detection reads was not kept.
    [request] = [r for r in claude.requests if last_user_text(r).startswith("call me")]
    assert len(last_user_text(request)) <= MAX_MESSAGE_CHARS + len(TRIM_NOTE)
    preferences = memory_dir / preferences_key(OWNER)
    assert not preferences.exists() or "Sam" not in preferences.read_text()


def test_a_hostile_first_dm_in_agent_view_gets_a_one_line_session_title(
    claude: FakeClaude, memory_dir: Path
) -> None:
    _hold_the_hostile_answer(claude)
    with FakeSlack(agent_view=True) as slack:
        settings = make_settings(slack, claude, memory_dir=memory_dir, slack_experience="agent")
        with OrionServer(settings) as orion:
            ts = slack.add_user_message(OWNER_DM, None, OWNER, HOSTILE_DM)
            payload = events.top_level_dm(OWNER, OWNER_DM, HOSTILE_DM, ts=ts)
            assert orion.post_event(payload).status_code == 200
            assert orion.http.get("/healthz").status_code == 200
            conversation.wait_for_answer(slack, OWNER_DM, ts, HOSTILE_ANSWER)
            orion.wait_idle(timeout=30)

            session = slack.session(OWNER_DM, ts)
            assert session is not None
            assert session.titles == ["call me Sam"]
            assert all(len(t) <= SESSION_TITLE_CHARS for t in session.titles)
