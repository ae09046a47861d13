"""The Assistant messaging experience (assistant_view): threads in the side pane, opened
by Slack with `assistant_thread_started`, served through Bolt's `AsyncAssistant`."""
