"""The Agent messaging experience (agent_view): conversations in the app's Messages tab,
each a top-level DM and its thread, with an agent session and a Stop button."""
