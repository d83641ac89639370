"""``ragtt mcp`` driven by the mcp SDK's own client over stdio."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

import ragtt
from ragtt.serve_mcp import create_server
from ragtt.verbs import VERBS
from ragtt.verbs.schema import body_model
from tests.serve.conftest import SCRIPT, TEXTS, run_in_own_loop

ROOT = Path(__file__).resolve().parents[2]


def test_mcp_tools_over_stdio(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ragtt.cli", "mcp", "--project", str(tmp_path / "p"), "--embedder", "hash"],
        env={
            "PYTHONPATH": str(ROOT),
            "RUST_LOG": "error",
            "HF_HUB_OFFLINE": "1",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        },
        cwd=str(ROOT),
    )

    async def session() -> None:
        async with asyncio.timeout(120), Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == set(VERBS)
            assert tools["query"].input_schema == body_model(VERBS["query"], "mcp").model_json_schema()
            assert tools["query"].input_schema["required"] == ["text"]
            assert "texts" in tools["ingest"].input_schema["properties"]
            ingest = await client.call_tool("ingest", {"texts": TEXTS})
            assert not ingest.is_error and ingest.structured_content["documents_added"]
            query = await client.call_tool("query", {"text": SCRIPT + " refunds", "generate": False})
            assert not query.is_error
            found = json.loads(query.content[0].text)  # type: ignore[union-attr]
            assert found == query.structured_content and found["text"] == SCRIPT + " refunds"
            replay = await client.call_tool("replay", {"query_id": found["query_id"]})
            assert replay.structured_content["matches_original"] is True
            snaps = await client.call_tool("snapshots", {})
            assert snaps.structured_content == {"result": []}
            missing = await client.call_tool("replay", {"query_id": "nope"})
            assert missing.is_error and "nope" in missing.content[0].text  # type: ignore[union-attr]
            bad = await client.call_tool("query", {"text": "x", "top_k": 0})
            assert bad.is_error and "top_k" in bad.content[0].text  # type: ignore[union-attr]

    run_in_own_loop(session, 240, "the MCP session")


def test_a_reembed_elsewhere_is_picked_up_by_the_mcp_server(tmp_path: Path) -> None:
    path = tmp_path / "p"
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest_texts(TEXTS)
    query = {"text": "refund window", "generate": False}

    def answers(embedder: ragtt.HashEmbedder | None, reembed: bool) -> list[Any]:
        server, worker = create_server(path, embedder=embedder)
        got: list[Any] = []

        async def session() -> None:
            async with asyncio.timeout(60), Client(server) as client:
                got.append(await client.call_tool("query", query))
                if reembed:  # a CI job, say, while the server runs
                    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as other:
                        other.reembed(ragtt.HashEmbedder(128))
                got.append(await client.call_tool("query", query))

        try:
            run_in_own_loop(session, 120, "the MCP session")
        finally:
            worker.close()
        return got

    before, after = answers(None, reembed=True)  # the project's own embedder, loaded by the server
    assert not before.is_error and not after.is_error, after.content
    with ragtt.Project.open(path, progress=False) as proj:
        runs = proj.events.query(types="retrieval.executed", query_id=after.structured_content["query_id"])
        assert [e.payload["plan"]["embedder_dim"] for e in runs] == [128]
    refused = answers(ragtt.HashEmbedder(), reembed=False)  # told to use the old one
    assert all(r.is_error and "128" in r.content[0].text for r in refused)
