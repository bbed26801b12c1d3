"""`SkillIndex` on a Qdrant server through qdrant-client (its own collection beside the chunks'),
so every API instance of a server deployment shares one skills library; or qdrant-client's
in-process `:memory:` engine for tests."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from qdrant_client import models

from retrieval.qdrant import open_collection, scroll_all, server_calls
from retrieval.skills.edge import FLOAT_FIELDS, GOAL, KEYWORD_FIELDS
from retrieval.skills.types import Nearest, Skill


def _match(key: str, value: str) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _tenant(tenant_id: str) -> models.Filter:
    return models.Filter(must=[_match("tenant_id", tenant_id)])


class QdrantSkillIndex:
    def __init__(
        self,
        dim: int,
        url: str | None = None,
        collection: str = "lore_skills",
        api_key: str | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        """`url`: a Qdrant server; None: qdrant-client's in-process engine (nothing is kept)."""
        self._collection = collection
        self._lock = threading.RLock()  # the local engine is not thread-safe
        self._where = url or ":memory:"
        self._client = open_collection(
            url=url,
            location=None,
            api_key=api_key,
            timeout_s=timeout_s,
            collection=collection,
            vector=GOAL,
            dim=dim,
            keyword_fields=KEYWORD_FIELDS,
            float_fields=FLOAT_FIELDS,
            what="skills store",
        )

    def _calls(self) -> AbstractContextManager[None]:
        return server_calls(self._lock, self._where)

    def put(self, skill: Skill, vector: Sequence[float]) -> None:
        point = models.PointStruct(
            id=skill.id, vector={GOAL: [float(x) for x in vector]}, payload=skill.payload()
        )
        with self._calls():
            self._client.upsert(self._collection, [point])

    def update(self, skill: Skill) -> None:
        with self._calls():
            self._client.overwrite_payload(self._collection, skill.payload(), points=[skill.id])

    def get(self, tenant_id: str, ids: Sequence[str]) -> list[Skill]:
        if not ids:
            return []
        with self._calls():
            records = self._client.retrieve(self._collection, list(ids), with_payload=True)
        skills = [Skill.from_payload(str(r.id), r.payload or {}) for r in records]
        return [s for s in skills if s.tenant_id == tenant_id]

    def delete(self, tenant_id: str, ids: Sequence[str]) -> None:
        mine: list[Any] = [s.id for s in self.get(tenant_id, ids)]
        if mine:
            with self._calls():
                self._client.delete(self._collection, models.PointIdsList(points=mine))

    def nearest(
        self,
        tenant_id: str,
        domain: str,
        goal: str,
        vector: Sequence[float],
        used_after: float,
        limit: int,
    ) -> list[Nearest]:
        qfilter = models.Filter(
            must=[
                _match("tenant_id", tenant_id),
                _match("domain", domain.lower()),
                models.FieldCondition(key="last_used_ts", range=models.Range(gte=used_after)),
            ]
        )
        with self._calls():
            points = self._client.query_points(
                self._collection,
                query=[float(x) for x in vector],
                using=GOAL,
                query_filter=qfilter,
                limit=limit,
                with_payload=True,
            ).points
        return [
            Nearest(Skill.from_payload(str(p.id), p.payload or {}), float(p.score)) for p in points
        ]

    def scan(self, tenant_id: str) -> list[Skill]:
        with self._calls():
            records = scroll_all(self._client, self._collection, _tenant(tenant_id), True)
        return [Skill.from_payload(str(r.id), r.payload or {}) for r in records]

    def count(self, tenant_id: str) -> int:
        with self._calls():
            return self._client.count(
                self._collection, count_filter=_tenant(tenant_id), exact=True
            ).count

    def expire(self, used_before: float) -> int:
        qfilter = models.Filter(
            must=[models.FieldCondition(key="last_used_ts", range=models.Range(lt=used_before))]
        )
        with self._calls():
            gone = self._client.count(self._collection, count_filter=qfilter, exact=True).count
            if gone:
                self._client.delete(self._collection, models.FilterSelector(filter=qfilter))
        return gone

    def close(self) -> None:
        with self._calls():
            self._client.close()
