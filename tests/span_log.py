"""Read the spans Orion exported to Langfuse, as a test would look at a trace."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

from langfuse import Langfuse
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.fakes.langfuse_api import FakeLangfuse


class SpanLog:
    def __init__(
        self, client: Langfuse, exporter: InMemorySpanExporter, langfuse: FakeLangfuse | None = None
    ) -> None:
        self._client = client
        self._exporter = exporter
        self._langfuse = langfuse

    def scores(self) -> list[dict[str, Any]]:
        """The scores Orion sent to Langfuse's API (by id: a repeat replaces the first)."""
        assert self._langfuse is not None, "this client sends its scores nowhere"
        self._client.flush()
        return self._langfuse.scores()

    def langfuse(self) -> FakeLangfuse:
        """The fake Langfuse API this client talks to (scores, traces held)."""
        assert self._langfuse is not None, "this client talks to no Langfuse API"
        return self._langfuse

    def all(self) -> list[ReadableSpan]:
        self._client.flush()
        return list(self._exporter.get_finished_spans())

    def names(self) -> list[str]:
        return [span.name for span in self.all()]

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.all() if span.name == name]

    def attributes(self, span: ReadableSpan) -> dict[str, Any]:
        """Span attributes with Langfuse's JSON-encoded values decoded."""
        decoded: dict[str, Any] = {}
        for key, value in (span.attributes or {}).items():
            decoded[key] = value
            # Langfuse stores structured values (input, output, usage) as JSON text.
            if isinstance(value, str) and value[:1] in ("{", "["):
                with contextlib.suppress(ValueError):
                    decoded[key] = json.loads(value)
        return decoded

    def duration_ms(self, span: ReadableSpan) -> float:
        """How long the span was open, in milliseconds (as Orion's log lines give it)."""
        assert span.start_time is not None and span.end_time is not None, "span not ended"
        return (span.end_time - span.start_time) / 1_000_000

    def send_to_langfuse(self) -> None:
        """Hand every span exported so far to the fake Langfuse, as Langfuse's OTLP
        endpoint would ingest them: then its API lists them, by trace and user."""
        langfuse = self.langfuse()
        for span in self.all():
            attributes = span.attributes or {}
            kind = str(attributes.get("langfuse.observation.type", "span")).upper()
            user = attributes.get("user.id")
            langfuse.record_observation(
                format(span.context.span_id, "016x"),
                format(span.context.trace_id, "032x"),
                str(user) if user is not None else None,
                kind,
                _metadata(attributes),
            )

    def text(self) -> str:
        """Everything exported, as one string: for "this never appears" assertions."""
        return "\n".join(
            f"{span.name} {json.dumps(dict(span.attributes or {}), default=str)}"
            for span in self.all()
        )


_METADATA_PREFIXES = ("langfuse.trace.metadata.", "langfuse.observation.metadata.")


def _metadata(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """An observation's metadata as Langfuse reads it from the span (the trace's propagated
    metadata among them): the SDK sends each value as JSON, a plain string as it is."""
    metadata: dict[str, Any] = {}
    for name, value in attributes.items():
        for prefix in _METADATA_PREFIXES:
            if name.startswith(prefix):
                try:
                    metadata[name.removeprefix(prefix)] = json.loads(str(value))
                except ValueError:
                    metadata[name.removeprefix(prefix)] = value
    return metadata
