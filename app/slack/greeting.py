"""What Orion says when a thread opens, and the prompts it suggests."""

from __future__ import annotations

import json

GENERIC_GREETING = (
    "Hi, I'm Orion. I remember what matters to you across conversations, "
    "so you don't have to repeat yourself. How can I help?"
)

SUGGESTED_PROMPTS = [
    {"title": "What do you remember about me?", "message": "What do you remember about me?"},
    {
        "title": "Set my preferences",
        "message": "Please remember: I prefer short answers with bullet points.",
    },
    {
        "title": "Recap our last conversation",
        "message": "What did we talk about last time?",
    },
]

# Preference keys that name the person rather than describe a preference.
_NAME_KEYS = ("name", "preferred_name", "call_me")
MAX_PREFERENCES_MENTIONED = 2


def greeting_for(preferences_json: str | None) -> str:
    """A welcome back that mentions one or two stored preferences; generic otherwise."""
    preferences = _parse(preferences_json)
    if not preferences:
        return GENERIC_GREETING
    name = next((str(preferences.pop(k)) for k in _NAME_KEYS if k in preferences), None)
    opening = f"Welcome back, {name}!" if name else "Welcome back!"
    mentioned = [
        f"{key.replace('_', ' ')}: {value}"
        for key, value in list(preferences.items())[:MAX_PREFERENCES_MENTIONED]
    ]
    if not mentioned:
        return f"{opening} How can I help today?"
    return (
        f"{opening} I'll keep your preferences in mind ({'; '.join(mentioned)}). "
        "How can I help today?"
    )


def _parse(preferences_json: str | None) -> dict[str, object]:
    if not preferences_json:
        return {}
    try:
        data = json.loads(preferences_json)
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, str | int | float | bool)}
