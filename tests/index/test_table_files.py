"""Reading an index's files on object storage takes only what belongs to its store.

``TableFiles`` talks to the bucket through obstore. Client options from the environment count
as Lance takes them (bare, or under the URI's own provider prefix: ``AWS_*`` for s3://):
another provider's, such as an Azure proxy beside an S3 index, never routes or shapes the
requests; and a store that cannot be reached is one line naming the index, with no debug dump
and none of the options' values.
"""

from __future__ import annotations

import hashlib
import socket
from typing import Any

import pytest

from ragtt.errors import StoreError
from ragtt.index.files import TableFiles, store_options
from tests.backends import BUCKET


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_only_the_providers_own_client_variables_count() -> None:
    environ = {
        "TIMEOUT": "30s",
        "AWS_TIMEOUT": "20s",  # the provider's own name wins over the bare one
        "AZURE_PROXY_URL": "http://127.0.0.1:9",
        "GOOGLE_CONNECT_TIMEOUT": "1s",
        "ALLOW_HTTP": "true",
        "AWS_SECRET_ACCESS_KEY": "from-the-environment",
        "HOME": "/root",
    }
    config, client = store_options(
        "s3://bucket/prefix",
        {"aws_endpoint": "http://127.0.0.1:1", "google_service_account": "/key.json", "connect_timeout": "5s"},
        environ,
    )
    assert client == {"allow_http": "true", "timeout": "20s", "connect_timeout": "5s"}
    assert config == {"aws_endpoint": "http://127.0.0.1:1"}  # obstore reads AWS_* credentials itself
    config, client = store_options("gs://bucket/prefix", {}, environ)
    assert (config, client) == ({}, {"allow_http": "true", "timeout": "30s", "connect_timeout": "1s"})


def test_another_providers_proxy_in_the_environment_does_not_route_the_reads(
    s3: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3

    dead = f"http://127.0.0.1:{_dead_port()}"
    for name in ("AZURE_PROXY_URL", "GOOGLE_PROXY_URL"):
        monkeypatch.setenv(name, dead)
    monkeypatch.setenv("AZURE_TIMEOUT", "not-a-duration")
    client: Any = boto3.client(
        "s3",
        endpoint_url=s3["aws_endpoint"],
        aws_access_key_id=s3["aws_access_key_id"],
        aws_secret_access_key=s3["aws_secret_access_key"],
        region_name=s3["aws_region"],
    )
    body = b"lance bytes" * 100
    client.put_object(Bucket=BUCKET, Key="table-files/t.lance/data/a.lance", Body=body)
    files = TableFiles(f"s3://{BUCKET}/table-files/t.lance", {**s3, "allow_http": "true"})
    assert files.sizes(["data/a.lance", "data/gone.lance"]) == {"data/a.lance": len(body), "data/gone.lance": None}
    record = files.digest("data/a.lance")
    assert record is not None and record.sha256 == hashlib.sha256(body).hexdigest()


def test_an_unreachable_store_is_one_line_without_the_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    options = {
        "aws_endpoint": f"http://127.0.0.1:{_dead_port()}",
        "aws_access_key_id": "AKIDNOTREAL",
        "aws_secret_access_key": "very-secret-value",
        "aws_region": "us-east-1",
        "allow_http": "true",
        "aws_max_retries": "0",
        "connect_timeout": "1s",
    }
    files = TableFiles(f"s3://{BUCKET}/nowhere/t.lance", options)
    with pytest.raises(StoreError) as info:
        files.sizes(["data/a.lance"])
    message = str(info.value)
    assert "\n" not in message and f"s3://{BUCKET}/nowhere/t.lance" in message
    assert "very-secret-value" not in message and "AKIDNOTREAL" not in message and "Debug" not in message
