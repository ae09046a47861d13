"""Object storage: the bottom layer. Knows objects, generations and conditional writes;
nothing of memories, people or Slack.

- `store`: the interface (`ObjectStore`), its errors, and optimistic `update`.
- `gcs` (with `gcs_connection`) and `local_directory`: the two backends.
- `breaker`: fail fast while the store is unreachable; `deadline`: one budget per event.
- `factory`: picks and connects the configured backend.

Importing this package stays cheap (google-cloud-storage loads only with the GCS backend,
when the store connects): `orion memory …` with a local directory never pays for it.
"""
