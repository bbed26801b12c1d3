"""`lore mcp` over stdio, spoken to by the MCP SDK's own client: the tools are listed and
callable, recording a skill and getting its hint back through agent_context. The server runs
with the hash embedder (a deterministic fake) so the subprocess starts fast."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from crawl import BrowserOptions, browser_missing

LORE = str(Path(sys.executable).with_name("lore"))
PAGE = "https://ehr.clinic.test/patients"


def test_tools_are_listed_and_callable_over_stdio(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "LORE_DATA_DIR": str(tmp_path / "data"),
        "LORE_EMBEDDING__BACKEND": "hash",
        "LORE_SERVER_URL": "",
    }

    async def run() -> None:
        params = StdioServerParameters(command=LORE, args=["mcp"], env=env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.version == version("lore"), init.server_info
            listed = (await session.list_tools()).tools
            for tool in listed:  # every parameter says what it is for
                for name, schema in tool.input_schema["properties"].items():
                    assert schema.get("description"), (tool.name, name)
            tools = {t.name for t in listed}
            assert tools == {
                "agent_context",
                "scan",
                "resolve",
                "search",
                "convert",
                "record_skill",
                "skill_outcome",
            }
            recorded = await session.call_tool(
                "record_skill",
                {
                    "url": PAGE,
                    "goal": "Add a new patient",
                    "failed_action": "click(68)",
                    "successful_action": "click(79)",
                    "failed_element": "Patient menu",
                    "successful_element": "New/Search",
                },
            )
            assert not recorded.is_error, recorded
            context = await session.call_tool(
                "agent_context", {"url": PAGE, "goal": "Add a new patient"}
            )
            assert not context.is_error, context
            data = context.structured_content or json.loads(context.content[0].text)
            hint = data["skills"][0]["hint"]
            assert hint.startswith("Last time 'click(68)' (Patient menu) failed")
            if browser_missing(BrowserOptions()) is None:
                page = '<html><body><a href="/cart">Cart</a><button>Checkout</button></body></html>'
                scanned = await session.call_tool(
                    "scan", {"url": PAGE, "dom": page, "goal": "pay for the order"}
                )
                assert not scanned.is_error, scanned
                found = scanned.structured_content or json.loads(scanned.content[0].text)
                assert {e["label"] for e in found["elements"]} == {"Checkout", "Cart"}, found
                assert [s["name"] for s in found["suggestions"]] == ["open_cart"], found
                empty = await session.call_tool("scan", {"url": PAGE, "dom": "just text"})
                assert empty.is_error and "422 invalid_dom" in empty.content[0].text, empty
            bad = await session.call_tool("resolve", {"url": "not a url", "query": "x"})
            assert bad.is_error
            reason = bad.content[0].text
            assert "422 invalid_url" in reason and "not a url" in reason, reason
            private = await session.call_tool("convert", {"url": "http://127.0.0.1:9/x"})
            assert private.is_error and "blocked_address" in private.content[0].text, private
            nobody = {"skill_id": "00000000-0000-0000-0000-000000000000", "success": True}
            unknown = await session.call_tool("skill_outcome", nobody)
            assert unknown.is_error and "404 not_found" in unknown.content[0].text, unknown

    asyncio.run(asyncio.wait_for(run(), timeout=120))
