"""The event-log backends the storage-facing tests run against, and a throwaway PostgreSQL.

A test parametrized over the backends opens its projects through ``events_uri(path)``: None
(the SQLite ``events.db`` in the folder) or a database of its own on a PostgreSQL server the
tests started (initdb + pg_ctl as an unprivileged user on a free loopback port, stopped by
PID at the end). The server's admin URI travels in ``RAGTT_TEST_PG``, so child processes
(crash children, ingest workers, the CLI) find the same databases. Under "postgres+s3" the
index is on an S3-compatible server too (``moto_server`` on loopback): ``index_args(path)``
gives each project a prefix of its own in one bucket. ``azure_server`` is Azurite (the Azure
Blob emulator ``./dev`` installs with npm into ``.azurite/``) on loopback, for az:// indexes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PG_ENV = "RAGTT_TEST_PG"
S3_ENV = "RAGTT_TEST_S3"  # JSON: the storage_options of the test's S3-compatible server
BUCKET = "ragtt-test"


def _pg_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    pytest.fail("PostgreSQL is not installed: `./dev test` installs it (apt-get install postgresql)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, server: subprocess.Popen[bytes], died: str, *, within: float = 120) -> None:
    """Until ``server`` listens on loopback ``port`` (at most ``within`` seconds); ``died`` if
    it exits first. The bound is generous: on two busy cores (a full run with browsers beside
    it) Node took over 30 s to load Azurite's modules, although it starts in 1.5 s when idle."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if server.poll() is not None:
                pytest.fail(died)
            time.sleep(0.1)
    pytest.fail(f"nothing listens on 127.0.0.1:{port} after {within:.0f} s")


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A fresh cluster; yields its admin URI. Postgres refuses to run as root, so as root the
    cluster belongs to the ``postgres`` user (or ``nobody``)."""
    bin_dir = _pg_bin()
    user: str | None = None
    if os.geteuid() == 0:
        user = "postgres" if _user_exists("postgres") else "nobody"
    root = Path(tempfile.mkdtemp(prefix="ragtt-pg-"))
    root.chmod(0o755)
    data = root / "data"
    if user is not None:
        os.chown(root, pwd.getpwnam(user).pw_uid, pwd.getpwnam(user).pw_gid)
    port = _free_port()
    run: dict[str, Any] = {"check": True, "capture_output": True, "text": True, "user": user}
    subprocess.run(
        [
            str(bin_dir / "initdb"),
            "-D",
            str(data),
            "-U",
            "ragtt",
            "--auth=trust",
            "--locale=C",
            "-E",
            "UTF8",
            "--no-sync",
        ],
        **run,
    )
    options = (
        f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
        "-c full_page_writes=off -c max_connections=200"
    )
    subprocess.run(
        [
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(root / "server.log"),
            "-w",
            "-t",
            "60",
            "-o",
            options,
            "start",
        ],
        **run,
    )
    pid = int((data / "postmaster.pid").read_text().split()[0])
    try:
        yield f"postgresql://ragtt@127.0.0.1:{port}/postgres"
    finally:
        os.kill(pid, signal.SIGQUIT)  # immediate shutdown: a throwaway cluster needs no checkpoint
        for _ in range(600):
            if not _alive(pid):
                break
            time.sleep(0.05)
        # By the end of a run the folder holds every database the tests made (GBs, tens of
        # thousands of files): deleting them took 20-35 s, which no test waits for. A process
        # left running on its own deletes it.
        subprocess.run(["sh", "-c", 'rm -rf -- "$1" >/dev/null 2>&1 &', "sh", str(root)], check=True)


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie no one reaps, as under a container's init, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _admin() -> Any:
    import psycopg

    return psycopg.connect(os.environ[PG_ENV], autocommit=True)


def _db_name(project: Path) -> str:
    return "p_" + hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:24]


def _with_db(admin_uri: str, name: str) -> str:
    return admin_uri.rsplit("/", 1)[0] + "/" + name


def events_uri(project: Path) -> str | None:
    """The event log URI of the project folder ``project`` under the current backend (its
    database is created empty on first use)."""
    admin_uri = os.environ.get(PG_ENV)
    if admin_uri is None:
        return None
    name = _db_name(project)
    with _admin() as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}" STRATEGY FILE_COPY')  # no WAL for the copy: fast
    return _with_db(admin_uri, name)


def child_env(project: Path) -> dict[str, str]:
    """Environment for a child process that opens ``project`` with no URI argument."""
    uri = events_uri(project)
    return {"RAGTT_EVENTS_URI": uri} if uri else {}


_CLONING = threading.Lock()  # CREATE DATABASE ... TEMPLATE wants its template to itself


def copy_project(src_root: Path, dst_root: Path, project: str = "proj") -> Path:
    """Copy a folder holding a project; on Postgres its database is cloned too (the source
    project must be closed: a template database takes no other connections), and with the
    index on S3 its objects are copied to the copy's own prefix, which the copy's marker and
    log then name (what an operator moving an index does)."""
    shutil.copytree(src_root, dst_root, symlinks=True)
    if os.environ.get(PG_ENV) is not None:
        with _CLONING, _admin() as conn:
            conn.execute(
                f'CREATE DATABASE "{_db_name(dst_root / project)}" TEMPLATE '
                f'"{_db_name(src_root / project)}" STRATEGY FILE_COPY'
            )
    if os.environ.get(S3_ENV) is not None:
        _copy_index(src_root / project, dst_root / project)
    return dst_root


def _copy_index(src: Path, dst: Path) -> None:
    import json

    from ragtt.marker import MARKER

    s3 = s3_client()
    source, target = _db_name(src), _db_name(dst)
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=f"{source}/"):
        for obj in page.get("Contents", []):
            key = target + obj["Key"].removeprefix(source)
            s3.copy_object(Bucket=BUCKET, Key=key, CopySource={"Bucket": BUCKET, "Key": obj["Key"]})
    uri = index_args(dst)["index_uri"]
    marker = json.loads((dst / MARKER).read_text(encoding="utf-8"))
    marker["stores"]["index"] = uri
    (dst / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
    placeholder = "%s" if os.environ.get(PG_ENV) is not None else "?"  # psycopg's, sqlite3's
    with contextlib.closing(raw_log(dst)) as conn:
        conn.execute(f"UPDATE meta SET value = {placeholder} WHERE key = 'index'", (uri,))


def s3_client() -> Any:
    """A boto3 client on the test's S3 server (the credentials in ``RAGTT_TEST_S3``)."""
    import json

    import boto3

    options = json.loads(os.environ[S3_ENV])
    return boto3.client(
        "s3",
        endpoint_url=options["aws_endpoint"],
        aws_access_key_id=options["aws_access_key_id"],
        aws_secret_access_key=options["aws_secret_access_key"],
        region_name=options["aws_region"],
    )


