"""`lore mcp`: lore's agent tools over the Model Context Protocol (stdio), so MCP-speaking
agents use it without glue. The tools call lore's HTTP API through the typed client: the
server recorded in the data directory when one runs, else one started in this process on a
free loopback port."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from mcp.server.mcpserver import MCPServer

from api.client import AsyncLoreClient, calls

INSTRUCTIONS = (
    "lore holds knowledge about web pages (crawled sites, uploaded documents, single-page apps "
    "captured before and after clicks) and skills: which action worked on a site when another "
    "failed. Before planning a step on a page, call agent_context with the page URL, what you "
    "need to know and the user's goal. After a corrected step, call record_skill."
)


def build_server(base_url: str, api_key: str | None = None) -> MCPServer:
    server = MCPServer(name="lore", instructions=INSTRUCTIONS)

    async def send(call: Any) -> Any:
        async with AsyncLoreClient(base_url, api_key) as lore:
            return await lore(call)

    @server.tool(
        description="Knowledge, skill hints and the site model for a page, before planning."
    )
    async def agent_context(
        url: str,
        query: str | None = None,
        goal: str | None = None,
        k: int = 8,
        parameter: str | None = None,
    ) -> dict[str, Any]:
        return asdict(await send(calls.agent_context(url, query, goal, k, parameter)))

    @server.tool(description="The knowledge lore holds for a page, best first (org first).")
    async def resolve(url: str, query: str, k: int = 8) -> list[dict[str, Any]]:
        return [asdict(c) for c in await send(calls.resolve(url, query, k))]

    @server.tool(description="Search everything lore knows, optionally within some domains.")
    async def search(
        query: str, k: int = 10, domains: list[str] | None = None
    ) -> list[dict[str, Any]]:
        found = await send(calls.search(query, k, domains=domains or None))
        return [asdict(c) for c in found]

    @server.tool(description="Remember which action worked for a goal where another failed.")
    async def record_skill(
        url: str,
        goal: str,
        failed_action: str,
        successful_action: str,
        failed_element: str = "",
        successful_element: str = "",
        error_type: str = "",
    ) -> dict[str, Any]:
        call = calls.record_skill(
            url,
            goal,
            failed_action,
            successful_action,
            failed_element,
            successful_element,
            error_type,
        )
        return asdict(await send(call))

    @server.tool(description="Report whether a skill's action worked when used again.")
    async def skill_outcome(skill_id: str, success: bool) -> dict[str, Any]:
        return asdict(await send(calls.skill_outcome(skill_id, success)))

    return server


def session_key(settings: Any) -> tuple[str | None, Callable[[], None]]:
    """A key for this MCP session on the in-process server, revoked when it ends (none when
    auth is off)."""
    if not settings.auth.required:
        return None, lambda: None
    from api.auth import Authenticator  # noqa: PLC0415
    from retrieval import Catalog  # noqa: PLC0415

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    catalog = Catalog(settings.catalog_url)
    auth = Authenticator(catalog, settings.auth.rate_limit_per_minute)
    key, record = auth.create_key(settings.tenant, "lore mcp (in-process, this session)")

    def revoke() -> None:
        auth.revoke(record.id)
        catalog.close()

    return key, revoke


def embedded_server(settings: Any) -> tuple[str, Any]:
    """Start lore's API in this process on a free loopback port; returns its URL and the
    uvicorn server (set `should_exit` to stop it)."""
    from api.app import create_app, serve_in_thread  # noqa: PLC0415

    return serve_in_thread(create_app(settings))
