"""`GET /readyz`: can this instance do its job now, and if not, why.

`/healthz` only says the process answers HTTP (Cloud Run's liveness probe: a storage
outage must not get healthy instances restarted). `/readyz` is 200 only when Orion can
serve a person fully, and 503 otherwise, naming what is missing:

- `services`: the agent and its Claude client are built (the start-up builds are retried
  until they are: app/runtime/retrying_build.py);
- `claude`: that client is open;
- `storage`: the store is built, has been asked one thing since, and its circuit
  breaker (app/storage/breaker.py) is closed — it is answering; or, for a local memory
  directory, that directory can still be written to. An unreachable bucket
  makes Orion *degraded*, not unready: it still greets and answers, without memories
  (docs/architecture.md), as every other instance does meanwhile; failing readiness would only stop
  Cloud Run from starting the instances a burst needs. `/readyz` stays 200 and says so
  (`degraded`, with the reason);
- `slack_auth`: Slack accepted the bot token (`auth.test`, once at start). In
  distribution mode there is no one token: each workspace's is checked by Bolt on each of
  its events, and an unknown workspace gets no answer; the check says `per_team`;
- `workers`, with `HTTP_WORKERS` above 1: every worker of the instance has passed the
  checks above and still runs (app/runtime/worker_siblings.py). The probe reaches one
  worker; without this it could pass while the other still builds. A worker replaced
  later makes the instance unready until the new one is ready (Cloud Run asks only at
  start; its liveness probe asks /healthz).

It reads state already in memory (with several workers, also their markers in a local
directory): no request goes out per probe, so probing often costs nothing and a slow
dependency cannot make the probe itself time out. The body names states and error types
only: never a token, a bucket, a URL or an error's text (the
endpoint is public, like every route of the service).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.observability.logging import get_logger
from app.runtime.retrying_build import BuildState, BuildStatus
from app.runtime.slack_auth import SlackAuthCheck
from app.runtime.worker_siblings import WorkerSiblings
from app.services import ServiceProvider

log = get_logger(__name__)


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


def readiness(provider: ServiceProvider, slack_auth: SlackAuthCheck | None) -> Readiness:
    """`slack_auth` None: distribution mode (every workspace's own token)."""
    checks = _own_checks(provider, slack_auth)
    siblings = provider.worker_siblings
    if siblings is not None:
        checks["workers"] = _workers_check(siblings, provider.settings.http_workers)
    return Readiness(checks)


def ready_here(provider: ServiceProvider, slack_auth: SlackAuthCheck | None) -> bool:
    """Whether this worker passes its own checks (what it tells its siblings)."""
    return Readiness(_own_checks(provider, slack_auth)).ready


def _own_checks(provider: ServiceProvider, slack_auth: SlackAuthCheck | None) -> dict[str, Check]:
    return {
        "services": _build_check("services", provider.services_status),
        "claude": _claude_check(provider),
        "storage": _storage_check(provider),
        "slack_auth": (
            _build_check("slack_auth", slack_auth.status())
            if slack_auth is not None
            else Check(True, "per_team")
        ),
    }


def _workers_check(siblings: WorkerSiblings, expected: int) -> Check:
    try:
        ready = siblings.ready_workers()
    except OSError as exc:
        log.warning("readiness.workers_unreadable", error=type(exc).__name__, exc_info=exc)
        reason = f"workers: their directory cannot be read ({type(exc).__name__})"
        return Check(False, "unknown", reason, {"expected": expected})
    details = {"ready": ready, "expected": expected}
    if ready >= expected:
        return Check(True, "ready", details=details)
    return Check(False, "starting", f"workers: {ready} of {expected} ready", details)


def _build_check(name: str, status: BuildStatus) -> Check:
    details: dict[str, Any] = {"attempts": status.attempts}
    if status.error is not None:
        details["last_error"] = status.error
    if status.ready:
        return Check(True, status.state.value, details=details)
    if status.state is BuildState.FAILED:
        reason = f"{name}: {status.detail}"
    elif status.state is BuildState.RETRYING:
        reason = f"{name}: an attempt failed ({status.error}); retrying with back-off"
    else:
        reason = f"{name}: not ready yet (starting)"
    return Check(False, status.state.value, reason, details)


def _claude_check(provider: ServiceProvider) -> Check:
    services = provider.built_services
    if services is None:
        # Not a reason of its own: `services` says why it is not built yet.
        return Check(False, "not_built")
    if services.claude.is_closed():
        return Check(False, "closed", "claude: the client is closed (shutting down)")
    return Check(True, "ready")


def _storage_check(provider: ServiceProvider) -> Check:
    storage = provider.built_storage
    if storage is None:
        return _build_check("storage", provider.storage_status)
    from app.storage.breaker import GuardedStore

    store = storage.store
    if not isinstance(store, GuardedStore):  # a local directory: nothing to reach, but
        # it can stop being usable (removed, replaced by a file, made read-only).
        from app.storage.local_directory import directory_problem

        details = {"backend": "local"}
        if problem := directory_problem(provider.settings.memory_dir):
            reason = f"storage: the memory directory (MEMORY_DIR) {problem}"
            return Check(False, "unusable", reason, details)
        return Check(True, "ready", details=details)
    details = {"backend": "gcs", "breaker": "closed" if store.available else "open"}
    if not store.available:
        reason = "storage: unreachable (circuit breaker open until a probe sees it answer)"
        return Check(False, "unreachable", reason, details, required=False)
    if not provider.storage_checked:
        return Check(False, "checking", "storage: not checked yet", details)
    return Check(True, "ready", details=details)
