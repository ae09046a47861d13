"""`/memories` path validation and the conversation's scope, in the memory tool's own keys
(where each lives in the store: tests/memory/test_homes.py)."""

from __future__ import annotations

import posixpath
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.memory import scopes as paths
from app.memory.scopes import MemoryScope, to_key, to_memory_path
from tests.backends import OTHER_THREAD, OTHER_USER, THREAD, USER

SESSION = "sessions/1712345678-123456/"


@pytest.mark.parametrize(
    "user_id", ["", "u123", "U", "X0123", "U01/../x", "U0123\n", "U0123 ", "B0123ABC", "U..", 42]
)
def test_user_ids_that_are_not_slack_ids_are_rejected(user_id: str) -> None:
    assert not paths.is_user_id(user_id)
    with pytest.raises(ValueError):
        paths.validate_user_id(user_id)
    with pytest.raises(ValueError):
        MemoryScope(user_id=user_id, thread_ts=THREAD)


@pytest.mark.parametrize(
    "thread_ts", ["", "1712345678", "1712345678.", ".123", "1.2.3", "17123a.1", "1.2\n", "../1.2"]
)
def test_thread_timestamps_that_are_not_slack_ts_are_rejected(thread_ts: str) -> None:
    assert not paths.is_thread_ts(thread_ts)
    with pytest.raises(ValueError):
        paths.validate_thread_ts(thread_ts)
    with pytest.raises(ValueError):
        MemoryScope(user_id=USER, thread_ts=thread_ts)


@pytest.mark.parametrize(
    ("memory_path", "key"),
    [
        ("/memories", ""),
        ("/memories/", ""),
        ("/memories/global/context.md", "global/context.md"),
        ("/memories/users/U1/", "users/U1"),
        ("/memories/users/U1/notes on café.md", "users/U1/notes on café.md"),
        ("/memories/users/U1/a..b.md", "users/U1/a..b.md"),
        ("/memories/users/U1/50% done.md", "users/U1/50% done.md"),
    ],
)
def test_to_key_maps_memory_paths_to_keys(memory_path: str, key: str) -> None:
    assert to_key(memory_path) == key
    assert to_key(to_memory_path(key)) == key


@pytest.mark.parametrize(
    "memory_path",
    [
        "",
        "memories/users/U1/x.md",
        "/memoriesX",
        "/memoriesX/users/U1/x.md",
        "/memories-old/x",
        "/memories%2fusers",
        "/etc/passwd",
        "/tmp/memories/x",
        "//memories/x",
        "/Memories/x",
        "/memories/..",
        "/memories/users/U1/../U2/x.md",
        "/memories/users/U1/./x.md",
        "/memories/users/U1/...",
        "/memories/users/%2e%2e/U2/x.md",
        "/memories/users/%2E%2E/U2",
        "/memories/users/U1%2f..%2fU2/x.md",
        "/memories/users/U1/%252e%252e/x",
        "/memories/users\\U2\\x.md",
        "/memories/users/U1/..\\..\\U2",
        "/memories//users/U1/x.md",
        "/memories/users//U1",
        "/memories/users/U1//",
        "/memories/users/U1/.hidden",
        "/memories/users/U1/.tmp-123",
        "/memories/users/U1/x.md\n",
        "/memories/users/U1/\x00x.md",
        "/memories/users/U1/\u202egnp.exe",
        "/memories/users/U1/\ud800",
        "/memories/users/U1/\uff0e\uff0e/U2",
        "/memories/users/U1\uff0fx",
        "/memories/" + "a" * 600,
    ],
)
def test_to_key_rejects_unsafe_paths(memory_path: str) -> None:
    with pytest.raises(ValueError):
        to_key(memory_path)


def test_non_string_paths_are_value_errors() -> None:
    for value in (None, 3, b"/memories/x", ["/memories"]):
        with pytest.raises(ValueError):
            to_key(value)  # type: ignore[arg-type]


def test_error_for_foreign_paths_matches_the_reference_tool() -> None:
    with pytest.raises(ValueError, match=r"^Path must start with /memories, got: /etc/passwd$"):
        to_key("/etc/passwd")


SCOPE = MemoryScope(user_id=USER, thread_ts=THREAD)
MY_SESSION = SESSION


@pytest.mark.parametrize(
    ("key", "readable", "writable"),
    [
        ("global/context.md", True, False),
        ("global", True, False),
        (f"users/{USER}/preferences.json", True, True),
        (f"users/{USER}/deep/er/notes.md", True, True),
        (f"users/{USER}", True, False),  # the directory itself: listable, not a file to write
        (f"{MY_SESSION}context.md", True, True),
        (f"users/{OTHER_USER}/preferences.json", False, False),
        (f"users/{USER}X/notes.md", False, False),  # a different user sharing a prefix
        (f"sessions/{OTHER_THREAD.replace('.', '-')}/context.md", False, False),
        ("users", False, False),
        ("sessions", False, False),
        ("", False, False),
        ("globalx/context.md", False, False),
        ("other/file.md", False, False),
    ],
)
def test_scope_reads_and_writes_only_its_own_directories(
    key: str, readable: bool, writable: bool
) -> None:
    assert SCOPE.can_read(key) is readable
    assert SCOPE.can_write(key) is writable


