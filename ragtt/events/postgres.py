"""The event log on Postgres: one database per project, shared by every process and machine.

Behind the same ``EventLog`` interface as the SQLite store: the same tables, the hash chain,
the history guards as PL/pgSQL triggers (``pg_schema.py``), the once-per-query rule as a
partial unique index. Concurrency is Postgres's: every write transaction first takes one
transaction-level advisory lock, so appends to the chain are serialized (as SQLite's
``BEGIN IMMEDIATE`` serializes them) while readers are never blocked (MVCC). The write lock
of the chunk table is a session-level advisory lock: the server releases it when the
holder's connection ends, whichever machine it was on and however it died.

    log = PostgresEventStore("postgresql://ragtt@db.internal/team_rag")
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ragtt.errors import ConfigError, ProjectDamagedError, StoreError
from ragtt.events.base import EVENT_COLUMNS, Event, EventLog, frame_schema, typed_frame
from ragtt.events.documents import Documents
from ragtt.events.intents import Intents
from ragtt.events.pg_schema import migrate, schema_version
from ragtt.events.retention import Retention
from ragtt.events.versions import Versions

if TYPE_CHECKING:
    import polars as pl

__all__ = ["Event", "PostgresEventStore", "connect", "redact", "session_errors"]

# Advisory lock keys (bigint constants unique to ragtt; one project per database).
_APPEND_LOCK = 0x7261677474_02
_WRITE_LOCK = 0x7261677474_03


def redact(uri: str) -> str:
    """The URI without its password, for messages and logs."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(uri)
    if parts.password is None:
        return uri
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def connect(uri: str, what: str) -> Any:
    """An autocommit psycopg connection to ``uri``; ``what`` names the store in messages."""
    try:
        import psycopg
    except ImportError:
        raise ConfigError(f"a postgresql:// {what} needs psycopg 3: pip install 'psycopg[binary]'") from None
    try:
        return psycopg.connect(uri, autocommit=True, application_name="ragtt")
    except psycopg.OperationalError as exc:
        raise StoreError(f"cannot connect to the {what} {redact(uri)}: {str(exc).strip()}") from None


@contextlib.contextmanager
def session_errors(what: str, location: str) -> Iterator[None]:
    """A session lost mid-use (the server restarted, an admin ended it, the network dropped)
    surfaces as a StoreError that says so, not as the driver's OperationalError."""
    import psycopg

    try:
        yield
    except psycopg.OperationalError as exc:
        state = exc.sqlstate  # None: the client found the connection gone; 08 / 57P: the server ended it
        if state is not None and not state.startswith(("08", "57P")):
            raise  # a deadlock, a timeout...: the session is fine
        raise StoreError(
            f"lost the connection to the {what} {location} ({str(exc).strip() or type(exc).__name__}): the "
            "server restarted or ended the session. Nothing half-written stays behind (each write is one "
            "transaction, or settled by recovery); reopen the project and run the call again"
        ) from None


@functools.lru_cache(maxsize=512)
def _pyformat(sql: str) -> str:
    """The log's SQL is written with ``?`` placeholders (DB-API qmark, SQLite's); psycopg
    takes ``%s``. The statements are ragtt's own, so no ``?`` sits inside a literal."""
    return sql.replace("%", "%%").replace("?", "%s")


@functools.lru_cache(maxsize=64)
def _numbered(sql: str) -> str:
    """``?`` placeholders as ``$1, $2, ...`` (what ADBC's Postgres driver binds)."""
    parts = sql.split("?")
    return parts[0] + "".join(f"${i}{part}" for i, part in enumerate(parts[1:], start=1))


