"""What a turn teaches Orion, and what a person can take back.

- `preferences`: preferences stated in passing, captured without a model
  (`preference_detection`, in ten languages; `language_names`).
- `session_summary`, `session_index`: each conversation's summary and the person's index
  of them; `welcome`: the words the next greeting uses.
- `recall`: Claude's tool to look through the person's past conversations.
"""
