"""API keys, tenants and rate limits.

A key is `lore_` and 43 random URL-safe characters, shown once when it is made; the catalog
keeps its SHA-256 (a random 256-bit key needs no slow hash) and its first characters, to tell
keys apart. Every route but `/healthz` and the API docs needs `Authorization: Bearer <key>`:
401 when it is missing, unknown or revoked; the key's tenant scopes everything the request
reads and writes. Each key has a token bucket (its own limit, else the default per minute;
in Redis when several API processes share it, see `api.ratelimit`): 429 with `Retry-After`
when it is empty. Lookups are cached for a few seconds, so a key revoked
from another process stops working within that time (at once in this one)."""

from __future__ import annotations

import hashlib
import math
import secrets
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from api.errors import ApiError
from api.ratelimit import LocalRateLimiter, RateLimiter
from crawl import host_matches
from retrieval import ApiKey, Catalog, NotFoundError, Tenant

KEY_PREFIX = "lore_"
CACHE_SECONDS = 5.0


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def domain_allowed(tenant: Tenant, host: str) -> bool:
    return host_matches(host, tenant.allowed_domains)


def check_url(tenant: Tenant, url: str, field: str = "") -> None:
    """403 unless the URL's host is one of the tenant's allowedDomains (`field` names the
    request field the URL came from, for the message)."""
    host = urlsplit(url).hostname or ""
    if host and not domain_allowed(tenant, host):
        where = f"{field}: " if field else ""
        raise ApiError(
            403,
            "domain_not_allowed",
            f"{where}{host} is not in this tenant's allowedDomains "
            f"({', '.join(tenant.allowed_domains)})",
        )


@dataclass(frozen=True)
class Principal:
    key: ApiKey
    tenant: Tenant


class Authenticator:
    def __init__(
        self, catalog: Catalog, default_per_minute: int, limiter: RateLimiter | None = None
    ) -> None:
        self._catalog = catalog
        self._default = default_per_minute
        self._limiter = limiter or LocalRateLimiter()
        self._cache: dict[str, tuple[float, Principal | None]] = {}
        self._lock = threading.Lock()

    def create_key(
        self,
        tenant_id: str,
        name: str = "",
        allowed_domains: list[str] | None = None,
        rate_limit: int | None = None,
        key: str | None = None,
        admin: bool = False,
    ) -> tuple[str, ApiKey]:
        """A new key for `tenant_id` (made, with `allowed_domains` or every domain, if new);
        returns the key itself, which is not stored, and its record. An `admin` key may also
        manage keys and tenants (/admin)."""
        try:
            self._catalog.get_tenant(tenant_id)
            if allowed_domains is not None:
                self._catalog.put_tenant(tenant_id, allowed_domains)
        except NotFoundError:
            self._catalog.put_tenant(tenant_id, allowed_domains or ["*"])
        key = key or new_key()
        if not key.startswith(KEY_PREFIX) or len(key) < len(KEY_PREFIX) + 20:
            raise ValueError(f"an API key starts with {KEY_PREFIX!r} and has 20 characters more")
        record = self._catalog.add_api_key(
            hash_key(key), key[: len(KEY_PREFIX) + 6], tenant_id, name, rate_limit, admin
        )
        return key, record

    def revoke(self, key_id: str) -> ApiKey:
        record = self._catalog.revoke_api_key(key_id)
        with self._lock:
            self._cache.clear()
        return record

    def authenticate(self, authorization: str | None) -> Principal:
        scheme, _, key = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise ApiError(
                401,
                "unauthorized",
                "this route needs 'Authorization: Bearer <api key>' (create one with "
                "`lore keys create`)",
                headers={"WWW-Authenticate": "Bearer"},
            )
        principal = self._principal(hash_key(key.strip()))
        if principal is None:
            raise ApiError(
                401,
                "unauthorized",
                "unknown or revoked API key",
                headers={"WWW-Authenticate": "Bearer"},
            )
        wait = self._take(principal.key)
        if wait:
            limit = principal.key.rate_limit or self._default
            raise ApiError(
                429,
                "rate_limited",
                f"this key is limited to {limit} requests per minute; retry in {wait:.1f} s",
                headers={"Retry-After": str(max(1, math.ceil(wait)))},
            )
        return principal

    def _principal(self, key_hash: str) -> Principal | None:
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(key_hash)
            if cached is not None and cached[0] > now:
                return cached[1]
        record = self._catalog.api_key_by_hash(key_hash)
        principal = None
        if record is not None and record.revoked_at is None:
            principal = Principal(record, self._catalog.get_tenant(record.tenant_id))
        with self._lock:
            self._cache[key_hash] = (now + CACHE_SECONDS, principal)
        return principal

    def _take(self, key: ApiKey) -> float:
        return self._limiter.take(key.id, key.rate_limit or self._default)
