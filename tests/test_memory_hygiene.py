"""What Orion may keep, as deployed: the store `build_storage` composes scrubs secrets
and expires conversations on both backends (the breaker still outermost), and the bucket's
lifecycle rule, applied by the deploy, deletes what the app no longer loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from app.config import Settings
from app.memory.key_prefixes import KEY_PREFIXES, Lifetime
from app.memory.retention import ExpiringSessionsStore
from app.memory.secret_free_store import SecretFreeStore
from app.memory.shared_context import SharedContextCache
from app.services import build_storage
from app.storage.breaker import GuardedStore
from app.storage.gcs import GcsObjectStore
from app.storage.local_directory import LocalDirectoryStore
from app.storage.store import ObjectStore
from tests.fakes.gcs import GcsEmulator

ROOT = Path(__file__).resolve().parents[1]
SLACK_TOKEN = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
NOTES_KEY = "users/U0123ABCD/notes.md"


def settings(**values: Any) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None, slack_bot_token="xoxb-test", anthropic_api_key="test", **values
    )


def layers(store: ObjectStore) -> list[type]:
    found = []
    while store is not None:
        found.append(type(store))
        store = getattr(store, "inner", None)
    return found


async def test_the_local_directory_is_kept_secret_free(tmp_path: Path) -> None:
    storage = build_storage(settings(memory_dir=tmp_path / "memories"))
    assert layers(storage.store) == [SecretFreeStore, ExpiringSessionsStore, LocalDirectoryStore]
    # Memory reads share the organisation's context, over the very same store.
    assert isinstance(storage.memory_store, SharedContextCache)
    assert storage.memory_store.inner is storage.store

    await storage.store.write(NOTES_KEY, f"bot token {SLACK_TOKEN}")
    assert (tmp_path / "memories" / NOTES_KEY).read_text() == "bot token [redacted]"


async def test_the_bucket_is_kept_secret_free_behind_its_breaker(
    gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    storage = build_storage(
        settings(gcs_memories_bucket=gcs_bucket, memory_session_retention_days=7)
    )
    # The breaker stays outermost: readiness and retry dedupe look for it there.
    assert layers(storage.store) == [
        GuardedStore,
        SecretFreeStore,
        ExpiringSessionsStore,
        GcsObjectStore,
    ]
    expiring = storage.store.inner.inner  # type: ignore[attr-defined]
    assert expiring.retention.days == 7
    try:
        await storage.store.write(NOTES_KEY, f"bot token {SLACK_TOKEN}")
        assert gcs_emulator.read(gcs_bucket, NOTES_KEY) == b"bot token [redacted]"
    finally:
        await storage.store.close()


# --- the bucket's lifecycle rule ---------------------------------------------------------


def lifecycle_rules() -> list[dict[str, Any]]:
    rules = json.loads((ROOT / "gcs-lifecycle.json").read_text())["rule"]
    assert all(rule["action"] == {"type": "Delete"} for rule in rules)
    return rules


def age_of(prefix: str) -> int | None:
    ages = [
        rule["condition"]["age"]
        for rule in lifecycle_rules()
        if prefix in rule["condition"].get("matchesPrefix", [])
    ]
    assert len(ages) <= 1, f"{prefix} is in several rules"
    return ages[0] if ages else None


def test_the_lifecycle_rule_deletes_each_prefix_when_the_list_of_prefixes_says() -> None:
    default_days = Settings.model_fields["memory_session_retention_days"].default
    ages = {
        Lifetime.CONVERSATION: default_days,  # conversations, after the retention window
        Lifetime.DAY: 1,  # retry claims
        Lifetime.KEPT: None,  # never by age
    }
    for kind in KEY_PREFIXES:
        assert age_of(kind.prefix) == ages[kind.lifetime], kind.prefix


def test_the_lifecycle_rule_names_only_prefixes_orion_writes() -> None:
    listed = {kind.prefix for kind in KEY_PREFIXES}
    for rule in lifecycle_rules():
        assert set(rule["condition"].get("matchesPrefix", [])) <= listed, rule


def test_the_lifecycle_rule_never_touches_preferences_notes_or_global_context() -> None:
    for rule in lifecycle_rules():
        prefixes = rule["condition"].get("matchesPrefix")
        assert prefixes, "a rule without a prefix would match every object"
        for kept in ("users/U0123ABCD/preferences.json", "users/U0123ABCD/notes.md", "global/"):
            assert not any(kept.startswith(prefix) for prefix in prefixes), kept


def test_the_deploy_applies_the_lifecycle_rule_to_the_bucket() -> None:
    build = yaml.safe_load((ROOT / "cloudbuild.yaml").read_text())
    commands = [
        step.get("args", []) for step in build["steps"] if step.get("entrypoint") == "gcloud"
    ]
    assert [
        "storage",
        "buckets",
        "update",
        "gs://${_BUCKET}",
        "--lifecycle-file=gcs-lifecycle.json",
        "--clear-soft-delete",
    ] in commands