def raw_log(project: Path) -> Any:
    """A connection of anyone who can write the log (not ragtt's): sqlite3 on the file, or
    psycopg (autocommit) on the database."""
    uri = events_uri(project)
    if uri is None:
        from ragtt._sqlite import connect

        return connect(project / "events.db")
    import psycopg

    return psycopg.connect(uri, autocommit=True)


def drop_guards(conn: Any) -> None:
    """What someone with the rights to the database can do: remove every history guard."""
    if os.environ.get(PG_ENV) is None:
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            conn.execute(f"DROP TRIGGER {name}")
        return
    rows = conn.execute(
        "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal"
    ).fetchall()
    for name, table in rows:
        conn.execute(f"DROP TRIGGER {name} ON {table}")


def index_args(project: Path) -> dict[str, Any]:
    """``Project.open`` keywords that put ``project``'s index on the test's S3 server (none when
    the backend keeps it in the folder)."""
    import json

    options = os.environ.get(S3_ENV)
    if options is None:
        return {}
    return {"index_uri": f"s3://{BUCKET}/{_db_name(project)}", "storage_options": json.loads(options)}


def s3_env() -> dict[str, str]:
    """The test S3 server's credentials as the standard ``AWS_*`` variables, for child
    processes that get no storage_options (empty when the index is in the folder)."""
    import json

    options = os.environ.get(S3_ENV)
    return {} if options is None else {k.upper(): v for k, v in json.loads(options).items()}


