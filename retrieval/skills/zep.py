"""`SkillIndex` on Zep (zep-python 2.x), for teams that run Zep: each tenant's skills are the
messages of one Zep session (`lore-skills-<tenant>`), the goal as the message's content and the
skill as its metadata; Zep embeds and searches the goals itself. Zep's API has no call that
deletes one message, so an evicted or expired skill is marked `deleted` in its metadata and
never read back. Tested against a local stand-in of the endpoints used here (no Zep server can
run on this project's machines)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zep_python.client import Zep
from zep_python.core.api_error import ApiError
from zep_python.types import Message

from retrieval.errors import StoreUnavailableError
from retrieval.skills.types import Nearest, Skill

SESSION_PREFIX = "lore-skills-"
PAGE = 500


class ZepSkillIndex:
    def __init__(self, base_url: str, api_key: str | None = None, timeout_s: float = 30.0):
        self._zep = Zep(base_url=base_url, api_key=api_key or "none", timeout=timeout_s)
        self._sessions: set[str] = set()

    def _session(self, tenant_id: str) -> str:
        session = SESSION_PREFIX + tenant_id
        if session not in self._sessions:
            try:
                self._zep.memory.get_session(session)
            except ApiError as exc:
                if exc.status_code != 404:
                    raise StoreUnavailableError(f"Zep: {exc}") from exc
                self._zep.memory.add_session(session_id=session, metadata={"lore": "skills"})
            self._sessions.add(session)
        return session

    def _messages(self, tenant_id: str) -> list[Message]:
        session = self._session(tenant_id)
        found: list[Message] = []
        cursor = 1
        while True:
            page = self._zep.memory.get_session_messages(session, limit=PAGE, cursor=cursor)
            messages = page.messages or []
            found.extend(messages)
            if len(messages) < PAGE:
                return found
            cursor += 1

    @staticmethod
    def _skill(message: Message) -> Skill | None:
        meta = message.metadata or {}
        if meta.get("deleted") or "skill_id" not in meta:
            return None
        return Skill.from_payload(str(meta["skill_id"]), meta)

    def _find(self, tenant_id: str, ids: Sequence[str]) -> dict[str, Message]:
        wanted = set(ids)
        out = {}
        for message in self._messages(tenant_id):
            skill = self._skill(message)
            if skill is not None and skill.id in wanted:
                out[skill.id] = message
        return out

    def put(self, skill: Skill, vector: Sequence[float]) -> None:
        stored = self._find(skill.tenant_id, [skill.id]).get(skill.id)
        if stored is not None:
            self._rewrite(stored, skill)
            return
        message = Message(
            role_type="system",
            role="lore-skill",
            content=skill.goal,
            metadata={**skill.payload(), "skill_id": skill.id},
        )
        self._zep.memory.add(self._session(skill.tenant_id), messages=[message])

    def update(self, skill: Skill) -> None:
        message = self._find(skill.tenant_id, [skill.id]).get(skill.id)
        if message is None:
            raise StoreUnavailableError(f"Zep lost skill {skill.id}")
        self._rewrite(message, skill)

    def _rewrite(self, message: Message, skill: Skill) -> None:
        if message.uuid_ is None:
            raise StoreUnavailableError(f"Zep gave skill {skill.id}'s message no uuid")
        self._zep.memory.update_message_metadata(
            self._session(skill.tenant_id),
            message.uuid_,
            metadata={**skill.payload(), "skill_id": skill.id},
        )

    def get(self, tenant_id: str, ids: Sequence[str]) -> list[Skill]:
        return [s for m in self._find(tenant_id, ids).values() if (s := self._skill(m))]

    def delete(self, tenant_id: str, ids: Sequence[str]) -> None:
        session = self._session(tenant_id)
        for message in self._find(tenant_id, ids).values():
            if message.uuid_:
                meta = {**(message.metadata or {}), "deleted": True}
                self._zep.memory.update_message_metadata(session, message.uuid_, metadata=meta)

    def nearest(
        self,
        tenant_id: str,
        domain: str,
        goal: str,
        vector: Sequence[float],
        used_after: float,
        limit: int,
    ) -> list[Nearest]:
        response = self._zep.memory.search_sessions(
            text=goal,
            session_ids=[self._session(tenant_id)],
            search_scope="messages",
            limit=limit * 4,  # deleted, other domains and stale ones are dropped below
        )
        found = []
        for result in response.results or []:
            if result.message is None:
                continue
            skill = self._skill(result.message)
            meta: dict[str, Any] = result.message.metadata or {}
            if (
                skill is not None
                and skill.domain == domain
                and float(meta.get("last_used_ts", 0)) >= used_after
            ):
                found.append(Nearest(skill, float(result.score or 0.0)))
        found.sort(key=lambda n: -n.similarity)
        return found[:limit]

    def scan(self, tenant_id: str) -> list[Skill]:
        return [s for m in self._messages(tenant_id) if (s := self._skill(m))]

    def count(self, tenant_id: str) -> int:
        return len(self.scan(tenant_id))

    def expire(self, used_before: float) -> int:
        gone = 0
        for name in self._session_names():
            if not name.startswith(SESSION_PREFIX):
                continue
            tenant = name[len(SESSION_PREFIX) :]
            stale = [s.id for s in self.scan(tenant) if s.last_used.timestamp() < used_before]
            self.delete(tenant, stale)
            gone += len(stale)
        return gone

    def _session_names(self) -> list[str]:
        names: list[str] = []
        page_number = 1
        while True:
            listed = self._zep.memory.list_sessions(page_number=page_number, page_size=PAGE)
            sessions = listed.sessions or []
            names.extend(s.session_id or "" for s in sessions)
            if len(sessions) < PAGE:
                return names
            page_number += 1

    def close(self) -> None:
        """zep-python's client holds nothing to release."""