class _QmarkConnection:
    """A psycopg connection that speaks the qmark SQL the shared repositories are written in."""

    def __init__(self, conn: Any, location: str) -> None:
        self.raw = conn
        self.location = location

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        with session_errors("event log", self.location):
            if not params:
                return self.raw.execute(sql)
            return self.raw.execute(_pyformat(sql), tuple(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        rows = list(rows)
        if rows:
            with session_errors("event log", self.location), self.raw.cursor() as cur:
                cur.executemany(_pyformat(sql), rows)


class PostgresEventStore(EventLog):
    """A project's event log in the Postgres database ``uri`` names (``postgresql://...``)."""

    _SOURCE_SQL: ClassVar[str] = "(payload::jsonb ->> 'source')"

    def __init__(self, uri: str, *, table_name: str = "chunks", create: bool = True) -> None:
        super().__init__()
        self.uri = uri
        self.location = redact(uri)
        self._pg: Any = connect(uri, "event log")
        import psycopg

        self._psycopg = psycopg
        try:
            if not create and schema_version(self._pg) == 0:
                raise ProjectDamagedError(
                    f"the event log {self.location} holds no ragtt history: this project's log is gone, or the URI "
                    "names the wrong database. Restore the database from a backup; ragtt never recreates it empty"
                )
            migrate(self._pg, self.location)
        except BaseException:
            self._pg.close()
            raise
        self._q = _QmarkConnection(self._pg, self.location)
        self.documents = Documents(self._q)
        self.versions = Versions(self._q, table_name)
        self.intents = Intents(self._q)
        self.retention = Retention(self._q)
        self._locked = False

    @property
    def _conn(self) -> Any:
        return self._q

    @property
    def _integrity_error(self) -> type[Exception]:
        return self._psycopg.IntegrityError  # type: ignore[no-any-return]

    def close(self) -> None:
        # Closing the session releases its advisory locks with it.
        self._locked = False
        self._pg.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        with session_errors("event log", self.location), self._pg.transaction():
            self._pg.execute("SELECT pg_advisory_xact_lock(%s)", (_APPEND_LOCK,))
            yield self._q

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Any]:
        pg = connect(self.uri, "event log")
        try:
            with session_errors("event log", self.location):
                pg.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                yield _QmarkConnection(pg, self.location)
        finally:
            pg.close()  # ends the read-only transaction with it

    def _savepoint(self, conn: Any) -> contextlib.AbstractContextManager[Any]:
        return self._pg.transaction()  # nested: a SAVEPOINT

    def _try_lock(self) -> bool:
        with session_errors("event log", self.location):
            got = bool(self._pg.execute("SELECT pg_try_advisory_lock(%s)", (_WRITE_LOCK,)).fetchone()[0])
        self._locked = got
        return got

    def _unlock(self) -> None:
        if self._locked:
            self._locked = False
            # A session that broke has lost its locks with it; never hide the error that broke it.
            with contextlib.suppress(self._psycopg.Error):
                if not self._pg.closed:
                    self._pg.execute("SELECT pg_advisory_unlock(%s)", (_WRITE_LOCK,))

    def _read_frame(self, clauses: Sequence[str], params: Sequence[Any]) -> pl.DataFrame:
        import adbc_driver_postgresql.dbapi as adbc
        import polars as pl

        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = f"SELECT {', '.join(EVENT_COLUMNS)}, {self._source_sql()} AS source FROM events{where}"
        # ADBC reads with COPY ... BINARY straight into Arrow: no Python object per row. A
        # session per read, in autocommit, so it holds no snapshot between reads.
        try:
            with adbc.connect(self.uri, autocommit=True) as conn, conn.cursor() as cur:
                cur.execute(_numbered(sql), list(params))
                table = cur.fetch_arrow_table()
        except adbc.Error as exc:
            raise StoreError(f"cannot read the event log {self.location}: {str(exc).strip()}") from None
        # Arrow's batches stay Polars chunks (no copy into one buffer; about 0.1 s at 1M events).
        frame = pl.from_arrow(table, rechunk=False)
        assert isinstance(frame, pl.DataFrame)  # a table is a frame; only an array is a Series
        return typed_frame(frame.cast(frame_schema()))

    def compact(self) -> None:
        # VACUUM FULL returns the space to the operating system (a plain VACUUM only marks it
        # reusable); it holds each table's lock for the rewrite, which is short at this size.
        self._pg.execute("VACUUM FULL events, index_versions, intents, meta, events_head")

    def size_bytes(self) -> int:
        row = self._pg.execute(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "WHERE c.relkind = 'r' AND c.relnamespace = to_regnamespace(current_schema()) "
            "AND c.relname <> 'embeddings'"  # the embedding cache shares the database; it is not the log
        ).fetchone()
        return int(row[0])

    def guards(self) -> list[str]:
        rows = self._q.execute(
            "SELECT tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE NOT t.tgisinternal AND t.tgenabled <> 'D' "
            "AND c.relnamespace = to_regnamespace(current_schema())"
        ).fetchall()
        return [str(r[0]) for r in rows]

    def _top_seq(self) -> int | None:
        row = self._q.execute("SELECT seq FROM events_head").fetchone()
        return None if row is None else int(row[0])

    def _chain_advanced(self, conn: Any, seq: int) -> None:
        conn.execute(
            "INSERT INTO events_head (seq) VALUES (?) ON CONFLICT (one) DO UPDATE SET seq = excluded.seq", (seq,)
        )