@contextlib.contextmanager
def use_backend(name: str, server: str | None, s3: dict[str, str] | None = None) -> Iterator[str]:
    """Set the backend for the tests inside (and their children): "sqlite", "postgres", or
    "postgres+s3"."""
    import json

    before = {k: os.environ.pop(k, None) for k in (PG_ENV, S3_ENV)}
    if name.startswith("postgres"):
        assert server is not None
        os.environ[PG_ENV] = server
    if name.endswith("+s3"):
        assert s3 is not None
        os.environ[S3_ENV] = json.dumps(s3)
    try:
        yield name
    finally:
        for key, value in before.items():
            os.environ.pop(key, None)
            if value is not None:
                os.environ[key] = value


@contextlib.contextmanager
def backend_for(request: pytest.FixtureRequest) -> Iterator[str]:
    """The body of a ``backend`` fixture parametrized with backend names."""
    name = request.param
    server = request.getfixturevalue("postgres") if name.startswith("postgres") else None
    s3 = request.getfixturevalue("s3") if name.endswith("+s3") else None
    with use_backend(name, server, s3) as active:
        yield active


@contextlib.contextmanager
def s3_server() -> Iterator[dict[str, str]]:
    """``moto_server`` on a free loopback port with one bucket; yields the storage_options
    LanceDB needs to reach it (stopped by PID at the end)."""
    import sys

    port = _free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("moto_server")), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        _wait_for_port(port, server, "moto_server exited at start: pip install 'moto[server]'")
        import urllib.request

        urllib.request.urlopen(urllib.request.Request(f"{endpoint}/{BUCKET}", method="PUT"), timeout=10).close()
        yield {
            "aws_endpoint": endpoint,
            "aws_access_key_id": "testing",
            "aws_secret_access_key": "testing",
            "aws_region": "us-east-1",
            "allow_http": "true",
        }
    finally:
        os.kill(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


AZURITE = Path(__file__).resolve().parents[1] / ".azurite" / "node_modules" / ".bin" / "azurite-blob"
AZURITE_VERSION = "3.37.0"  # ./dev installs this one
# Azurite's one built-in account and its published key (a well-known emulator constant, no secret)
AZURE_ACCOUNT = "devstoreaccount1"
AZURE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


@contextlib.contextmanager
def azure_server() -> Iterator[dict[str, str]]:
    """Azurite's blob service on a free loopback port with one container (``BUCKET``); yields the
    storage_options LanceDB needs to reach it (stopped by PID at the end)."""
    if not AZURITE.exists():
        pytest.fail(f"Azurite not found at {AZURITE}: `./dev test` installs it (npm, azurite@{AZURITE_VERSION})")
    port = _free_port()
    root = Path(tempfile.mkdtemp(prefix="ragtt-azurite-"))
    server = subprocess.Popen(
        [
            str(AZURITE),
            *("--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", str(root), "--silent"),
            "--disableTelemetry",  # on by default: it would send each start to Microsoft, off loopback
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}/{AZURE_ACCOUNT}"
    try:
        _wait_for_port(port, server, "Azurite exited at start")
        _create_container(endpoint, BUCKET)
        yield {
            "azure_storage_account_name": AZURE_ACCOUNT,
            "azure_storage_account_key": AZURE_KEY,
            "azure_endpoint": endpoint,
            "allow_http": "true",
        }
    finally:
        # SIGKILL: on SIGTERM Azurite waits for its clients' idle keep-alive connections, and a
        # throwaway emulator whose folder is deleted next needs no clean shutdown
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)


def _create_container(endpoint: str, name: str) -> None:
    """``PUT ?restype=container``, signed with the account key (Azure's SharedKey scheme)."""
    import base64
    import email.utils
    import hmac
    import urllib.request

    headers = {"x-ms-date": email.utils.formatdate(usegmt=True), "x-ms-version": "2021-08-06"}
    # VERB, eleven empty standard headers (a zero Content-Length is empty), then the x-ms-
    # headers and the resource; the emulator's path carries the account name a second time.
    signed = "PUT\n" + "\n" * 11 + "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()))
    signed += f"/{AZURE_ACCOUNT}/{AZURE_ACCOUNT}/{name}\nrestype:container"
    digest = hmac.new(base64.b64decode(AZURE_KEY), signed.encode(), hashlib.sha256).digest()
    request = urllib.request.Request(
        f"{endpoint}/{name}?restype=container",
        method="PUT",
        headers={**headers, "Authorization": f"SharedKey {AZURE_ACCOUNT}:{base64.b64encode(digest).decode()}"},
    )
    urllib.request.urlopen(request, timeout=10).close()
