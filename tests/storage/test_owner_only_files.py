"""Owner-only files written whole: `replace=False` never replaces what is there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.storage.owner_only_files import replace_file


def test_a_file_that_must_not_be_replaced_is_left_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "export.md"
    target.write_text("an older export")

    with pytest.raises(FileExistsError):
        replace_file(str(target), b"new", modified_ns=0, replace=False)

    assert target.read_text() == "an older export"
    assert os.listdir(tmp_path) == ["export.md"], "no temporary file is left behind"


def test_a_new_file_is_written_owner_only(tmp_path: Path) -> None:
    target = tmp_path / "fresh" / "export.md"

    replace_file(str(target), b"everything", modified_ns=0, replace=False)

    assert target.read_bytes() == b"everything" and target.stat().st_mode & 0o777 == 0o600
