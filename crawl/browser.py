"""Rendering pages in Debian's headless Chromium (Playwright) without giving the browser a network
of its own: the page's HTML is the body lore already fetched, and every request the page makes
(scripts, XHR, stylesheets, frames) is answered by lore's safe `Fetcher`, so the address rules,
redirect checks and size and time limits hold for rendered pages too. Chromium is started with a
host resolver that resolves nothing, so a request that escaped the interception could not go
anywhere either (nor can a redirect: the browser does not route it, so `goto` follows them)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crawl.errors import CrawlError, FetchError
from crawl.fetch import Fetcher

if TYPE_CHECKING:
    from playwright.async_api import Page, Route

log = logging.getLogger(__name__)

CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND",
)
# Nothing a text extractor reads; skipping them makes pages settle sooner.
SKIPPED_RESOURCES = frozenset({"image", "media", "font"})
# Headers a page's own request carries through to the Fetcher (which sends its User-Agent).
FORWARDED_HEADERS = frozenset(
    {"accept", "accept-language", "content-type", "cookie", "x-requested-with", "authorization"}
)
# Response headers the Fetcher has already acted on (httpx decoded the body).
DROPPED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
# Below this many characters of text outside scripts, a page with scripts is rendered by 'auto'.
AUTO_MIN_TEXT = 200
# What a redirected navigation a click started is answered with (see `Renderer._serve`).
GO_ON = "<!doctype html><script>location.replace({})</script>"
# Whether a page says it is busy: an element on screen marked `aria-busy` (a loading skeleton:
# dumi's, while its route's script runs).
BUSY = """() => [...document.querySelectorAll('[aria-busy=true]')]
  .some((el) => el.getClientRects().length > 0)"""
# The body of a same-origin frame's document, or null: not a frame, not loaded, or another
# origin's, which cannot be read (JavaScript, for the page scripts).
FRAME_BODY = r"""const frameBody = (el) => {
  if (el.tagName !== 'IFRAME' && el.tagName !== 'FRAME') return null;
  try { const doc = el.contentDocument; return doc && doc.body; } catch (e) { return null; }
};"""
# The documents of a page's same-origin frames, and of the frames within them (with
# `frameBody`).
FRAME_DOCS = (
    FRAME_BODY
    + r"""
