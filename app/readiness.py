"""`GET /readyz`: can this instance do its job now, and if not, why (docs/operations.md,
"Health and readiness"). `serving` is false from SIGTERM on; `storage` is the breaker's
state, or whether a local memory directory can be written. An unreachable bucket makes
Orion *degraded*, not unready: it still answers, without memories, and failing readiness
would only stop Cloud Run from starting the instances a burst needs. Both probes read
state already in memory, and the body names states only — never a token, a bucket, a URL
or an error's text (the endpoint is public)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.services import ServiceProvider


@dataclass(frozen=True)
class Check:
    ok: bool
    state: str
    reason: str | None = None  # why it is not ok
    details: dict[str, Any] = field(default_factory=dict)
    # False: Orion still does its job without it, degraded (the store).
    required: bool = True

    def as_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "state": self.state, **self.details}


@dataclass(frozen=True)
class Readiness:
    checks: dict[str, Check]

    @property
    def ready(self) -> bool:
        return all(check.ok for check in self.checks.values() if check.required)

    @property
    def degraded(self) -> bool:
        return any(not check.ok for check in self.checks.values() if not check.required)

    def as_json(self) -> dict[str, Any]:
        reasons = [check.reason for check in self.checks.values() if check.reason]
        return {
            "ready": self.ready,
            "degraded": self.degraded,
            "reasons": reasons,
            "checks": {name: check.as_json() for name, check in self.checks.items()},
        }


def readiness(provider: ServiceProvider, *, stopping: bool) -> Readiness:
    serving = (
        Check(False, "stopping", "serving: stopping (SIGTERM); answers in flight drain")
        if stopping
        else Check(True, "ready")
    )
    return Readiness({"serving": serving, "storage": _storage_check(provider)})


def _storage_check(provider: ServiceProvider) -> Check:
    from app.storage.breaker import GuardedStore

    store = provider.storage.store
    if not isinstance(store, GuardedStore):  # a local directory: nothing to reach, but
        # it can stop being usable (removed, replaced by a file, made read-only).
        from app.storage.local_directory import directory_problem

        details = {"backend": "local"}
        if problem := directory_problem(provider.settings.memory_dir):
            reason = f"storage: the memory directory (MEMORY_DIR) {problem}"
            return Check(False, "unusable", reason, details)
        return Check(True, "ready", details=details)
    from app.storage.store import BucketNotFound, NoCredentials

    details = {"backend": "gcs", "breaker": "closed" if store.available else "open"}
    outage = store.outage
    if isinstance(outage, BucketNotFound):
        reason = "storage: the bucket GCS_MEMORIES_BUCKET names does not exist"
        return Check(False, "bucket_missing", reason, details, required=False)
    if isinstance(outage, NoCredentials):
        reason = "storage: no Google credentials found for the bucket"
        return Check(False, "no_credentials", reason, details, required=False)
    if not store.available:
        reason = "storage: unreachable (circuit breaker open until a probe sees it answer)"
        return Check(False, "unreachable", reason, details, required=False)
    return Check(True, "ready", details=details)
