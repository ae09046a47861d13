"""What a command at a terminal (`orion chat`, `orion memory …`) says when the bucket cannot be
used at all (no credentials, no such bucket, not allowed, no answer: app/storage/gcs_connection.py):
one line naming the setting and what to do, and the exit code (docs/interface.md)."""

from __future__ import annotations

from app.config import EXIT_PROBLEM, EXIT_UNAVAILABLE, StorageSettings
from app.storage.store import (
    AccessDenied,
    BucketNotFound,
    NoCredentials,
    StoreError,
    StoreUnreachable,
)


def store_problem(settings: StorageSettings, error: StoreError) -> tuple[str, int] | None:
    """The problem line (`GCS_MEMORIES_BUCKET: …`) and the exit code for `error`; None when
    it is none of these (a failure of one operation, not of the bucket)."""
    bucket = settings.gcs_memories_bucket
    if not bucket:
        return None
    where, code = f"gs://{bucket}", EXIT_PROBLEM
    if isinstance(error, BucketNotFound):
        problem = (
            f"no bucket {where} (misspelt, or not created yet: "
            f"`gcloud storage buckets create {where}`)"
        )
    elif isinstance(error, NoCredentials):
        problem = (
            f"no Google credentials on this machine to use {where}: run `gcloud auth "
            "application-default login` (or set GOOGLE_APPLICATION_CREDENTIALS), or unset "
            "GCS_MEMORIES_BUCKET to keep memories in MEMORY_DIR"
        )
    elif isinstance(error, AccessDenied):
        problem = (
            f"these Google credentials may not use {where} (403): grant them "
            "roles/storage.objectUser on it, or use the credentials that may"
        )
    elif isinstance(error, StoreUnreachable):
        problem = (
            f"Cloud Storage did not answer for {where}: check the network (or "
            "STORAGE_EMULATOR_HOST, if set) and try again"
        )
        code = EXIT_UNAVAILABLE
    else:
        return None
    return f"GCS_MEMORIES_BUCKET: {problem}", code
