"""`SkillIndex` on an in-process Qdrant Edge shard (its own folder beside the chunks')."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from retrieval.edge import SEARCH_THREADS, open_shard
from retrieval.skills.types import Nearest, Skill

GOAL = "goal"
# Payload indexes: what a skills search filters on, in either store.
KEYWORD_FIELDS = ("tenant_id", "domain")
FLOAT_FIELDS = ("last_used_ts",)
_PAGE = 1024


def _match(key: str, value: str) -> qe.FieldCondition:
    return qe.FieldCondition(key, match=qe.MatchValue(value))


class EdgeSkillIndex:
    def __init__(self, path: Path, dim: int) -> None:
        self._path = path
        self._lock = threading.RLock()
        config = qe.EdgeConfig(
            vectors={GOAL: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)},
            max_search_threads=SEARCH_THREADS,
        )
        self._shard = open_shard(path, config, KEYWORD_FIELDS, FLOAT_FIELDS, "skills store")

    def put(self, skill: Skill, vector: Sequence[float]) -> None:
        point = qe.Point(skill.id, {GOAL: [float(x) for x in vector]}, skill.payload())
        with self._lock:
            self._shard.update(qe.UpdateOperation.upsert_points([point]))

    def update(self, skill: Skill) -> None:
        with self._lock:
            self._shard.update(qe.UpdateOperation.overwrite_payload([skill.id], skill.payload()))

    def get(self, tenant_id: str, ids: Sequence[str]) -> list[Skill]:
        if not ids:
            return []
        with self._lock:
            records = self._shard.retrieve(list(ids), True, False)
        skills = [Skill.from_payload(str(r.id), r.payload or {}) for r in records]
        return [s for s in skills if s.tenant_id == tenant_id]

    def delete(self, tenant_id: str, ids: Sequence[str]) -> None:
        mine = [s.id for s in self.get(tenant_id, ids)]
        if mine:
            with self._lock:
                self._shard.update(qe.UpdateOperation.delete_points(list[Any](mine)))

    def nearest(
        self,
        tenant_id: str,
        domain: str,
        goal: str,
        vector: Sequence[float],
        used_after: float,
        limit: int,
    ) -> list[Nearest]:
        qfilter = qe.Filter(
            must=[
                _match("tenant_id", tenant_id),
                _match("domain", domain.lower()),
                qe.FieldCondition("last_used_ts", range=qe.RangeFloat(gte=used_after)),
            ]
        )
        request = qe.QueryRequest(
            limit=limit,
            query=qe.Query.Nearest([float(x) for x in vector], using=GOAL),
            filter=qfilter,
            with_payload=True,
        )
        with self._lock:
            points = self._shard.query(request)
        return [
            Nearest(Skill.from_payload(str(p.id), p.payload or {}), float(p.score)) for p in points
        ]

    def _scroll(self, qfilter: qe.Filter | None, with_payload: bool) -> list[Any]:
        records: list[Any] = []
        offset: Any = None
        with self._lock:
            while True:
                page, offset = self._shard.scroll(
                    qe.ScrollRequest(
                        offset=offset, limit=_PAGE, filter=qfilter, with_payload=with_payload
                    )
                )
                records.extend(page)
                if offset is None:
                    return records

    def scan(self, tenant_id: str) -> list[Skill]:
        records = self._scroll(qe.Filter(must=[_match("tenant_id", tenant_id)]), True)
        return [Skill.from_payload(str(r.id), r.payload or {}) for r in records]

    def count(self, tenant_id: str) -> int:
        qfilter = qe.Filter(must=[_match("tenant_id", tenant_id)])
        with self._lock:
            return int(self._shard.count(qe.CountRequest(filter=qfilter, exact=True)))

    def expire(self, used_before: float) -> int:
        qfilter = qe.Filter(
            must=[qe.FieldCondition("last_used_ts", range=qe.RangeFloat(lt=used_before))]
        )
        with self._lock:
            gone = int(self._shard.count(qe.CountRequest(filter=qfilter, exact=True)))
            if gone:
                self._shard.update(qe.UpdateOperation.delete_points_by_filter(qfilter))
        return gone

    def close(self) -> None:
        with self._lock:
            try:
                self._shard.flush()
            finally:
                self._shard.close()
