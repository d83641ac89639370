"""OpenTelemetry traces of logged runs, in OpenInference's conventions (Phoenix renders them).

- ``otlp``: a run's spans built from its events, as an OTLP/JSON dict (no dependency).
- ``http``: that dict sent to an OTLP/HTTP collector as protobuf (``ragtt[otel]``).
- ``live``: ``LiveTraces``, each new query and replay sent as it happens.

``Project.export_traces`` is the public entry point; the ``export-traces`` verb its front ends.
"""

from __future__ import annotations

from ragtt.traces.otlp import DEFAULT_PROJECT_NAME, TracedRun, load_traced_runs, otlp_json, span_ids

__all__ = ["DEFAULT_PROJECT_NAME", "TracedRun", "load_traced_runs", "otlp_json", "span_ids"]
