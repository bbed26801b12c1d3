"""The rules of the skills library, the same over every backend: one skill per goal and failure
on a domain, outcomes counted, a TTL since last use, a cap per tenant that evicts the least
useful first, skills below the success-rate floor never returned, and ranking by goal
similarity x success rate x recency."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from retrieval.errors import NotFoundError
from retrieval.skills.types import (
    FailedState,
    Skill,
    SkillHit,
    SkillIndex,
    SkillRules,
    SuccessfulAction,
    skill_id,
)

log = logging.getLogger(__name__)

Embed = Callable[[str], Sequence[float]]
EXPIRY_EVERY = timedelta(hours=1)  # expired skills are purged on a record at most this often
Clock = Callable[[], datetime]


def _now() -> datetime:
    return datetime.now(UTC)


class SkillLibrary:
    def __init__(
        self,
        index: SkillIndex,
        embed: Embed | None,  # None: the backend embeds goals itself (Zep)
        rules: SkillRules | None = None,
        clock: Clock = _now,
    ) -> None:
        self.index = index
        self._embed = embed
        self.rules = rules or SkillRules()
        self._clock = clock
        self._lock = threading.Lock()  # record and outcome read, then write
        self._last_expiry: datetime | None = None

    def _cutoff(self) -> float:
        return (self._clock() - timedelta(days=self.rules.ttl_days)).timestamp()

    def record(
        self,
        tenant_id: str,
        domain: str,
        goal: str,
        failed: FailedState,
        worked: SuccessfulAction,
    ) -> Skill:
        """Remember that `worked` did what `failed` did not for `goal` on `domain`. Recording
        the same goal and failure again updates that skill (its latest fix, one more success)."""
        goal = " ".join(goal.split())
        if not goal or not worked.action.strip() or not failed.action.strip():
            raise ValueError("a skill needs a goal, the failed action and the action that worked")
        domain = domain.lower()
        now = self._clock()
        key = skill_id(tenant_id, domain, goal, failed)
        with self._lock:
            found = self.index.get(tenant_id, [key])
            if found:
                existing = found[0]
                skill = replace(
                    existing,
                    successful_action=worked,
                    success_count=existing.success_count + 1,
                    last_used=now,
                )
                self.index.update(skill)
                return skill
            if self._last_expiry is None or now - self._last_expiry > EXPIRY_EVERY:
                self.index.expire(self._cutoff())  # searches skip stale ones in between
                self._last_expiry = now
            self._make_room(tenant_id)
            skill = Skill(key, tenant_id, domain, goal, failed, worked, 1, 0, now, now)
            self.index.put(skill, self._embed(goal) if self._embed is not None else [])
            return skill

    def _make_room(self, tenant_id: str) -> None:
        excess = self.index.count(tenant_id) - self.rules.max_per_tenant + 1
        if excess <= 0:
            return
        now = self._clock()
        ranked = sorted(
            self.index.scan(tenant_id),
            key=lambda s: (s.success_rate * self._recency(s, now), s.last_used),
        )
        gone = [s.id for s in ranked[:excess]]
        self.index.delete(tenant_id, gone)
        log.info("skills: tenant %s at its cap; evicted %d least useful", tenant_id, len(gone))

    def outcome(self, tenant_id: str, skill_id_: str, success: bool) -> Skill:
        """Count one more use of a skill, successful or not."""
        with self._lock:
            found = self.index.get(tenant_id, [skill_id_])
            if not found:
                raise NotFoundError(f"no skill {skill_id_}")
            skill = found[0]
            skill = replace(
                skill,
                success_count=skill.success_count + int(success),
                failure_count=skill.failure_count + int(not success),
                last_used=self._clock(),
            )
            self.index.update(skill)
            return skill

    def listing(
        self, tenant_id: str, domain: str | None = None, limit: int = 50, offset: int = 0
    ) -> tuple[list[Skill], int]:
        """The tenant's skills (on `domain` only, when given), most recently used first, and
        how many there are in all."""
        skills = [
            s for s in self.index.scan(tenant_id) if domain is None or s.domain == domain.lower()
        ]
        skills.sort(key=lambda s: (s.last_used, s.id), reverse=True)
        return skills[offset : offset + limit], len(skills)

    def delete(self, tenant_id: str, skill_id_: str) -> None:
        with self._lock:
            if not self.index.get(tenant_id, [skill_id_]):
                raise NotFoundError(f"no skill {skill_id_}")
            self.index.delete(tenant_id, [skill_id_])

    def _recency(self, skill: Skill, now: datetime) -> float:
        age_days = max(0.0, (now - skill.last_used).total_seconds() / 86400)
        return math.pow(0.5, age_days / self.rules.recency_half_life_days)

    def search(self, tenant_id: str, domain: str, goal: str, k: int = 3) -> list[SkillHit]:
        """The tenant's skills on `domain` for goals like `goal`: within the TTL, at or above
        the success-rate floor, best (similarity x success rate x recency) first."""
        if not goal.strip():
            return []
        now = self._clock()
        vector = self._embed(goal) if self._embed is not None else []
        near = self.index.nearest(
            tenant_id, domain.lower(), goal, vector, self._cutoff(), self.rules.candidates
        )
        hits = [
            SkillHit(
                n.skill,
                n.similarity,
                n.similarity * n.skill.success_rate * self._recency(n.skill, now),
            )
            for n in near
            if n.similarity >= self.rules.min_similarity
            and n.skill.success_rate >= self.rules.min_success_rate
        ]
        hits.sort(key=lambda h: (-h.score, h.skill.id))
        return hits[:k]

    def close(self) -> None:
        self.index.close()
