"""`orion migrate` as an operator runs it (docs/interface.md, "Commands"; docs/operations.md,
"Upgrading"): on a store the earlier layout wrote, with storage settings alone, it moves
everything home and says what moved; run again it finds nothing to move; bad settings exit 2
in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.orion_process import REPO, run_orion_command

LEGACY = REPO / "tests" / "data" / "legacy_2026_11_28"


def test_migrate_moves_the_earlier_layout_home_and_a_second_run_finds_nothing(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    shutil.copytree(LEGACY / "store", store)
    sam = json.loads((LEGACY / "expected.json").read_text())["stores"]["store"]["people"][0]
    env = {"MEMORY_DIR": str(store), "LOG_FORMAT": "json"}

    first = run_orion_command(tmp_path, "migrate", env=env)
    again = run_orion_command(tmp_path, "migrate", env=env)

    assert first.returncode == 0, first.stderr
    assert f"Memory store: {store}" in first.stdout
    assert "Moved home: channels: 1, conversations: 4, files: 5, people: 3." in first.stdout
    preferences = store / "people" / sam["user"] / "memory" / "preferences.json"
    assert json.loads(preferences.read_text())["name"] == "Sam"
    assert not (store / "users").exists() and not (store / "sessions").exists()
    assert again.returncode == 0, again.stderr
    assert "Nothing of the earlier layout is left: nothing to move." in again.stdout


def test_migrate_with_a_bad_setting_names_it_in_one_line_and_exits_2(tmp_path: Path) -> None:
    result = run_orion_command(
        tmp_path, "migrate", env={"GCS_MEMORIES_BUCKET": "Not A Bucket!", "LOG_FORMAT": "json"}
    )

    assert result.returncode == 2, result.stderr
    [line] = [line for line in result.stderr.splitlines() if line]
    assert "GCS_MEMORIES_BUCKET" in line
    assert "Traceback" not in result.stdout + result.stderr
