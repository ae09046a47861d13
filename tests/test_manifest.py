"""The Slack app manifests are valid for Slack and ask for exactly what Orion needs:
`manifest.yaml` (Assistant messaging, as existing installs use it) and
`manifest.agent.yaml` (Agent messaging, the only experience Slack offers new apps)."""

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
ASSISTANT_MANIFEST = REPO_ROOT / "manifest.yaml"
AGENT_MANIFEST = REPO_ROOT / "manifest.agent.yaml"
# Slack's published manifest schema, vendored (see tests/data/slack-manifest-schema/README.md).
SCHEMA = Path(__file__).parent / "data" / "slack-manifest-schema" / "manifest.schema.1.0.0.json"
# Slack's manifest reference; the schema itself does not enforce these.
AGENT_DESCRIPTION_CHARS = 300
AGENT_PROMPTS = 4


def _load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    return _load(ASSISTANT_MANIFEST)


@pytest.fixture(scope="module")
def agent_manifest() -> dict[str, Any]:
    return _load(AGENT_MANIFEST)


@pytest.fixture(params=[ASSISTANT_MANIFEST, AGENT_MANIFEST], ids=["assistant", "agent"])
def either_manifest(request: pytest.FixtureRequest) -> dict[str, Any]:
    return _load(request.param)


def schema_errors(manifest: dict[str, Any]) -> list[str]:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)
    return [f"{error.json_path}: {error.message}" for error in validator.iter_errors(manifest)]


def test_manifests_match_slack_schema(either_manifest: dict[str, Any]) -> None:
    assert either_manifest["_metadata"]["major_version"] == 1, "schema 1.0.0 is for version 1"
    assert schema_errors(either_manifest) == []


def test_schema_check_rejects_a_broken_manifest(manifest: dict[str, Any]) -> None:
    broken = {**manifest, "features": {**manifest["features"], "assistant_view": {}}}
    broken["settings"] = {**manifest["settings"], "socket_mode": True}

    errors = schema_errors(broken)

    assert any("assistant_description" in error for error in errors)
    assert any("socket_mode" in error for error in errors)


def test_schema_check_knows_agent_view(agent_manifest: dict[str, Any]) -> None:
    agent_view = agent_manifest["features"]["agent_view"]
    broken = {
        **agent_manifest,
        "features": {
            **agent_manifest["features"],
            "agent_view": {**agent_view, "suggested_prompts": agent_view["suggested_prompts"] * 2},
        },
    }
    assert any("suggested_prompts" in error for error in schema_errors(broken))


def test_background_color_is_a_hex_colour(either_manifest: dict[str, Any]) -> None:
    # The schema spells this constraint "regex", which JSON Schema does not enforce.
    color = either_manifest["display_information"]["background_color"]
    assert re.fullmatch(r"#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?", color)


# Orion in channels, the same in both experiences (docs/slack-setup.md).
CHANNEL_EVENTS = {
    "app_mention",  # mentioned in a channel thread: it answers there
    "channel_left",  # removed: the channel's memory is erased
    "group_left",
    "member_left_channel",
    "member_joined_channel",  # added back: late events from before undo nothing
    "channel_deleted",
    "group_deleted",
    "channel_archive",  # archived: set aside until retention
    "group_archive",
    "channel_unarchive",
    "group_unarchive",
    "channel_shared",  # Slack Connect: logged
    "channel_unshared",
}
CHANNEL_SCOPES = {
    "app_mentions:read",
    "channels:history",  # the thread read back (conversations.replies)
    "groups:history",
    "channels:read",  # private or shared, members (conversations.info, .members), events
    "groups:read",
    "users:read",  # who is an admin (users.info)
    "commands",  # /orion
}


def test_assistant_bot_events_and_scopes_are_the_pinned_ones(manifest: dict[str, Any]) -> None:
    settings = manifest["settings"]
    assert set(settings["event_subscriptions"]["bot_events"]) == {
        "app_home_opened",  # the Home tab: what Orion remembers
        "assistant_thread_started",
        "assistant_thread_context_changed",
        "message.im",
        *CHANNEL_EVENTS,
    }
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == {
        "assistant:write",
        "chat:write",
        "files:write",  # "Download my memory"
        "im:history",
        "im:write",  # the person's DM, when the Home tab did not say
        *CHANNEL_SCOPES,
    }


