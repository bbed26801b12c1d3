"""Episodic skills: which action worked on a site when another failed, for an agent's next try."""

from retrieval.skills.edge import EdgeSkillIndex
from retrieval.skills.library import SkillLibrary
from retrieval.skills.qdrant import QdrantSkillIndex
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
