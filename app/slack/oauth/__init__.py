"""Distribution mode: installing Orion in many workspaces through Slack's OAuth flow."""
