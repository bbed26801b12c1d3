"""An explorer policy that asks a chat model (any OpenAI-compatible `/chat/completions` endpoint)
which element to act on next. It sees only the candidates the explorer already found eligible
(visible, enabled, not destructive, not tried), so a model cannot choose to delete or pay."""

from __future__ import annotations

import logging
import re

import httpx

from spa_phases.errors import CaptureError
from spa_phases.explorer import Candidate, Step

log = logging.getLogger(__name__)

SYSTEM = (
    "You explore a web page for a knowledge base. Pick the element whose click most likely "
    "reveals knowledge the page hides (tabs, accordions, details panels, 'show more'). Never "
    "pick an element that would change data. Answer with the element's number only, or NONE "
    "when nothing left is worth clicking."
)
MAX_LISTED = 60


class LlmPolicy:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = timeout_s
        self._transport = transport

    def prompt(self, candidates: list[Candidate], steps: list[Step]) -> str:
        done = "\n".join(f"- {s.action} ({s.label}): {s.effect}" for s in steps[-10:])
        listed = "\n".join(
            f"{n}. [{c.pattern}] <{c.tag}> {c.label!r}"
            for n, c in enumerate(candidates[:MAX_LISTED])
        )
        return f"Done so far:\n{done or 'nothing yet'}\n\nElements:\n{listed}\n\nWhich number?"

    async def choose(self, candidates: list[Candidate], steps: list[Step]) -> Candidate | None:
        if not candidates:
            return None
        body = {
            "model": self._model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": self.prompt(candidates, steps)},
            ],
        }
        try:
            async with httpx.AsyncClient(
                timeout=self._timeout, transport=self._transport
            ) as client:
                response = await client.post(self._url, json=body, headers=self._headers)
                response.raise_for_status()
                answer = str(response.json()["choices"][0]["message"]["content"])
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
            raise CaptureError(f"the LLM policy at {self._url} failed: {exc}") from exc
        if re.search(r"\bnone\b", answer, re.I):
            return None
        number = re.search(r"\d+", answer)
        if number is None or int(number.group()) >= min(len(candidates), MAX_LISTED):
            log.info("LLM policy: no usable choice in %r; stopping", answer[:200])
            return None
        return candidates[int(number.group())]
