"""Opening a project folder: create it, adopt one from before the marker, or open it,
refusing any store that is missing or damaged. By job:

- ``location.py``: where the stores are (the event log, the chunk table, the embedding
  cache), picked from their URIs in this one place;
- ``adoption.py``: creating a project, adopting one without a marker, adding a table, and
  recording the files of a table made before ragtt recorded them;
- ``checks.py``: the cheap check of the SQLite files an opening makes;
- ``stores.py``: ``open_stores``, which puts these together.

The marker itself is ``ragtt/marker.py``; the SQL these need is in ``ragtt/events/probe.py``.
"""

from ragtt.opening.location import (
    EVENTS_URI_ENV,
    INDEX_URI_ENV,
    IndexLocation,
    events_backend,
    open_cache,
    open_log,
)
from ragtt.opening.stores import Stores, open_assertions, open_stores

__all__ = [
    "EVENTS_URI_ENV",
    "INDEX_URI_ENV",
    "IndexLocation",
    "Stores",
    "events_backend",
    "open_assertions",
    "open_cache",
    "open_log",
    "open_stores",
]
