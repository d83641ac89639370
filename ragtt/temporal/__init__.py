"""Temporal assertion store: typed claims with validity windows, retrieved as of any position.

    store = AssertionStore.open("facts.db", embedder=HashEmbedder())
    store.write_episode(Episode(...)); store.write_assertion(Assertion(...))
    store.retrieve(RetrievalQuery("default", temporal_anchor=..., query_text="refund window"))

Validity windows are half-open: an assertion is valid at ``t`` when
``valid_from <= t < valid_until``. Writing a successor with ``supersedes_id`` closes the
predecessor at the successor's ``valid_from`` in the same transaction.
"""

from __future__ import annotations

from ragtt.temporal.context import FORMATTERS, estimate_tokens
from ragtt.temporal.fts import match_expression, validate_tokenizer
from ragtt.temporal.models import Assertion, Citation, Episode, Link, MissingExcerptWarning, to_position
from ragtt.temporal.namespaces import NamespaceInfo
from ragtt.temporal.results import (
    AssembledContext,
    ConnectedAssertion,
    RetrievalQuery,
    RetrievalResult,
    RetrievedAssertion,
)
from ragtt.temporal.schema import ExtensionColumn, ExtensionTable, SchemaExtensions
from ragtt.temporal.scoring import Candidate, LinearScorer, RRFScorer, Scorer, ScoringContext
from ragtt.temporal.store import AssertionStore, Metrics

__all__ = [
    "FORMATTERS",
    "AssembledContext",
    "Assertion",
    "AssertionStore",
    "Candidate",
    "Citation",
    "ConnectedAssertion",
    "Episode",
    "ExtensionColumn",
    "ExtensionTable",
    "LinearScorer",
    "Link",
    "Metrics",
    "MissingExcerptWarning",
    "NamespaceInfo",
    "RRFScorer",
    "RetrievalQuery",
    "RetrievalResult",
    "RetrievedAssertion",
    "SchemaExtensions",
    "Scorer",
    "ScoringContext",
    "estimate_tokens",
    "match_expression",
    "to_position",
    "validate_tokenizer",
]
