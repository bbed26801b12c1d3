"""Episodic skills: what an agent learned works on a site, and the seam their backends fill."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

_NAMESPACE = uuid.UUID("6b1f5a1e-3c52-4c39-9a4e-5d1a8f2c7e10")


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w#()./:-]+", " ", text.lower()).split())


@dataclass(frozen=True)
class FailedState:
    action: str  # e.g. click(68)
    element_description: str = ""  # e.g. Patient menu
    error_type: str = ""  # e.g. wrong_element, not_found, timeout


@dataclass(frozen=True)
class SuccessfulAction:
    action: str
    element_description: str = ""
    strategy: str = ""  # how the agent found it, e.g. "menu > New/Search"


@dataclass(frozen=True)
class Skill:
    id: str
    tenant_id: str
    domain: str
    goal: str
    failed_state: FailedState
    successful_action: SuccessfulAction
    success_count: int
    failure_count: int
    created_at: datetime
    last_used: datetime

    @property
    def success_rate(self) -> float:
        total = self.success_count + self.failure_count
        return self.success_count / total if total else 0.0

    def hint(self) -> str:
        """A sentence ready to put in an agent's prompt."""
        failed, worked = self.failed_state, self.successful_action
        tried = f"'{failed.action}'" + (
            f" ({failed.element_description})" if failed.element_description else ""
        )
        done = f"'{worked.action}'" + (
            f" ({worked.element_description})" if worked.element_description else ""
        )
        total = self.success_count + self.failure_count
        return (
            f"Last time {tried} failed for '{self.goal}'; {done} worked "
            f"({self.success_count} of {total} times)."
        )

    def payload(self) -> dict[str, Any]:
        return {
            "tenant_id": self.tenant_id,
            "domain": self.domain,
            "goal": self.goal,
            "failed_state": self.failed_state.__dict__,
            "successful_action": self.successful_action.__dict__,
            "success_count": self.success_count,
            "failure_count": self.failure_count,
            "created_at": self.created_at.isoformat(),
            "last_used": self.last_used.isoformat(),
            "last_used_ts": self.last_used.timestamp(),
        }

    @classmethod
    def from_payload(cls, skill_id: str, payload: dict[str, Any]) -> Skill:
        return cls(
            id=skill_id,
            tenant_id=payload["tenant_id"],
            domain=payload["domain"],
            goal=payload["goal"],
            failed_state=FailedState(**payload["failed_state"]),
            successful_action=SuccessfulAction(**payload["successful_action"]),
            success_count=int(payload["success_count"]),
            failure_count=int(payload["failure_count"]),
            created_at=datetime.fromisoformat(payload["created_at"]),
            last_used=datetime.fromisoformat(payload["last_used"]),
        )


def skill_id(tenant_id: str, domain: str, goal: str, failed: FailedState) -> str:
    """The same goal and failure on a domain is one skill, however often it is recorded."""
    key = "\x1f".join(
        (
            tenant_id,
            domain.lower(),
            _norm(goal),
            _norm(failed.action),
            _norm(failed.element_description),
        )
    )
    return str(uuid.uuid5(_NAMESPACE, key))


@dataclass(frozen=True)
class SkillHit:
    skill: Skill
    similarity: float  # of the goals, cosine
    score: float  # similarity x success rate x recency


@dataclass(frozen=True)
class SkillRules:
    ttl_days: float = 90.0  # since last use
    max_per_tenant: int = 10_000
    min_success_rate: float = 0.5
    recency_half_life_days: float = 30.0
    min_similarity: float = 0.35
    candidates: int = 50  # nearest goals considered before the rules and the ranking


@dataclass
class Nearest:
    skill: Skill
    similarity: float
    extra: dict[str, Any] = field(default_factory=dict)


class SkillIndex(Protocol):
    """Where skills and their goal vectors live (one per backend)."""

    def put(self, skill: Skill, vector: Sequence[float]) -> None:
        """Insert or replace a skill by id."""

    def update(self, skill: Skill) -> None:
        """Replace a stored skill's fields, keeping its vector."""

    def get(self, tenant_id: str, ids: Sequence[str]) -> list[Skill]:
        """The tenant's skills with these ids (others' are never returned)."""

    def delete(self, tenant_id: str, ids: Sequence[str]) -> None: ...

    def nearest(
        self,
        tenant_id: str,
        domain: str,
        goal: str,
        vector: Sequence[float],
        used_after: float,
        limit: int,
    ) -> list[Nearest]:
        """The tenant's skills on `domain` last used after `used_after` (epoch seconds), most
        similar goal first (by `vector`, or by `goal` for a backend that embeds itself)."""

    def scan(self, tenant_id: str) -> list[Skill]:
        """All of a tenant's skills."""

    def count(self, tenant_id: str) -> int: ...

    def expire(self, used_before: float) -> int:
        """Delete every skill last used before `used_before`; how many went."""

    def close(self) -> None: ...
