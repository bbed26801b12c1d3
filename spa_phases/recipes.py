"""The executor of list-detail recipes: open every item of a list, extract the details panel,
save it, and go on to the next page; an item that fails is reported and skipped."""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any

from spa_phases.page_scripts import MARK_HIDDEN, UNMARK_HIDDEN

if TYPE_CHECKING:
    from playwright.async_api import ElementHandle, Page

log = logging.getLogger(__name__)

OPS = frozenset(
    {
        "WAIT_FOR",
        "FOR_EACH_ITEM_IN_LIST",
        "CLICK",
        "EXTRACT_DETAILS",
        "SAVE",
        "MARK_DONE",
        "SCROLL",
        "CLICK_IF_EXISTS",
        "END",
    }
)

Save = Callable[[str, str, str], Awaitable[int]]
"""(details DOM, trigger action, scope prefix) -> chunks stored."""
Settle = Callable[[], Awaitable[bool]]


@dataclass
class RecipeReport:
    pages: int = 0
    items: int = 0  # items opened
    saved: int = 0  # items whose details were saved
    chunks: int = 0  # chunks stored
    repeated: int = 0  # items seen before (MARK_DONE), not opened again
    failed: list[dict[str, str]] = field(default_factory=list)  # {item, reason}
    stopped_by: str = ""


class RecipeError(ValueError):
    pass


def check_recipe(steps: list[dict[str, Any]]) -> None:
    for step in steps:
        if step.get("op") not in OPS:
            raise RecipeError(f"unknown recipe command {step.get('op')!r}; use {sorted(OPS)}")
        check_recipe(step.get("do", []))


async def run_recipe(
    page: Page,
    steps: list[dict[str, Any]],
    save: Save,
    settle: Settle,
    max_items: int = 200,
    max_pages: int = 10,
) -> RecipeReport:
    check_recipe(steps)
    report = RecipeReport()
    done: set[str] = set()
    pc = 0
    while pc < len(steps):
        step = steps[pc]
        op = step["op"]
        if op == "END":
            report.stopped_by = "end"
            break
        if op == "WAIT_FOR":
            try:
                await page.wait_for_selector(step["selector"], state="attached", timeout=5000)
            except Exception:
                report.stopped_by = f"not found: {step['selector']}"
                break
        elif op == "FOR_EACH_ITEM_IN_LIST":
            report.pages += 1
            if not await _each(page, step, save, settle, report, done, max_items):
                break
        elif op == "CLICK_IF_EXISTS":
            button = await page.query_selector(step["selector"])
            usable = button is not None and await button.is_visible() and await button.is_enabled()
            if not usable:
                pc += 1
                continue
            if report.pages >= max_pages:
                report.stopped_by = f"max_pages ({max_pages})"
                break
            assert button is not None
            await button.click(timeout=3000)
            await settle()
            if step.get("then") == "REPEAT":
                pc = 0
                continue
        pc += 1
    report.stopped_by = report.stopped_by or "end"
    return report


async def _each(
    page: Page,
    step: dict[str, Any],
    save: Save,
    settle: Settle,
    report: RecipeReport,
    done: set[str],
    max_items: int,
) -> bool:
    """Run the step's commands on every item; False when the item budget is spent."""
    selector = step["selector"]
    index = 0
    while True:
        items = await page.query_selector_all(selector)  # again each time: lists re-render
        if index >= len(items):
            return True
        if report.items >= max_items:
            report.stopped_by = f"max_items ({max_items})"
            return False
        item = items[index]
        index += 1
        label = " ".join((await item.inner_text()).split())[:80]
        key = hashlib.sha256(label.encode()).hexdigest()
        if key in done:
            report.repeated += 1
            continue
        report.items += 1
        try:
            await _item(page, item, step["do"], selector, label, save, settle, report)
        except Exception as exc:  # one item's failure is that item's, not the session's
            reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            log.info("recipe: item %r failed: %s", label, reason)
            report.failed.append({"item": label, "reason": reason})
            continue
        done.add(key)


async def _item(
    page: Page,
    item: ElementHandle,
    commands: list[dict[str, Any]],
    list_selector: str,
    label: str,
    save: Save,
    settle: Settle,
    report: RecipeReport,
) -> None:
    details = ""
    panel_selector = next((c["selector"] for c in commands if c["op"] == "EXTRACT_DETAILS"), "")
    shown_before = await _text(page, panel_selector)
    for command in commands:
        op = command["op"]
        if op == "SCROLL":
            await item.scroll_into_view_if_needed(timeout=3000)
        elif op == "CLICK":
            target = command.get("target") or "item"
            element = item if target == "item" else (await item.query_selector(target)) or item
            await element.click(timeout=3000)
            await settle()
        elif op == "WAIT_FOR":
            await page.wait_for_selector(command["selector"], state="visible", timeout=5000)
        elif op == "EXTRACT_DETAILS":
            panel = await page.query_selector(command["selector"])
            if panel is None:
                raise RecipeError(f"no details panel {command['selector']}")
            if await _text(page, command["selector"]) == shown_before:
                # Still the previous item's details: saving them would file them under this one.
                raise RecipeError("the details panel did not change after the click")
            try:
                await page.evaluate(MARK_HIDDEN)
                details = str(await panel.evaluate("e => e.outerHTML"))
            finally:  # left on, the marks would hide what comes next from the scan
                with contextlib.suppress(Exception):  # a page that navigated has none
                    await page.evaluate(UNMARK_HIDDEN)
        elif op == "SAVE":
            dom = f"<html><head><title>{escape(label)}</title></head><body>{details}</body></html>"
            report.chunks += await save(dom, f'click({list_selector} "{label}")', f"item:{label}")
            report.saved += 1


async def _text(page: Page, selector: str) -> str:
    element = await page.query_selector(selector) if selector else None
    return " ".join((await element.inner_text()).split()) if element is not None else ""
