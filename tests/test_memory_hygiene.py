"""What Orion may keep, as deployed: the store `build_storage` composes scrubs secrets
and expires conversations on both backends (the breaker still outermost), and the bucket's
lifecycle rule, applied by the deploy, deletes what the app no longer loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from app.config import Settings
from app.memory.homes import channel, person, preferences_key, workspace_channels_key
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
NOTES_KEY = f"{person('U0123ABCD').memory_prefix}notes.md"


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
    ages = {
        Lifetime.DAY: 1,  # retry claims
        Lifetime.KEPT: None,  # never by age
        Lifetime.HOME: None,  # only what the store marks (the Custom-Time rule below)
    }
    for kind in KEY_PREFIXES:
        assert age_of(kind.prefix) == ages[kind.lifetime], kind.prefix


def test_conversations_go_after_the_retention_window_since_their_last_write() -> None:
    default_days = Settings.model_fields["memory_session_retention_days"].default
    [by_custom_time] = [r for r in lifecycle_rules() if "daysSinceCustomTime" in r["condition"]]
    assert by_custom_time["condition"] == {"daysSinceCustomTime": default_days}


def test_the_lifecycle_rule_names_only_prefixes_orion_writes() -> None:
    listed = {kind.prefix for kind in KEY_PREFIXES}
    for rule in lifecycle_rules():
        assert set(rule["condition"].get("matchesPrefix", [])) <= listed, rule


def test_every_rule_names_its_prefixes_or_ages_only_what_the_store_marks() -> None:
    for rule in lifecycle_rules():
        condition = rule["condition"]
        # Without a prefix, a rule by age would match every object.
        assert condition.get("matchesPrefix") or set(condition) == {"daysSinceCustomTime"}


USER, THREAD, CHANNEL = "U0123ABCD", "1712345678.123456", "C0LAUNCH1"
EXPIRING = [
    person(USER).conversation_key(THREAD),
    f"{person(USER).notes_prefix(THREAD)}plan.md",
    person(USER).undo_key("0123456789abcdef0123456789abcdef"),
    channel(CHANNEL).conversation_key(THREAD),
    f"{channel(CHANNEL).archived_prefix}decisions.md",
    person(USER).profile_key,
    person(USER).search_key,
    channel(CHANNEL).search_key,
]
KEPT = [
    preferences_key(USER),
    NOTES_KEY,
    f"{person(USER).prefix}settings.json",
    f"{channel(CHANNEL).memory_prefix}decisions.md",
    channel(CHANNEL).profile_key,
    workspace_channels_key(),
    "global/context.md",
]


async def test_the_bucket_marks_for_the_rule_only_what_expires(
    gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    """Preferences, notes, a person's settings, a channel's memory and profile and the
    organisation's context are never deleted by age: only conversations, their notes and
    undo records, search indexes, a person's profile and an archived channel's memory
    carry the Custom-Time the rule ages."""
    storage = build_storage(settings(gcs_memories_bucket=gcs_bucket))
    try:
        for key in EXPIRING + KEPT:
            await storage.store.write(key, "{}")
    finally:
        await storage.store.close()

    marked = gcs_emulator.custom_times(gcs_bucket)
    assert sorted(key for key, at in marked.items() if at) == sorted(EXPIRING)
    assert sorted(key for key, at in marked.items() if not at) == sorted(KEPT)


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
