"""The figures behind the worker tier's queue engine: Dramatiq on RabbitMQ against Dramatiq on
Redis, both running on 127.0.0.1 here.

For each broker: (1) messages/s through one consumer process (publish N small messages with
the broker's delivery confirmation, consume them, acknowledge each after its work); (2) after
`kill -9` of a consumer in the middle of a message, how long until another consumer gets the
same message (what a killed worker's page waits before it is redone), with each broker's
default settings. Run it on a quiet machine."""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import dramatiq
from dramatiq.brokers.rabbitmq import RabbitmqBroker
from dramatiq.brokers.redis import RedisBroker

URLS = {
    "rabbitmq": "amqp://guest:guest@127.0.0.1:5672/%2F",
    "redis": "redis://127.0.0.1:6379/3",
}


def broker(kind: str) -> Any:
    if kind == "rabbitmq":
        return RabbitmqBroker(url=URLS[kind], confirm_delivery=True)
    return RedisBroker(url=URLS[kind])


def declare(kind: str, queue: str, marks: Path) -> tuple[Any, Any]:
    """The broker and an actor that notes each message it starts and finishes in `marks`."""
    made = broker(kind)

    def work(n: int, hold_s: float) -> None:
        with marks.open("a") as out:
            out.write(f"start {n} {time.time()}\n")
        time.sleep(hold_s)
        with marks.open("a") as out:
            out.write(f"done {n} {time.time()}\n")

    actor = dramatiq.actor(broker=made, actor_name="bench", queue_name=queue, max_retries=0)(work)
    return made, actor


def consume(kind: str, queue: str, marks: Path) -> None:
    made, _ = declare(kind, queue, marks)
    worker = dramatiq.Worker(made, queues={queue}, worker_threads=1)
    worker.start()
    signal.sigwait({signal.SIGTERM})
    worker.stop(2000)


def consumer(kind: str, queue: str, marks: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, __file__, "--consume", kind, queue, str(marks)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def lines(marks: Path, word: str) -> list[tuple[int, float]]:
    if not marks.exists():
        return []
    found = []
    for line in marks.read_text().splitlines():
        kind, n, at = line.split()
        if kind == word:
            found.append((int(n), float(at)))
    return found


def wait_for(check: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.01)
    return False


def throughput(kind: str, tmp: Path, n: int) -> float:
    queue, marks = f"qc-{secrets.token_hex(4)}", tmp / f"{kind}-rate"
    made, actor = declare(kind, queue, marks)
    proc = consumer(kind, queue, marks)
    try:
        time.sleep(2)
        started = time.monotonic()
        for i in range(n):
            actor.send(i, 0.0)
        if not wait_for(lambda: len(lines(marks, "done")) >= n, 300):
            raise SystemExit(f"{kind}: not all messages were processed")
        return n / (time.monotonic() - started)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
        made.flush_all()
        made.close()


def redelivery(kind: str, tmp: Path, timeout_s: float) -> float | None:
    queue, marks = f"qc-{secrets.token_hex(4)}", tmp / f"{kind}-kill"
    made, actor = declare(kind, queue, marks)
    first = consumer(kind, queue, marks)
    second = None
    try:
        time.sleep(2)
        actor.send(1, 60.0)  # held for a minute by whoever takes it
        if not wait_for(lambda: lines(marks, "start"), 30):
            raise SystemExit(f"{kind}: the message was not taken")
        second = consumer(kind, queue, marks)
        time.sleep(2)
        first.send_signal(signal.SIGKILL)
        killed = time.time()
        first.wait(10)
        if not wait_for(lambda: len(lines(marks, "start")) >= 2, timeout_s):
            return None
        return lines(marks, "start")[1][1] - killed
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)
        made.flush_all()
        made.close()


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--consume":
        consume(sys.argv[2], sys.argv[3], Path(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--wait", type=float, default=180.0, help="for a redelivery, at most")
    parser.add_argument("--brokers", nargs="+", default=list(URLS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.brokers:
            rate = throughput(kind, Path(tmp), args.messages)
            after = redelivery(kind, Path(tmp), args.wait)
            again = f"{after:.2f} s" if after is not None else f"not within {args.wait:.0f} s"
            print(
                f"dramatiq on {kind}: {rate:.0f} messages/s through one consumer; "
                f"a killed consumer's message redelivered after {again}"
            )
    os._exit(0)  # the brokers' client threads


if __name__ == "__main__":
    main()
