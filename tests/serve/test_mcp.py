"""``ragtt mcp`` driven by the mcp SDK's own client over stdio."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

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
