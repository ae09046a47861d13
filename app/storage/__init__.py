"""Object storage, the bottom layer: objects, generations and conditional writes, nothing of
memories, people or Slack (docs/architecture.md, "Layers"). Importing it stays cheap:
google-cloud-storage loads only when a GCS store connects."""
