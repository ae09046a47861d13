"""The Slack CLI's get-manifest hook (.slack/hooks.json): Orion's Slack app for `slack run`.

manifest.agent.yaml (the Agent messaging experience, what Slack offers new apps) as the
JSON the CLI reads on stdout, set up for local development: Socket Mode on, so Slack
delivers events and clicks over the WebSocket that `orion socket` opens (the start hook),
and no request URLs, which Socket Mode does not use.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

MANIFEST = Path(__file__).resolve().parents[1] / "manifest.agent.yaml"


def local_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    settings = dict(manifest["settings"])
    settings["socket_mode_enabled"] = True
    for section in ("event_subscriptions", "interactivity"):
        settings[section] = {
            key: value for key, value in settings[section].items() if key != "request_url"
        }
    return {**manifest, "settings": settings}


if __name__ == "__main__":
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    json.dump(local_manifest(manifest), sys.stdout, indent=2)
    sys.stdout.write("\n")
