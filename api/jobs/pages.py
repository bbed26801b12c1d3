"""A crawl's pages as units of work for `lore worker`s, on Dramatiq with RabbitMQ.

With `LORE_QUEUE__URL` set, the runner of an index-link job (one per job, claimed in the
catalog) fetches and follows links as always, and hands each changed page to the queue instead
of storing it: a message with the page's body, on a durable queue, published with RabbitMQ's
confirmation. Any worker takes it, extracts, chunks, embeds and stores it in the shared vector
store (a Qdrant server), records the URL's outcome in the catalog, and only then acknowledges
the message. A worker killed before that leaves the message unacknowledged, and RabbitMQ gives
it to another worker as soon as the dead one's connection drops; storing a page again writes
the same chunk ids (they derive from the tenant, the URL and the text), so nothing is stored
twice, and the URL's outcome is recorded once (only for a URL still `pending` or `queued`).
Why Dramatiq on RabbitMQ, with the figures: docs/jobs.md."""

from __future__ import annotations

import asyncio
import base64
import functools
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import TYPE_CHECKING, Any

from api.ratelimit import without_password
from crawl import Page

if TYPE_CHECKING:
    from api.settings import Settings

log = logging.getLogger(__name__)

INSTALL = "pip install 'lore[queue]'"
ACTOR = "lore_store_page"
MAX_RETRIES = 3  # a page whose storing raised this many times more is recorded as failed
TIME_LIMIT_MS = 10 * 60 * 1000  # one page's extraction and embedding, at most


class QueueUnavailableError(RuntimeError):
    """The queue engine's client is not installed, or the broker does not answer."""


def page_message(job_id: str, page: Page) -> dict[str, Any]:
    return {
        "job": job_id,
        "url": page.url,
        "final_url": page.final_url,
        "status": page.status,
        "content_type": page.content_type,
        "body": base64.b64encode(page.body).decode("ascii"),
        "fetched_at": page.fetched_at.isoformat(),
        "headers": page.headers,
        "depth": page.depth,
        "links": list(page.links),
    }


def message_page(message: dict[str, Any]) -> Page:
    return Page(
        url=message["url"],
        final_url=message["final_url"],
        status=int(message["status"]),
        content_type=message["content_type"],
        body=base64.b64decode(message["body"]),
        fetched_at=datetime.fromisoformat(message["fetched_at"]),
        headers=dict(message["headers"]),
        depth=int(message["depth"]),
        links=tuple(message["links"]),
    )


Handler = Callable[[dict[str, Any]], None]
GiveUp = Callable[[dict[str, Any], BaseException], None]  # (message, why)


class PageQueue:
    """One durable queue of page units on a RabbitMQ broker: `send` from the job runner that
    fetched the page, `consume` in the worker processes."""

    def __init__(self, url: str, name: str) -> None:
        try:
            import dramatiq  # noqa: PLC0415
            from dramatiq.brokers.rabbitmq import RabbitmqBroker  # noqa: PLC0415
            from dramatiq.middleware import CurrentMessage, default_middleware  # noqa: PLC0415
        except ImportError as exc:
            raise QueueUnavailableError(
                f"LORE_QUEUE__URL needs Dramatiq with RabbitMQ: {INSTALL}"
            ) from exc
        self.name = name
        self._current = CurrentMessage
        try:  # a wrong address or password is said at start, not logged by every consumer
            import pika  # noqa: PLC0415

            pika.BlockingConnection(pika.URLParameters(url)).close()
        except pika.exceptions.AMQPError as exc:
            raise QueueUnavailableError(
                f"the queue engine at {without_password(url)} does not answer: {exc!r}"
            ) from exc
        self._broker = RabbitmqBroker(
            url=url,
            confirm_delivery=True,  # a page handed over is on the broker's disk
            middleware=[m() for m in default_middleware] + [CurrentMessage()],
        )
        self._handler: Handler | None = None
        self._give_up: GiveUp | None = None
        self._actor = dramatiq.actor(
            broker=self._broker,
            actor_name=ACTOR,
            queue_name=name,
            max_retries=MAX_RETRIES,
            min_backoff=1_000,
            max_backoff=30_000,
            time_limit=TIME_LIMIT_MS,
        )(self._process)
        self._sender = ThreadPoolExecutor(1, thread_name_prefix="lore-queue-send")
        self._worker: Any = None

    async def send(self, message: dict[str, Any]) -> None:
        """Publish a page (on one thread of its own: the broker's connection is per thread)."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._sender, functools.partial(self._actor.send, message))

    def _process(self, message: dict[str, Any]) -> None:
        current = self._current.get_current_message()
        retries = int(current.options.get("retries", 0)) if current is not None else 0
        if current is not None and getattr(current, "redelivered", False):
            log.info("page %s redelivered: a worker stopped before storing it", message.get("url"))
        assert self._handler is not None and self._give_up is not None
        last = retries >= MAX_RETRIES
        try:
            self._handler(message)
        except BaseException as exc:  # the time limit is a BaseException too
            if not last or isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            # acknowledged: the page's outcome is the error, not a message dead-lettered
            self._give_up(message, exc)

    def consume(self, handler: Handler, give_up: GiveUp, threads: int) -> None:
        """Take pages in `threads` threads of this process until `stop`; a message is
        acknowledged when `handler` returns, retried later when it raises, and handed to
        `give_up` when it raised on its last attempt."""
        import dramatiq  # noqa: PLC0415

        self._handler = handler
        self._give_up = give_up
        self._worker = dramatiq.Worker(self._broker, queues={self.name}, worker_threads=threads)
        self._worker.start()

    def stop_consuming(self, timeout_s: float) -> None:
        """Stop taking pages: the ones being stored get about `timeout_s` to finish; those taken
        but not started go back to the queue (and any unfinished one, when the process exits)."""
        if self._worker is not None:
            # Dramatiq waits up to its timeout for the page threads, then for the consumers.
            self._worker.stop(timeout=int(timeout_s * 500))
            self._worker = None

    def close(self) -> None:
        """After the job runners stopped sending."""
        self._sender.shutdown(wait=False)
        self._broker.close()


@functools.cache
def _queue(url: str, name: str) -> PageQueue:
    return PageQueue(url, name)


def page_queue(settings: Settings) -> PageQueue | None:
    """The process's page queue when the settings name a queue engine, else None."""
    if not settings.queue.url:
        return None
    return _queue(settings.queue.url, settings.queue.name)
