"""Events no other listener wants: acknowledged (so Slack does not retry them) and
dropped; an event of the experience Orion was not configured for is reported once."""
