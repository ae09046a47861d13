"""What a turn teaches Orion, and what a person can take back.

- `preferences`: preferences stated in passing, captured without a model
  (`preference_detection`, in ten languages; `language_names`).
- `profile`, `conversations`, `opening`: each owner's record, their conversations, and
  what an event starts from; `guard`: the one erasure guard every write passes.
- `session_summary`, `search_index`: each conversation's summary and the owner's index
  of them; `welcome`: the words the next greeting uses.
- `recall`: Claude's tool to look through the person's past conversations
  (`channel_recall` in a channel).
- `erasure`, `undo`: forgetting, and undoing one answer's changes; `upgrade`: moving the
  earlier layout home.
"""
