"""A local HTTP stand-in for the Zep v2 endpoints lore's Zep skills backend uses (no Zep server
can run here). It keeps sessions and messages in memory and searches messages by word overlap
(cosine of word counts): Zep embeds with a model of its own, which this does not imitate. It
records every request, so tests can see that lore really went through Zep's API."""

from __future__ import annotations

import json
import math
import re
import threading
import uuid
from collections import Counter
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PREFIX = "/api/v2"


def _similarity(a: str, b: str) -> float:
    x, y = Counter(re.findall(r"\w+", a.lower())), Counter(re.findall(r"\w+", b.lower()))
    dot = sum(x[w] * y[w] for w in x)
    norm = math.sqrt(sum(v * v for v in x.values())) * math.sqrt(sum(v * v for v in y.values()))
    return dot / norm if norm else 0.0


class ZepStandIn:
    def __init__(self, api_key: str = "zep-test-key") -> None:
        self.api_key = api_key
        self.sessions: dict[str, dict[str, Any]] = {}
        self.messages: dict[str, list[dict[str, Any]]] = {}
        self.requests: list[tuple[str, str]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length) or b"{}")

            def _route(self, method: str) -> None:
                parts = urlsplit(self.path)
                stand_in.requests.append((method, parts.path))
                if self.headers.get("Authorization") != f"Api-Key {stand_in.api_key}":
                    self._send(401, {"message": "unauthorized"})
                    return
                if not parts.path.startswith(PREFIX):
                    self._send(404, {"message": "not found"})
                    return
                path = parts.path[len(PREFIX) :].strip("/").split("/")
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                status, body = stand_in.handle(method, path, query, self._body())
                self._send(status, body)

            def do_GET(self) -> None:
                self._route("GET")

            def do_POST(self) -> None:
                self._route("POST")

            def do_PATCH(self) -> None:
                self._route("PATCH")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # zep-python appends /api/v2 to the base URL it is given.
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def handle(
        self, method: str, path: list[str], query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        now = datetime.now(UTC).isoformat()
        match method, path:
            case "POST", ["sessions"]:
                session = {"session_id": body["session_id"], "metadata": body.get("metadata")}
                session["created_at"] = now
                self.sessions[body["session_id"]] = session
                self.messages.setdefault(body["session_id"], [])
                return 201, session
            case "GET", ["sessions-ordered"]:
                size, number = int(query.get("page_size", 100)), int(query.get("page_number", 1))
                listed = list(self.sessions.values())[(number - 1) * size : number * size]
                return 200, {"sessions": listed, "total_count": len(self.sessions)}
            case "POST", ["sessions", "search"]:
                wanted = body.get("session_ids") or list(self.messages)
                results = [
                    {
                        "message": m,
                        "score": _similarity(body.get("text") or "", m["content"]),
                        "session_id": sid,
                    }
                    for sid in wanted
                    for m in self.messages.get(sid, [])
                ]
                results.sort(key=lambda r: -r["score"])
                return 200, {"results": results[: int(query.get("limit", 10))]}
            case "GET", ["sessions", sid] if sid in self.sessions:
                return 200, self.sessions[sid]
            case "POST", ["sessions", sid, "memory"] if sid in self.sessions:
                for message in body["messages"]:
                    self.messages[sid].append(
                        {**message, "uuid": str(uuid.uuid4()), "created_at": now}
                    )
                return 200, {"message": "OK"}
            case "GET", ["sessions", sid, "messages"] if sid in self.sessions:
                limit, cursor = int(query.get("limit", 100)), int(query.get("cursor", 1))
                page = self.messages[sid][(cursor - 1) * limit : cursor * limit]
                return 200, {
                    "messages": page,
                    "row_count": len(page),
                    "total_count": len(self.messages[sid]),
                }
            case "PATCH", ["sessions", sid, "messages", mid] if sid in self.sessions:
                for message in self.messages[sid]:
                    if message["uuid"] == mid:
                        message["metadata"] = body["metadata"]
                        message["updated_at"] = now
                        return 200, message
        return 404, {"message": f"not found: {method} /{'/'.join(path)}"}
