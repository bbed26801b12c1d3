"""Episodic skills: which action worked on a site when another failed, for an agent's next try."""

from typing import TYPE_CHECKING, Any

from retrieval.skills.edge import EdgeSkillIndex
from retrieval.skills.library import SkillLibrary
from retrieval.skills.types import (
    FailedState,
    Skill,
    SkillHit,
    SkillIndex,
    SkillRules,
    SuccessfulAction,
    skill_id,
)
from retrieval.skills.zep import ZepSkillIndex

if TYPE_CHECKING:
    from retrieval.skills.qdrant import QdrantSkillIndex

__all__ = [
    "EdgeSkillIndex",
    "FailedState",
    "QdrantSkillIndex",
    "Skill",
    "SkillHit",
    "SkillIndex",
    "SkillLibrary",
    "SkillRules",
    "SuccessfulAction",
    "ZepSkillIndex",
    "skill_id",
]


def __getattr__(name: str) -> Any:
    """QdrantSkillIndex on first use: qdrant-client costs 85 MB resident per process and the
    embedded default never needs it."""
    if name == "QdrantSkillIndex":
        from retrieval.skills.qdrant import QdrantSkillIndex  # noqa: PLC0415

        return QdrantSkillIndex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
