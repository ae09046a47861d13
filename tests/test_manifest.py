"""The Slack app manifest is valid for Slack and asks for exactly what Orion needs."""

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
MANIFEST = REPO_ROOT / "manifest.yaml"
# Slack's published manifest schema, kept next to the repository (see DESIGN.md).
SCHEMA = REPO_ROOT.parent / "shared" / "slack-manifest-schema" / "manifest.schema.1.0.0.json"


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    return yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))


def schema_errors(manifest: dict[str, Any]) -> list[str]:
    if not SCHEMA.is_file():
        pytest.skip(f"Slack manifest schema not found at {SCHEMA}")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)
    return [f"{error.json_path}: {error.message}" for error in validator.iter_errors(manifest)]


def test_manifest_matches_slack_schema(manifest: dict[str, Any]) -> None:
    assert manifest["_metadata"]["major_version"] == 1, "schema 1.0.0 is for major_version 1"
    assert schema_errors(manifest) == []


def test_schema_check_rejects_a_broken_manifest(manifest: dict[str, Any]) -> None:
    broken = {**manifest, "features": {**manifest["features"], "assistant_view": {}}}
    broken["settings"] = {**manifest["settings"], "socket_mode": True}

    errors = schema_errors(broken)

    assert any("assistant_description" in error for error in errors)
    assert any("socket_mode" in error for error in errors)


def test_background_color_is_a_hex_colour(manifest: dict[str, Any]) -> None:
    # The schema spells this constraint "regex", which JSON Schema does not enforce.
    color = manifest["display_information"]["background_color"]
    assert re.fullmatch(r"#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?", color)


def test_bot_events_and_scopes_are_the_pinned_ones(manifest: dict[str, Any]) -> None:
    settings = manifest["settings"]
    assert set(settings["event_subscriptions"]["bot_events"]) == {
        "assistant_thread_started",
        "assistant_thread_context_changed",
        "message.im",
    }
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == {
        "assistant:write",
        "chat:write",
        "im:history",
    }


def test_events_and_interactivity_reach_the_http_endpoint(manifest: dict[str, Any]) -> None:
    settings = manifest["settings"]
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
