"""`lore mcp`: lore's agent tools over the Model Context Protocol (stdio), so MCP-speaking
agents use it without glue. The tools call lore's HTTP API through the typed client: the
server recorded in the data directory when one runs, else one started in this process on a
free loopback port."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from importlib.metadata import version
from typing import Annotated, Any

import httpx
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from api.client import AsyncLoreClient, LoreError, calls

Url = Annotated[str, Field(description="The page's full URL, e.g. https://app.example.com/orders")]
K = Annotated[int, Field(ge=1, le=50, description="How many chunks to return at most.")]
Goal = Annotated[str, Field(description="The user's goal in their words, e.g. 'Add a patient'.")]

INSTRUCTIONS = (
    "lore holds knowledge about web pages (crawled sites, uploaded documents, single-page apps "
    "captured before and after clicks) and skills: which action worked on a site when another "
    "failed. Before planning a step on a page, call agent_context with the page URL, what you "
    "need to know and the user's goal. After a corrected step, call record_skill."
)


def build_server(base_url: str, api_key: str | None = None) -> MCPServer:
    server = MCPServer(name="lore", version=version("lore"), instructions=INSTRUCTIONS)

    async def send(call: Any) -> Any:
        """The call's answer; lore's error answers (401, 404, 422, ...) and an unreachable
        server reach the agent as the tool's error text, not as a bare 'Error executing'."""
        try:
            async with AsyncLoreClient(base_url, api_key) as lore:
                return await lore(call)
        except LoreError as exc:
            raise ToolError(f"lore answered {exc.status} {exc.code}: {exc.message}") from exc
        except httpx.HTTPError as exc:
            raise ToolError(f"lore's API at {base_url} cannot be reached: {exc!r}") from exc

    @server.tool(
        description="Knowledge, skill hints and the site model for a page, before planning."
    )
    async def agent_context(
        url: Url,
        query: Annotated[
            str | None, Field(description="What you need to know, e.g. 'how to add a patient'.")
        ] = None,
        goal: Annotated[str | None, Field(description="The user's goal (finds skills).")] = None,
        k: K = 8,
        parameter: Annotated[
            str | None,
            Field(description="A value missing mid-task, e.g. 'invoice prefix': its chunks."),
        ] = None,
    ) -> dict[str, Any]:
        return asdict(await send(calls.agent_context(url, query, goal, k, parameter)))

    @server.tool(
        description="Your page as lore reads it: links, buttons and fields with selectors, the "
        "page's patterns (listing, search, pagination, filters, login, cart, consent banner, "
        "...), suggested next actions with their reason, and elements ranked for your goal."
    )
    async def scan(
        url: Url,
        dom: Annotated[str, Field(description="document.documentElement.outerHTML")],
        goal: Annotated[str | None, Field(description="Rank elements for this goal.")] = None,
        max_elements: Annotated[int, Field(ge=1, le=500, description="At most this many.")] = 50,
        offset: Annotated[int, Field(ge=0, description="Skip this many (the next page).")] = 0,
        viewport_only: Annotated[
            bool, Field(description="Only what shows on the first screen.")
        ] = False,
    ) -> dict[str, Any]:
        return dict(await send(calls.scan(url, dom, goal, max_elements, offset, viewport_only)))

    @server.tool(description="The knowledge lore holds for a page, best first (org first).")
    async def resolve(
        url: Url,
        query: Annotated[str, Field(description="What you need to know on this page.")],
        k: K = 8,
    ) -> list[dict[str, Any]]:
        return [asdict(c) for c in await send(calls.resolve(url, query, k))]

    @server.tool(description="Search everything lore knows, optionally within some domains.")
    async def search(
        query: Annotated[str, Field(description="What to look for, in words.")],
        k: K = 10,
        domains: Annotated[
            list[str] | None, Field(description="Only these hosts, e.g. ['docs.example.com'].")
        ] = None,
        metadata: Annotated[
            dict[str, str] | None,
            Field(
                description="Only documents indexed with this custom metadata, e.g. "
                "{'team': 'billing'}."
            ),
        ] = None,
    ) -> list[dict[str, Any]]:
        found = await send(
            calls.search(query, k, domains=domains or None, metadata=metadata or None)
        )
        return [asdict(c) for c in found]

    @server.tool(
        description="A web page as Markdown (title and text, headings and tables kept), "
        "fetched now and stored nowhere: for a page lore has not indexed."
    )
    async def convert(url: Url) -> dict[str, Any]:
        return dict(await send(calls.convert(url)))

    @server.tool(description="Remember which action worked for a goal where another failed.")
    async def record_skill(
        url: Url,
        goal: Goal,
        failed_action: Annotated[str, Field(description="What failed, e.g. 'click(68)'.")],
        successful_action: Annotated[str, Field(description="What worked, e.g. 'click(79)'.")],
        failed_element: Annotated[
            str, Field(description="The element that failed, e.g. 'Patient menu'.")
        ] = "",
        successful_element: Annotated[
            str, Field(description="The element that worked, e.g. 'New/Search'.")
        ] = "",
        error_type: Annotated[
            str, Field(description="e.g. wrong_element, not_found, timeout.")
        ] = "",
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
    async def skill_outcome(
        skill_id: Annotated[str, Field(description="The skill's id, from record_skill.")],
        success: Annotated[bool, Field(description="Whether its action worked this time.")],
    ) -> dict[str, Any]:
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

    return serve_in_thread(create_app(settings, schedules=False))  # lore serve makes those
