"""`orion memory show|export|forget USER_ID`, run as the real command an operator types."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.memory.homes import person, preferences_key
from tests import log_events
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.layout import conversation, profile
from tests.orion_process import run_orion_command

USER, OTHER = "U0MEMCLI", "U0KEEPME"
DM = "D0MEMCLI"
THREAD = "1712345678.123456"
PREFERENCES = '{"language": "French", "name": "Sam"}'
NOTE = "Q3 budget: travel is over by 12%.\n"
HOME = person(USER)
NOTE_KEY = f"{HOME.memory_prefix}notes/budget.md"
# Within any retention window: Orion's records skip entries older than it.
UPDATED = datetime.now(UTC) - timedelta(days=2)
# The person's preferences, a note and one conversation (with its summary): Forget
# everything deletes those three and leaves their profile holding when it was.
DELETED = "Deleted 3 objects"


@pytest.fixture
def memories(tmp_path: Path) -> Path:
    root = tmp_path / "memories"
    files = {
        preferences_key(USER): PREFERENCES,
        NOTE_KEY: NOTE,
        HOME.profile_key: profile(conversations=[(THREAD, "Q3 budget")], channel_id=DM, at=UPDATED),
        HOME.conversation_key(THREAD): conversation(
            USER,
            THREAD,
            channel_id=DM,
            title="Q3 budget",
            summary="We compared travel costs.",
            messages=[("user", "How is the Q3 budget? Answer in French.")],
            at=UPDATED,
        ),
        preferences_key(OTHER): '{"language": "German"}',
    }
    for key, content in files.items():
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_text(content)
    return root


@pytest.fixture
def slack_with_dm() -> Iterator[FakeSlack]:
    with FakeSlack() as slack:
        slack.set_dm_channel(USER, DM)
        yield slack


def _orion(tmp_path: Path, memories: Path, slack: FakeSlack, *args: str, stdin: str = ""):
    env = {
        "SLACK_BOT_TOKEN": "xoxb-cli-test",
        "SLACK_API_URL": slack.url,
        "ANTHROPIC_API_KEY": "sk-ant-cli-test",
        "MEMORY_DIR": str(memories),
        "LOG_FORMAT": "json",
    }
    return run_orion_command(tmp_path, "memory", *args, env=env, stdin=stdin)


def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}


def _left_of(root: Path, user: str = USER, profile_key: str | None = None) -> list[str]:
    """What names or holds the person, but the mark of their erasure (their profile,
    holding only when it was)."""
    mark = profile_key or person(user).profile_key
    left = _files(root)
    assert json.loads(left[mark]).keys() == {"version", "erased_at"}
    return [k for k, v in left.items() if k != mark and (user in k or user in v or "French" in v)]


def test_show_and_export_print_what_orion_keeps(
    tmp_path: Path, memories: Path, slack_with_dm: FakeSlack
) -> None:
    shown = _orion(tmp_path, memories, slack_with_dm, "show", USER)
    assert shown.returncode == 0, shown.stderr
    for expected in ("language: French", "name: Sam", "notes/budget.md", "Q3 budget"):
        assert expected in shown.stdout
    assert "German" not in shown.stdout

    out = tmp_path / "export.md"
    exported = _orion(tmp_path, memories, slack_with_dm, "export", USER, "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    document = out.read_text()
    assert NOTE.strip() in document and "We compared travel costs." in document


def test_forget_asks_first_then_removes_everything_of_the_person_only(
    tmp_path: Path, memories: Path, slack_with_dm: FakeSlack
) -> None:
    refused = _orion(tmp_path, memories, slack_with_dm, "forget", USER, stdin="no\n")
    assert refused.returncode == 1 and "nothing was deleted" in refused.stdout
    # No answer at all (a script, Ctrl-D): the same refusal, no traceback.
    unanswered = _orion(tmp_path, memories, slack_with_dm, "forget", USER, stdin="")
    assert unanswered.returncode == 1 and "nothing was deleted" in unanswered.stdout
    assert unanswered.stderr == ""
    assert preferences_key(USER) in _files(memories)

    done = _orion(tmp_path, memories, slack_with_dm, "forget", USER, stdin=f"{USER}\n")
    assert done.returncode == 0, done.stderr
    assert DELETED in done.stdout
    assert _left_of(memories) == []
    assert _files(memories)[preferences_key(OTHER)] == '{"language": "German"}'
    assert slack_with_dm.calls == [], "the person's home is all there is: Slack is not asked"
    assert done.stderr == ""
    log = (tmp_path / ".orion" / "memory.log").read_text()
    assert log_events.MEMORY_FORGET in log
    assert "French" not in log and "Q3" not in log, "logs carry counts only"


def test_a_bad_user_id_is_refused_clearly(
    tmp_path: Path, memories: Path, slack_with_dm: FakeSlack
) -> None:
    result = _orion(tmp_path, memories, slack_with_dm, "forget", "../etc", "--yes")
    assert result.returncode == 2
    assert result.stderr == (
        "orion memory cannot run — USER_ID: not a Slack user id (like U0123ABCD): '../etc'\n"
    )


# --- commands that cannot mislead ------------------------------------------------------------


def _storage_only(tmp_path: Path, *args: str, cwd: Path | None = None, **env: str):
    """The command with nothing but storage settings: no Slack or Anthropic key."""
    return run_orion_command(cwd or tmp_path, "memory", *args, env={"LOG_FORMAT": "json", **env})


def test_each_command_names_the_store_it_acts_on_as_an_absolute_path(
    tmp_path: Path, memories: Path
) -> None:
    # A relative MEMORY_DIR, resolved where the command runs.
    relative = str(memories.relative_to(tmp_path))
    for action in ("show", "export"):
        result = _storage_only(tmp_path, action, USER, MEMORY_DIR=relative)
        assert result.returncode == 0, result.stderr
        named = result.stdout if action == "show" else result.stderr  # stdout is the export
        assert f"Memory store: {memories.resolve()}\n" in named


def test_forget_from_another_directory_fails_naming_the_missing_directory(
    tmp_path: Path, memories: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    relative = str(memories.relative_to(tmp_path))
    before = _files(memories)

    result = _storage_only(tmp_path, "forget", USER, "--yes", cwd=elsewhere, MEMORY_DIR=relative)

    assert result.returncode != 0
    assert str((elsewhere / relative).resolve()) in result.stderr
    assert "Deleted" not in result.stdout and "Traceback" not in result.stderr
    assert not (elsewhere / relative).exists(), "no empty store was made up"
    assert _files(memories) == before, "the person's files are untouched"
    for action in ("show", "export"):
        shown = _storage_only(tmp_path, action, USER, cwd=elsewhere, MEMORY_DIR=relative)
        assert shown.returncode != 0 and "Nothing" not in shown.stdout
        assert str((elsewhere / relative).resolve()) in shown.stderr


def test_storage_settings_alone_show_export_and_forget(tmp_path: Path, memories: Path) -> None:
    store = {"MEMORY_DIR": str(memories)}
    shown = _storage_only(tmp_path, "show", USER, **store)
    assert shown.returncode == 0, shown.stderr
    assert "language: French" in shown.stdout

    out = tmp_path / "export.md"
    exported = _storage_only(tmp_path, "export", USER, "-o", str(out), **store)
    assert exported.returncode == 0, exported.stderr
    assert NOTE.strip() in out.read_text()

    done = _storage_only(tmp_path, "forget", USER, "--yes", **store)
    assert done.returncode == 0, done.stderr
    assert DELETED in done.stdout
    assert _left_of(memories) == []


def test_the_export_file_is_readable_by_its_owner_only(tmp_path: Path, memories: Path) -> None:
    fresh, existing = tmp_path / "fresh.md", tmp_path / "existing.md"
    existing.write_text("an older export")
    existing.chmod(0o644)
    for out, force in ((fresh, ()), (existing, ("--force",))):
        result = _storage_only(
            tmp_path, "export", USER, "-o", str(out), *force, MEMORY_DIR=str(memories)
        )
        assert result.returncode == 0, result.stderr
        assert f"to {out}\n" in result.stdout
        assert out.stat().st_mode & 0o777 == 0o600
        assert NOTE.strip() in out.read_text()


def test_an_export_never_replaces_a_file_without_force(tmp_path: Path, memories: Path) -> None:
    existing = tmp_path / "export.md"
    existing.write_text("an older export")

    result = _storage_only(tmp_path, "export", USER, "-o", str(existing), MEMORY_DIR=str(memories))

    assert result.returncode == 2
    assert result.stderr == (
        f"orion memory cannot run — --output: {existing} exists; pass --force to replace it\n"
    )
    assert existing.read_text() == "an older export" and "Wrote" not in result.stdout


def test_show_marks_where_a_note_goes_on(tmp_path: Path, memories: Path) -> None:
    long_note = "".join(f"Line {n} of a long note.\n" for n in range(1, 61))
    (memories / HOME.memory_prefix / "notes" / "long.md").write_text(long_note)

    shown = _storage_only(tmp_path, "show", USER, MEMORY_DIR=str(memories))

    assert shown.returncode == 0, shown.stderr
    note = shown.stdout[shown.stdout.index("notes/long.md") :]
    assert "Line 3 of a long note.\n…\n```" in note and "Line 4 " not in note
    assert f"(… marks where a note or summary goes on: `export {USER}` has it all.)" in shown.stdout


def test_forget_with_langfuse_unreachable_is_incomplete(tmp_path: Path, memories: Path) -> None:
    langfuse = {
        "LANGFUSE_PUBLIC_KEY": "pk-lf-cli-test",
        "LANGFUSE_SECRET_KEY": "sk-lf-cli-test",
        "LANGFUSE_BASE_URL": "http://127.0.0.1:9",
    }
    result = _storage_only(tmp_path, "forget", USER, "--yes", MEMORY_DIR=str(memories), **langfuse)

    assert result.returncode == 5
    log = tmp_path / ".orion" / "memory.log"
    assert result.stdout.endswith(
        f"Langfuse traces were NOT deleted: Langfuse could not be reached (details in {log}).\n"
    )
    assert DELETED in result.stdout and "Traceback" not in result.stderr


def test_forget_has_no_dm_to_be_told_any_more(tmp_path: Path, memories: Path) -> None:
    before = _files(memories)
    result = _storage_only(tmp_path, "forget", USER, "--yes", "--dm", DM, MEMORY_DIR=str(memories))
    assert result.returncode == 2 and "--dm" in result.stderr
    assert _files(memories) == before


def test_forgetting_someone_orion_has_nothing_of_says_so_and_fails_unless_allowed(
    tmp_path: Path, memories: Path
) -> None:
    nobody = "U0NOBODY"
    before = _files(memories)

    result = _storage_only(tmp_path, "forget", nobody, "--yes", MEMORY_DIR=str(memories))
    assert result.returncode != 0
    assert f"Found nothing of {nobody} in {memories.resolve()}" in result.stdout
    assert "Deleted" not in result.stdout

    allowed = _storage_only(
        tmp_path, "forget", nobody, "--yes", "--allow-empty", MEMORY_DIR=str(memories)
    )
    assert allowed.returncode == 0, allowed.stderr
    assert f"Found nothing of {nobody}" in allowed.stdout
    others = {k: v for k, v in _files(memories).items() if k != person(nobody).profile_key}
    assert others == before, "nobody else's memory was touched"


def test_with_a_bucket_the_commands_name_it_and_need_only_its_settings(
    tmp_path: Path, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    gcs_emulator.write(gcs_bucket, preferences_key(USER), PREFERENCES)
    bucket = {"GCS_MEMORIES_BUCKET": gcs_bucket, **gcs_emulator.env()}

    shown = _storage_only(tmp_path, "show", USER, **bucket)
    assert shown.returncode == 0, shown.stderr
    assert f"Memory store: gs://{gcs_bucket}\n" in shown.stdout
    assert "language: French" in shown.stdout

    done = _storage_only(tmp_path, "forget", USER, "--yes", **bucket)
    assert done.returncode == 0, done.stderr
    assert (
        f"Memory store: gs://{gcs_bucket}\n" in done.stdout and "Deleted 1 object (" in done.stdout
    )
    assert gcs_emulator.read(gcs_bucket, preferences_key(USER)) is None

    missing = {**bucket, "GCS_MEMORIES_BUCKET": f"{gcs_bucket}-missing"}
    result = _storage_only(tmp_path, "forget", USER, "--yes", **missing)
    assert result.returncode != 0
    assert f"gs://{gcs_bucket}-missing" in result.stdout + result.stderr
    assert "Deleted" not in result.stdout


@pytest.mark.parametrize("trouble", ["no such bucket", "no credentials", "no answer"])
def test_a_bucket_that_cannot_be_used_is_one_line_saying_why_and_what_to_do(
    tmp_path: Path, gcs_emulator: GcsEmulator, gcs_bucket: str, trouble: str, refused_port: int
) -> None:
    name = f"{gcs_bucket}-misspelt" if trouble == "no such bucket" else gcs_bucket
    env = {"GCS_MEMORIES_BUCKET": f"gs://{name}", **gcs_emulator.env()}  # gs://: as copied
    if trouble == "no credentials":
        # As on a laptop without `gcloud auth application-default login` (and not on GCE).
        del env["STORAGE_EMULATOR_HOST"]
        env["NO_GCE_CHECK"] = "true"
    elif trouble == "no answer":
        env["STORAGE_EMULATOR_HOST"] = f"http://127.0.0.1:{refused_port}"

    result = _storage_only(tmp_path, "forget", USER, "--yes", **env)

    expected = {
        "no such bucket": (2, f"GCS_MEMORIES_BUCKET: no bucket gs://{name} (misspelt, or not"),
        "no credentials": (2, "GCS_MEMORIES_BUCKET: no Google credentials on this machine"),
        "no answer": (69, f"GCS_MEMORIES_BUCKET: Cloud Storage did not answer for gs://{name}"),
    }[trouble]
    shown = [line for line in result.stderr.splitlines() if line]
    assert result.returncode == expected[0], result.stderr
    assert len(shown) == 1 and shown[0].startswith(f"orion memory cannot run — {expected[1]}")
    assert "Traceback" not in result.stdout + result.stderr
    assert "Deleted" not in result.stdout and "gs://gs://" not in result.stdout


def test_migrate_from_another_directory_names_the_missing_directory_and_moves_nothing(
    tmp_path: Path,
) -> None:
    # An operator runs the upgrade where the relative MEMORY_DIR is not: "nothing to move"
    # would pass for an upgrade done. An existing store with nothing old in it is done.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    missing = (elsewhere / ".orion" / "memories").resolve()

    result = run_orion_command(elsewhere, "migrate", env={"MEMORY_DIR": ".orion/memories"})

    assert result.returncode == 2
    assert result.stderr == (
        f"orion migrate stopped — MEMORY_DIR: no directory at {missing}, so nothing was "
        "moved; run from where Orion runs, or set MEMORY_DIR to an absolute path\n"
    )
    assert result.stdout == "" and not missing.exists()
    missing.mkdir(parents=True)
    for _ in range(2):
        done = run_orion_command(elsewhere, "migrate", env={"MEMORY_DIR": ".orion/memories"})
        assert done.returncode == 0, done.stderr
        assert done.stdout == (
            f"Memory store: {missing}\nNothing of the earlier layout is left: nothing to move.\n"
        )


@pytest.mark.parametrize("trouble", ["no such bucket", "no credentials"])
def test_migrate_with_a_bucket_that_cannot_be_used_says_why_not_run_again(
    tmp_path: Path, gcs_emulator: GcsEmulator, gcs_bucket: str, trouble: str
) -> None:
    # Not "the store failed …: run the command again", which no rerun mends.
    name = f"{gcs_bucket}-misspelt" if trouble == "no such bucket" else gcs_bucket
    env = {"GCS_MEMORIES_BUCKET": name, **gcs_emulator.env()}
    if trouble == "no credentials":
        del env["STORAGE_EMULATOR_HOST"]
        env["NO_GCE_CHECK"] = "true"

    result = run_orion_command(tmp_path, "migrate", env=env)

    expected = {
        "no such bucket": f"GCS_MEMORIES_BUCKET: no bucket gs://{name} (misspelt, or not",
        "no credentials": "GCS_MEMORIES_BUCKET: no Google credentials on this machine",
    }[trouble]
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"orion migrate stopped — {expected}")
    assert "run the command again" not in line
    assert result.stdout == f"Memory store: gs://{name}\n"


def test_an_export_that_cannot_be_written_says_where(tmp_path: Path, memories: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    out = blocked / "export.md"  # under a file: no directory can be made there

    result = _storage_only(tmp_path, "export", USER, "-o", str(out), MEMORY_DIR=str(memories))

    assert result.returncode != 0
    assert result.stderr.splitlines()[-1] == (
        f"orion memory cannot run — --output: could not write {out} (Not a directory)"
    )
    assert "Wrote" not in result.stdout


# --- distribution mode: one workspace at a time ---------------------------------------------

TEAM_A, TEAM_B = "TAAAA1", "TBBBB2"


def _distribution_orion(tmp_path: Path, memories: Path, *args: str, stdin: str = ""):
    env = {"SLACK_CLIENT_ID": "1111.2222", "MEMORY_DIR": str(memories), "LOG_FORMAT": "json"}
    return run_orion_command(tmp_path, "memory", *args, env=env, stdin=stdin)


@pytest.fixture
def two_workspaces(tmp_path: Path) -> Path:
    """The same user id in two workspaces (two people), as distribution mode keeps them."""
    root = tmp_path / "memories"
    for team, language in ((TEAM_A, "French"), (TEAM_B, "German")):
        files = {
            f"people/teams/-/{team}/{USER}/memory/preferences.json": (
                f'{{"language": "{language}"}}'
            ),
            f"people/teams/-/{team}/{USER}/memory/notes/budget.md": f"{team}'s note\n",
        }
        for key, content in files.items():
            (root / key).parent.mkdir(parents=True, exist_ok=True)
            (root / key).write_text(content)
    return root


def test_in_distribution_mode_each_command_acts_in_the_one_workspace_named(
    tmp_path: Path, two_workspaces: Path
) -> None:
    shown = _distribution_orion(tmp_path, two_workspaces, "show", USER, "--team", TEAM_A)
    assert shown.returncode == 0, shown.stderr
    assert "language: French" in shown.stdout and "German" not in shown.stdout
    assert f"Workspace: teams/-/{TEAM_A}" in shown.stdout
    b_before = {k: v for k, v in _files(two_workspaces).items() if TEAM_B in k}

    forgot = _distribution_orion(
        tmp_path, two_workspaces, "forget", USER, "--team", TEAM_A, "--yes"
    )

    assert forgot.returncode == 0, forgot.stderr
    left = _files(two_workspaces)
    mark = f"people/teams/-/{TEAM_A}/{USER}/profile.json"  # when they were forgotten
    assert [key for key in left if TEAM_A in key] == [mark]
    assert json.loads(left[mark]).keys() == {"version", "erased_at"}
    assert {k: v for k, v in left.items() if TEAM_B in k} == b_before


@pytest.mark.parametrize(
    "extra, problem",
    [
        ((), "--team: required in distribution mode"),
        (("--team", "../TAAAA1"), "--team/--enterprise: not a Slack team id"),
        (("--team", TEAM_A, "--enterprise", "E/../x"), "not a Slack enterprise id"),
    ],
)
def test_in_distribution_mode_a_missing_or_bad_team_is_refused_touching_nothing(
    tmp_path: Path, two_workspaces: Path, extra: tuple[str, ...], problem: str
) -> None:
    before = _files(two_workspaces)
    result = _distribution_orion(tmp_path, two_workspaces, "forget", USER, "--yes", *extra)
    assert result.returncode == 2
    assert problem in result.stderr and "Traceback" not in result.stderr
    assert _files(two_workspaces) == before


def test_a_team_is_refused_outside_distribution_mode(
    tmp_path: Path, memories: Path, slack_with_dm: FakeSlack
) -> None:
    before = _files(memories)
    result = _orion(tmp_path, memories, slack_with_dm, "forget", USER, "--yes", "--team", TEAM_A)
    assert result.returncode == 2 and "--team: only in distribution mode" in result.stderr
    assert _files(memories) == before


def test_a_distribution_store_reached_with_single_workspace_settings_is_refused(
    tmp_path: Path, two_workspaces: Path
) -> None:
    """An operator's shell without SLACK_CLIENT_ID, pointed at a distribution deployment's
    store: `show` would find nothing of the person (their objects are under a workspace's
    keys) and say so with exit 0 — it is refused instead, naming what to set."""
    bot = two_workspaces / f"installations/-/{TEAM_A}/bot.json"
    bot.parent.mkdir(parents=True)
    bot.write_text('{"bot_token": "xoxb-A"}')
    env = {"MEMORY_DIR": str(two_workspaces), "LOG_FORMAT": "json"}
    for action in ("show", "export"):
        result = run_orion_command(tmp_path, "memory", action, USER, env=env)
        assert result.returncode == 2, result.stdout
        assert "distribution mode" in result.stderr and "--team" in result.stderr
        assert "French" not in result.stdout and "Traceback" not in result.stderr