def test_scope_lists_its_roots_and_the_roots_under_shared_directories() -> None:
    assert SCOPE.roots == ("global/", f"users/{USER}/", MY_SESSION)
    assert SCOPE.writable_roots == (f"users/{USER}/", MY_SESSION)
    assert SCOPE.roots_under("") == list(SCOPE.roots)
    assert SCOPE.roots_under("users") == [f"users/{USER}/"]
    assert SCOPE.roots_under("sessions") == [MY_SESSION]
    assert SCOPE.roots_under(f"users/{OTHER_USER}") == []
    assert SCOPE.roots_under("glob") == []


def test_scope_rejects_invalid_ids() -> None:
    with pytest.raises(ValueError):
        MemoryScope(user_id="../U1", thread_ts=THREAD)
    with pytest.raises(ValueError):
        MemoryScope(user_id=USER, thread_ts="1.2/../3.4")


# -- properties ---------------------------------------------------------------------------

_PIECES = st.sampled_from(
    [
        "/memories",
        "/memories/",
        "/memoriesX",
        "/",
        "//",
        "..",
        ".",
        "%2e",
        "%2E",
        "%2f",
        "%2F",
        "%25",
        "%",
        "\\",
        "global",
        "users",
        "sessions",
        USER,
        OTHER_USER,
        f"{USER}X",
        "1712345678-123456",
        "1712345999-000001",
        "context.md",
        "x",
        "\uff0e",
        "\uff0f",
        "\u2215",
        "\u202e",
        "\x00",
        "\n",
        "\t",
        "é",
        "🙂",
    ]
)
_STARTS = st.sampled_from(
    [
        "",
        "/memories",
        "/memories/",
        "/memories/global/",
        "/memories/users/",
        f"/memories/users/{USER}/",
        f"/memories/users/{USER}",
        "/memories/sessions/",
        "/memories/sessions/1712345678-123456/",
    ]
)
_TAILS = st.lists(
    st.one_of(_PIECES, _PIECES.map(lambda p: f"{p}/"), st.text(max_size=4)), max_size=10
)
# Mostly plausible paths into the scope with hostile pieces appended, plus arbitrary text.
_PATHS = st.one_of(
    st.tuples(_STARTS, _TAILS).map(lambda parts: parts[0] + "".join(parts[1])),
    st.text(max_size=40),
)
_ALLOWED = ("global/", f"users/{USER}/", "sessions/1712345678-123456/")


def _fully_unquoted(text: str) -> str:
    for _ in range(5):
        text = unquote(text)
    return text


@settings(max_examples=500, deadline=None, database=None)
@given(_PATHS)
def test_no_path_reaches_a_readable_key_outside_the_scope(memory_path: str) -> None:
    try:
        key = to_key(memory_path)
    except ValueError:
        return
    if not SCOPE.can_read(key):
        return
    # Independent checks of what "inside the scope" means, under every reading of the key
    # that some later layer might apply: as is, percent-decoded, backslashes as separators,
    # and normalised as a POSIX path.
    for reading in (key, _fully_unquoted(key), key.replace("\\", "/")):
        segments = reading.split("/")
        assert ".." not in segments and "." not in segments and "" not in segments
        assert any(f"{reading}/".startswith(root) for root in _ALLOWED), reading
    normalised = posixpath.normpath(f"/memories/{key}")
    assert any(f"{normalised}/".startswith(f"/memories/{root}") for root in _ALLOWED)
    assert all(ord(char) >= 32 for char in key)


@settings(max_examples=300, deadline=None, database=None)
@given(st.one_of(_PATHS, st.none(), st.integers(), st.binary(max_size=8)))
def test_to_key_raises_nothing_but_value_error(memory_path: object) -> None:
    try:
        key = to_key(memory_path)  # type: ignore[arg-type]
    except ValueError:
        return
    assert isinstance(key, str)
    assert to_key(to_memory_path(key)) == key  # a key is always a valid path again


# -- a channel's scope (issue 39) -----------------------------------------------------------

CHANNEL, OTHER_CHANNEL = "C0LAUNCH1", "C0LAUNCH10"  # one's id a prefix of the other's
CHANNEL_SCOPE = paths.ChannelMemoryScope(CHANNEL)


@pytest.mark.parametrize(
    ("key", "readable", "writable"),
    [
        ("global/context.md", True, False),
        (f"channels/{CHANNEL}/decisions.md", True, True),
        (f"channels/{CHANNEL}", True, False),  # the root itself
        (f"channels/{OTHER_CHANNEL}/decisions.md", False, False),
        (f"users/{USER}/preferences.json", False, False),
        (f"{SESSION}context.md", False, False),
        (f"channels/{CHANNEL}X/decisions.md", False, False),  # a channel sharing a prefix
        ("channels", False, False),
        ("", False, False),
    ],
)
def test_a_channels_scope_is_its_directory_and_the_organisations(
    key: str, readable: bool, writable: bool
) -> None:
    assert CHANNEL_SCOPE.can_read(key) is readable
    assert CHANNEL_SCOPE.can_write(key) is writable


def test_a_channels_scope_lists_only_its_own_root() -> None:
    assert CHANNEL_SCOPE.roots == ("global/", f"channels/{CHANNEL}/")
    assert CHANNEL_SCOPE.roots_under("channels") == [f"channels/{CHANNEL}/"]
    assert CHANNEL_SCOPE.roots_under("users") == []


@pytest.mark.parametrize("channel", ["D0123ABCD", "", "c0lower", "C0/../x", "C", None, "U0123"])
def test_a_dm_or_anything_else_is_no_channel(channel: object) -> None:
    with pytest.raises(ValueError):
        paths.ChannelMemoryScope(channel)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        paths.validate_channel(channel)  # type: ignore[arg-type]