const frameDocs = (doc = document) => {
  const out = [];
  for (const f of doc.querySelectorAll('iframe, frame')) {
    const body = frameBody(f);
    if (body) out.push(body.ownerDocument, ...frameDocs(body.ownerDocument));
  }
  return out;
};"""
)
# Whether a page is still drawing: busy, or no text yet in its body or the shadow roots under
# it (an app's empty shell; a web component draws into its shadow root, which the body's text
# leaves out: Kong's spec renderer, RapiDoc), or a same-origin frame it shows, loaded from an
# address, still loading its document or with no words yet but a skeleton's, hidden from screen
# readers (Storybook's preview, created once the sidebar's app has started, draws a page only
# once that app tells it which, a placeholder table until then). Its scripts may run on well
# after its last request ends, on a busy machine.
DRAWING = (
    """() => {
  const texted = (root) => !!(root.innerText ?? root.textContent ?? '').trim()
    || [...root.querySelectorAll('*')].some((el) => el.shadowRoot && texted(el.shadowRoot));
  const shown = (f) => {
    const r = f.getBoundingClientRect();
    return r.width > 100 && r.height > 100 && !f.src.startsWith('about:');
  };
  const spoken = (body) => !!body.ownerDocument.createTreeWalker(body, NodeFilter.SHOW_TEXT, {
    acceptNode: (t) => t.data.trim() && t.parentElement.checkVisibility()
      && !t.parentElement.closest('[aria-hidden=true]')
      ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP,
  }).nextNode();
  // Another origin's frame has no document to read (null).
  const drawing = (doc) => doc && (doc.readyState === 'loading' || (doc.body && !spoken(doc.body)));
  const frames = [...document.querySelectorAll('iframe[src], frame[src]')].filter(shown);
  return (BUSY)() || !document.body || !texted(document.body)
    || frames.some((f) => drawing(f.contentDocument));
}"""
).replace("BUSY", BUSY)
# The DOM as HTML with open shadow roots flattened into their hosts (a slot shows what is
# assigned to it) and each same-origin frame's body in its frame's place, a `div` with the
# frame's attributes: what the person sees of the page, where Storybook draws each page in a
# frame beside its sidebar. Inside a frame, what it does not display is left out (Storybook's
# "No Preview" and error views, shown by a class on its body). Null when the page has neither
# (an empty frame aside), and its `page.content()` is used as it is.
SERIALIZE = (
    r"""() => {
  FRAME_BODY
  let flatten = false;
  for (const el of document.querySelectorAll('*')) {
    if (el.shadowRoot || (frameBody(el) || {}).firstElementChild) { flatten = true; break; }
  }
  if (!flatten) return null;
  const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link',
    'meta', 'source', 'track', 'wbr']);
  const text = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const value = (t) => t.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  const out = [];
  const node = (n) => {
    if (n.nodeType === 3) { out.push(text(n.data)); return; }
    if (n.nodeType !== 1) return;
    const tag = n.localName;
    if (tag === 'script' || tag === 'style' || tag === 'template') return;
    if (tag === 'slot') {
      const assigned = n.assignedNodes({flatten: true});
      (assigned.length ? assigned : Array.from(n.childNodes)).forEach(node);
      return;
    }
    const framed = n.ownerDocument !== document;
    if (framed && n.ownerDocument.defaultView.getComputedStyle(n).display === 'none') return;
    const body = frameBody(n);
    out.push('<' + (body ? 'div' : tag));
    for (const a of n.attributes) {
      if (/^[a-zA-Z_:][\w:.-]*$/.test(a.name) && a.name !== 'srcdoc') {
        out.push(` ${a.name}="${value(a.value)}"`);
      }
    }
    out.push('>');
    if (VOID.has(tag)) return;
    (body || n.shadowRoot || n).childNodes.forEach(node);
    out.push('</' + (body ? 'div' : tag) + '>');
  };
  node(document.documentElement);
  return '<!DOCTYPE html>' + out.join('');
}"""
).replace("FRAME_BODY", FRAME_BODY)
# A class that says a group is collapsed (a JavaScript regex): Docusaurus's categories
# ("menu__list-item--collapsed"), Vocs's sidebar sections ("vocs_Sidebar_levelCollapsed",
# headed by a `role=button` with no `aria-expanded`), "collapsed" alone.
COLLAPSED_CLASS = r"/(^|[\s_-])collapsed(?![\w-])|[a-z]Collapsed(?![\w-])/"
# Opens the collapsed groups of a page's navigation (a sidebar's categories), whose links many
# apps render only once opened, round by round for groups inside groups; returns how many it
# clicked. Only controls that open in place: buttons and summaries, links that go nowhere
# (`href="#"`) or say they are buttons; shown ones (a menu toggle hidden at this width is not).
# Not a picker (`aria-haspopup` listbox or dialog: a theme, language or version switch): it opens
# choices, not links, and its library may hide the rest of the page while they are open. A
# group says it is shut by `aria-expanded=false`, a `details` element, or a class on the
# group its button heads (COLLAPSED_CLASS).
EXPAND_NAVIGATION = """async () => {
  const NAV = 'nav, aside, [role=navigation], [role=tree]';
  const within = (selectors) => selectors
    .flatMap((c) => NAV.split(', ').map((n) => `${n} ${c}`)).join(', ');
  const CLOSED = within(['[aria-expanded=false]', 'details:not([open]) > summary']);
  const HEADS = within(['[class*=ollapsed] > :is(button, [role=button]):not([aria-expanded])']);
  const marked = (el) => COLLAPSED.test(el.parentElement.getAttribute('class') || '');
  const opens = (el) => {
    if (el.matches('input, select, textarea')) return false;
    if (['listbox', 'dialog'].includes(el.getAttribute('aria-haspopup'))) return false;
    if (el.tagName !== 'A' || el.getAttribute('role') === 'button') return true;
    const href = (el.getAttribute('href') || '').trim();
    return href === '' || href === '#' || href.startsWith('javascript:');
  };
  const shown = (el) => el.getClientRects().length > 0
    && getComputedStyle(el).visibility === 'visible';
  const done = new Set();
  for (let round = 0; round < 4 && done.size < 200; round++) {
    const heads = [...document.querySelectorAll(HEADS)].filter(marked);
    const closed = [...document.querySelectorAll(CLOSED), ...heads]
      .filter((el) => !done.has(el) && opens(el) && shown(el));
    if (!closed.length) break;
    for (const el of closed.slice(0, 200 - done.size)) { done.add(el); el.click(); }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return done.size;
}""".replace("COLLAPSED", COLLAPSED_CLASS)


class BrowserUnavailableError(CrawlError):
    """Chromium is not installed where the settings say, or does not start."""


@dataclass(frozen=True)
class BrowserOptions:
    executable_path: str = "/usr/bin/chromium"
    max_pages: int = 2  # pages rendered at once (each is a Chromium renderer process)
    timeout_s: float = 20.0  # per page: to load, then again at most for the network to go quiet
    drawing_s: float = 5.0  # then at most this long more while the page says it is drawing


def browser_missing(options: BrowserOptions) -> str | None:
    """Why a browser render cannot start here, or None."""
    if not os.access(options.executable_path, os.X_OK):
        return (
            f"rendering needs Chromium at {options.executable_path} (apt-get install -y "
            "chromium, or set LORE_BROWSER__EXECUTABLE_PATH)"
        )
    return None


def needs_render(soup: Any) -> bool:
    """True when static HTML has no real content of its own: scripts, and less than
    `AUTO_MIN_TEXT` characters of text outside script, style, noscript and template."""
    if soup.find("script") is None:
        return False
    skipped = {"script", "style", "noscript", "template", "head", "title"}
    size = 0
    for text in soup.find_all(string=True):
        if text.parent is not None and text.parent.name not in skipped:
            size += len(text.strip())
            if size >= AUTO_MIN_TEXT:
                return False
    return True


async def launch_browser(options: BrowserOptions, *extra_args: str) -> tuple[Any, Any]:
    """Playwright and a headless Chromium with no network of its own; BrowserUnavailableError
    when Chromium is missing or does not start."""
    if problem := browser_missing(options):
        raise BrowserUnavailableError(problem)
    from playwright.async_api import async_playwright  # noqa: PLC0415

    playwright = await async_playwright().start()
    try:
        browser = await playwright.chromium.launch(
            executable_path=options.executable_path,
            args=[*CHROMIUM_ARGS, *extra_args],
            timeout=30_000,
        )
    except Exception as exc:
        await playwright.stop()
        raise BrowserUnavailableError(f"Chromium did not start: {exc}") from exc
    return playwright, browser


async def close_browser(playwright: Any, browser: Any) -> None:
    """Close what `launch_browser` started (either may be None); a browser that already died
    is closed all the same."""
    if browser is not None:
        with contextlib.suppress(Exception):
            await browser.close()
    if playwright is not None:
        with contextlib.suppress(Exception):
            await playwright.stop()


class Renderer:
    """One Chromium for a crawl job, started on first use; each page renders in its own
    browser context (no cookies or storage shared between pages)."""

    def __init__(self, fetcher: Fetcher, options: BrowserOptions) -> None:
        self._fetcher = fetcher
        self._options = options
        self._slots = asyncio.Semaphore(max(1, options.max_pages))
        self._start_lock = asyncio.Lock()
        self._playwright: Any = None
        self._browser: Any = None
        # Where a page's navigation was redirected to (see `_serve`), for `goto` to load.
        self._moved: dict[Page, str] = {}
        self._going: set[Page] = set()  # pages in `goto`

    async def _started(self) -> Any:
        async with self._start_lock:
            if self._browser is None:
                self._playwright, self._browser = await launch_browser(self._options)
            return self._browser

    async def aclose(self) -> None:
        await close_browser(self._playwright, self._browser)
        self._browser = self._playwright = None

    @asynccontextmanager
    async def page(
        self,
        html: bytes | None = None,
        content_type: str | None = None,
        init_script: str | None = None,
    ) -> AsyncIterator[Page]:
        """A page in a fresh browser context whose every request lore's fetcher answers; with
        `html`, the first document the page navigates to is that body instead."""
        browser = await self._started()
        async with self._slots:
            context = await browser.new_context(
                user_agent=self._fetcher.options.user_agent,
                service_workers="block",
                viewport={"width": 1280, "height": 900},
            )
            try:
                if init_script:
                    await context.add_init_script(init_script)
                page = await context.new_page()
                served = html is None

                async def route(route: Route) -> None:
                    nonlocal served
                    if not served and route.request.frame == page.main_frame:
                        served = True
                        await route.fulfill(
                            status=200,
                            headers={"content-type": content_type or "text/html"},
                            body=html,
                        )
                        return
                    await self._serve(route)

                await context.route("**/*", route)
                await context.route_web_socket("**/*", lambda ws: ws.close())
                yield page
            finally:
                self._moved.pop(page, None)
                self._going.discard(page)
                with contextlib.suppress(Exception):
                    await context.close()

    async def goto(self, page: Page, url: str) -> None:
        """Load `url`, or where it redirects to, and wait for its requests to end (at most
        the timeout again) and, should it say it is still drawing, for it to be drawn (at most
        `drawing_s` more)."""
        timeout_ms = self._options.timeout_s * 1000
        asked = url
        self._moved.pop(page, None)  # a click's, earlier
        for tries_left in (2, 1, 0):  # the Fetcher follows (and checks) each redirect chain
            failed: Exception | None = None
            self._going.add(page)
            try:
                await page.goto(url, wait_until="load", timeout=timeout_ms)
            except Exception as exc:
                failed = exc
            finally:
                self._going.discard(page)
            moved = self._moved.pop(page, None)
            if moved is None and failed is None:
                break
            if moved is None or not tries_left:
                why = f"{asked} did not render: {failed or 'too many redirects'}"
                raise FetchError(asked, "render_failed", why) from failed
            url = moved
        with contextlib.suppress(Exception):  # a page that keeps polling still renders
            await page.wait_for_load_state("networkidle", timeout=timeout_ms)
        with contextlib.suppress(Exception):  # still drawing after that: read as it is
            if await page.evaluate(DRAWING):
                drawn = f"() => !({DRAWING})()"
                await page.wait_for_function(
                    drawn, polling=100, timeout=self._options.drawing_s * 1000
                )

    async def render(self, url: str, html: bytes, content_type: str | None = None) -> bytes:
        """The DOM after `html`, served at `url`, ran its scripts and its requests settled."""
        async with self.page(html, content_type) as page:
            await self.goto(page, url)
            await self._expand_navigation(page)
            content = await page.evaluate(SERIALIZE) or await page.content()
        rendered = content.encode("utf-8")
        if len(rendered) > self._fetcher.options.max_bytes:
            raise FetchError(
                url,
                "too_large",
                f"{url} rendered to {len(rendered)} bytes; the limit is "
                f"{self._fetcher.options.max_bytes}",
            )
        return rendered

    async def _expand_navigation(self, page: Page) -> None:
        """Open the navigation's collapsed groups, so that a crawl finds the links inside.
        Should a click leave the page after all, the page is loaded again as it was."""
        address = page.url
        try:
            opened = await page.evaluate(EXPAND_NAVIGATION)
        except Exception as exc:  # the document went away under the script
            log.info("rendering: opening %s's navigation failed: %s", address, exc)
            opened = -1
        if opened < 0 or page.url != address:
            await self.goto(page, address)

    async def _serve(self, route: Route) -> None:
        request = route.request
        if request.resource_type in SKIPPED_RESOURCES:
            await route.abort("blockedbyclient")
            return
        headers = {k: v for k, v in request.headers.items() if k.lower() in FORWARDED_HEADERS}
        try:
            answer = await self._fetcher.fetch_response(
                request.url, headers, method=request.method, content=request.post_data_buffer
            )
        except FetchError as exc:
            log.info("rendering: %s refused: %s", request.url, exc)
            await route.abort("blockedbyclient" if exc.reason == "blocked_address" else "failed")
            return
        frame = request.frame if request.is_navigation_request() else None
        if answer.url != request.url and frame is not None and frame == frame.page.main_frame:
            # The page's address (and the base of its relative links, the path its router
            # reads) must be where the redirect ended, but the browser does not route a
            # redirect it is answered with: it would go to the network, which it has none of.
            # So the navigation ends where it started (204), and `goto` loads where it ended.
            # One that `goto` did not start (a click on a link, a script's) goes on there from a
            # document that only replaces itself with it, as a browser goes on from a redirect.
            if frame.page in self._going:
                self._moved[frame.page] = answer.url  # (a frame's is answered with its end)
                await route.fulfill(status=204)
            else:
                await route.fulfill(
                    status=200,
                    headers={"content-type": "text/html; charset=utf-8"},
                    body=GO_ON.format(json.dumps(answer.url).replace("<", "\\u003c")),
                )
            return
        await route.fulfill(
            status=answer.status,
            headers={k: v for k, v in answer.headers.items() if k not in DROPPED_HEADERS},
            body=answer.body,
        )
