"""Erased means erased in the bucket: no soft-deleted copy for anyone to restore.

Cloud Storage keeps a deleted or overwritten object for 7 days by default (soft delete).
Every erasure Orion makes — "forget everything", forgetting one item, retention, an
uninstall — deletes or overwrites objects, so with the default every one of them left a
copy that whoever holds `storage.objects.restore` on the bucket could bring back. The
deploy script turns soft delete off on the bucket before it deploys, and the docs say how
long erased data can be recovered, and by whom.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SOFT_DELETE_OFF = ("--clear-soft-delete", "--soft-delete-duration=0")


def _steps() -> list[dict[str, object]]:
    return yaml.safe_load((ROOT / "cloudbuild.yaml").read_text())["steps"]


def test_the_deploy_script_turns_soft_delete_off_on_the_memory_bucket_before_deploying() -> None:
    steps = _steps()
    ids = [step.get("id") for step in steps]
    bucket_updates = [
        (ids.index(step.get("id")), step["args"])
        for step in steps
        if step.get("entrypoint") == "gcloud"
        and list(step.get("args", []))[:4] == ["storage", "buckets", "update", "gs://${_BUCKET}"]
    ]
    assert bucket_updates, "no step updates the memory bucket"
    turned_off = [
        index for index, args in bucket_updates if any(flag in args for flag in SOFT_DELETE_OFF)
    ]
    assert turned_off, "no step turns the memory bucket's soft delete off"
    assert min(turned_off) < ids.index("deploy")
    # Nothing turns it back on.
    for _, args in bucket_updates:
        durations = [arg for arg in args if str(arg).startswith("--soft-delete-duration")]
        assert durations in ([], ["--soft-delete-duration=0"])


def test_the_docs_say_how_long_erased_data_can_be_recovered_and_by_whom() -> None:
    for doc in ("memory-controls.md", "operations.md", "distribution.md"):
        text = " ".join((ROOT / "docs" / doc).read_text().split())
        assert "soft delete" in text, doc
        assert "storage.objects.restore" in text, doc  # who could restore
        assert "7 days" in text, doc  # for how long, where it is on
    operations = " ".join((ROOT / "docs" / "operations.md").read_text().split())
    assert "--clear-soft-delete" in operations
    assert "cannot be restored by anyone" in operations
