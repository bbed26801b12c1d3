"""/admin: keys and tenants, for an admin key (`lore keys create --admin`; the first key
`lore serve` prints is one). The CLI's `lore keys` does the same on the catalog directly."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, status

from api.auth import Authenticator, Principal
from api.deps import Authenticated, LoreDep
from api.errors import ApiError
from api.schemas import KeyList, KeyRequest, KeyView, NewKey, TenantList, TenantUpdate, TenantView


def require_admin(request: Request) -> Principal | None:
    """403 unless the request's key is an admin key (nothing to check with auth off)."""
    principal: Principal | None = getattr(request.state, "principal", None)
    if request.app.state.lore.settings.auth.required and (
        principal is None or not principal.key.admin
    ):
        raise ApiError(
            403, "admin_only", "this route needs an admin key (lore keys create --admin)"
        )
    return principal


router = APIRouter(
    prefix="/admin", tags=["admin"], dependencies=[Authenticated, Depends(require_admin)]
)


def _auth(request: Request) -> Authenticator:
    auth: Authenticator = request.app.state.auth
    return auth


@router.get("/tenants", response_model=TenantList)
def tenants(lore: LoreDep) -> TenantList:
    active: dict[str, int] = {}
    for key in lore.catalog.api_keys():
        if key.revoked_at is None:
            active[key.tenant_id] = active.get(key.tenant_id, 0) + 1
    return TenantList(
        tenants=[
            TenantView(
                id=t.id, allowed_domains=list(t.allowed_domains), active_keys=active.get(t.id, 0)
            )
            for t in lore.catalog.tenants()
        ]
    )


@router.put("/tenants/{tenant_id}", response_model=TenantView)
def update_tenant(tenant_id: str, body: TenantUpdate, lore: LoreDep) -> TenantView:
    """Set the domains a tenant's keys may use (running servers see it within seconds)."""
    lore.catalog.get_tenant(tenant_id)  # 404 for an unknown tenant
    tenant = lore.catalog.put_tenant(tenant_id, body.allowed_domains)
    return TenantView(id=tenant.id, allowed_domains=list(tenant.allowed_domains))


@router.get("/keys", response_model=KeyList)
def keys(
    lore: LoreDep,
    tenant: Annotated[str | None, Query(min_length=1, max_length=128)] = None,
) -> KeyList:
    """Every key (or a tenant's), never the keys themselves."""
    return KeyList(keys=[KeyView.of(k) for k in lore.catalog.api_keys(tenant)])


@router.post("/keys", status_code=status.HTTP_201_CREATED, response_model=NewKey)
def create_key(body: KeyRequest, request: Request) -> NewKey:
    """A key for a tenant (made if new); the key is in this answer only."""
    try:
        key, record = _auth(request).create_key(
            body.tenant, body.name, body.allowed_domains, body.rate_limit, admin=body.admin
        )
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc
    return NewKey(key=key, record=KeyView.of(record))


@router.delete("/keys/{key_id}", status_code=status.HTTP_204_NO_CONTENT)
def revoke_key(
    key_id: str,
    request: Request,
    lore: LoreDep,
    principal: Annotated[Principal | None, Depends(require_admin)],
) -> None:
    """Revoke a key: servers refuse it within seconds. Not the key making the request."""
    if principal is not None and principal.key.id == key_id:
        raise ApiError(409, "conflict", "revoke this key with another admin key")
    admins = [k.id for k in lore.catalog.api_keys() if k.admin and k.revoked_at is None]
    if admins == [key_id]:
        raise ApiError(409, "conflict", "this is the last admin key: make another one first")
    _auth(request).revoke(key_id)  # NotFoundError: 404