def test_agent_bot_events_and_scopes_are_the_agent_ones(agent_manifest: dict[str, Any]) -> None:
    settings = agent_manifest["settings"]
    assert set(settings["event_subscriptions"]["bot_events"]) == {
        "app_home_opened",
        "app_context_changed",
        "message.im",
        "agent_session_stopped",  # Slack shows its Stop button only with this
        "agent_session_title_changed",
        *CHANNEL_EVENTS,
    }
    assert set(agent_manifest["oauth_config"]["scopes"]["bot"]) == {
        "assistant:write",
        "chat:write",
        "files:write",
        "im:history",
        "im:write",
        *CHANNEL_SCOPES,
    }
    assert "assistant_view" not in agent_manifest["features"], "one experience per app"


def test_events_and_interactivity_reach_the_http_endpoint(
    either_manifest: dict[str, Any],
) -> None:
    settings = either_manifest["settings"]
    assert settings["interactivity"]["is_enabled"] is True
    assert settings["event_subscriptions"]["request_url"].endswith("/slack/events")
    assert settings["interactivity"]["request_url"].endswith("/slack/events")
    # Request URLs are ignored in Socket Mode; the deployable manifest uses HTTP.
    assert settings["socket_mode_enabled"] is False


def test_assistant_view_offers_suggested_prompts(manifest: dict[str, Any]) -> None:
    features = manifest["features"]
    assistant_view = features["assistant_view"]
    assert assistant_view["assistant_description"]
    prompts = assistant_view["suggested_prompts"]
    assert prompts
    assert all(prompt["title"] and prompt["message"] for prompt in prompts)
    # Users talk to Orion in its DM, so the messages tab must accept input.
    assert features["app_home"]["messages_tab_enabled"] is True
    assert features["app_home"]["messages_tab_read_only_enabled"] is False


def test_agent_view_describes_the_agent_within_slacks_limits(
    agent_manifest: dict[str, Any],
) -> None:
    features = agent_manifest["features"]
    agent_view = features["agent_view"]
    assert 0 < len(agent_view["agent_description"]) <= AGENT_DESCRIPTION_CHARS
    prompts = agent_view["suggested_prompts"]
    assert 0 < len(prompts) <= AGENT_PROMPTS
    assert all(prompt["title"] and prompt["message"] for prompt in prompts)
    # Conversations with an agent happen in its Messages tab.
    assert features["app_home"]["messages_tab_enabled"] is True
    assert features["app_home"]["messages_tab_read_only_enabled"] is False


def test_the_home_tab_shows_memory_controls_in_both_experiences(
    either_manifest: dict[str, Any],
) -> None:
    # What Orion remembers, with Forget / Forget everything / Download buttons.
    assert either_manifest["features"]["app_home"]["home_tab_enabled"] is True
    assert "app_home_opened" in either_manifest["settings"]["event_subscriptions"]["bot_events"]
    assert either_manifest["settings"]["interactivity"]["is_enabled"] is True
    assert {"files:write", "im:write"} <= set(either_manifest["oauth_config"]["scopes"]["bot"])


def test_both_manifests_describe_the_same_app(
    manifest: dict[str, Any], agent_manifest: dict[str, Any]
) -> None:
    for section in ("display_information", "_metadata"):
        assert manifest[section] == agent_manifest[section]
    assert manifest["features"]["bot_user"] == agent_manifest["features"]["bot_user"]


def test_both_manifests_offer_the_channel_command(either_manifest: dict[str, Any]) -> None:
    [command] = either_manifest["features"]["slash_commands"]
    assert command["command"] == "/orion"
    # Commands reach the same endpoint as events and clicks (Bolt routes them).
    assert command["url"].endswith("/slack/events")
    assert command["should_escape"] is False  # Orion reads ids from Slack, not from the text


def test_an_installation_asks_for_the_manifests_scopes(manifest: dict[str, Any]) -> None:
    """Distribution mode's default SLACK_SCOPES: what manifest.yaml grants, no more."""
    from app.config import DEFAULT_BOT_SCOPES

    assert set(DEFAULT_BOT_SCOPES) == set(manifest["oauth_config"]["scopes"]["bot"])
