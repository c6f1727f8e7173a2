"""Who is calling and what they may do: API-key authentication and capability checks.

Every route declares its access in its signature or decorator, and `create_app` refuses to
start if one does not:
- `TenantDep` (in `api.deps`): the caller's tenant, needing `read` for GET/HEAD and `write` for
  any other method;
- `ReaderTenantDep`: the caller's tenant, needing `read` whatever the method (searches by POST);
- `requires(capability)` / `AdminDep` / `ModelManagerDep`: a capability, no tenant data;
- `CallerDep`: any valid key, whatever its capabilities (the caller reading its own identity);
- `PUBLIC`: open to anyone (liveness and the web console's static page only).
A missing, malformed, unknown or revoked key is 401 `unauthorized`; a key without the needed
capability is 403 `forbidden`; a key over its request rate is 429 `rate_limited`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.state import AppState
from graphrag.auth.keys import verify_key
from graphrag.auth.models import Capability, Principal
from graphrag.db.engine import session_scope
from graphrag.errors import UnauthorizedError
from graphrag.tenancy import ensure_tenant

__all__ = [
    "PUBLIC",
    "AdminDep",
    "CallerDep",
    "ModelManagerDep",
    "PrincipalDep",
    "ReaderTenantDep",
    "RequireCapability",
    "assert_routes_guarded",
    "get_reader_tenant",
    "get_tenant",
    "principal_for",
    "requires",
]

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="ApiKey",
    description="An API key: `Authorization: Bearer grk_<prefix>_<secret>`.",
)


def _state(request: Request) -> AppState:
    state: AppState = request.app.state.graphrag
    return state


def principal_for(state: AppState, key: str | None, *, authorization_sent: bool) -> Principal:
    """The caller a bearer key stands for, or the default tenant when auth is off and no
    `Authorization` header was sent; every face of the API authenticates through here, and
    each call counts one request against the key's rate limit (429 beyond it)."""
    principal = _identify(state, key, authorization_sent=authorization_sent)
    state.rate_limiter.hit(principal)
    return principal


def _identify(state: AppState, key: str | None, *, authorization_sent: bool) -> Principal:
    auth = state.settings.auth
    if key is None:
        if auth.required or authorization_sent:
            raise UnauthorizedError("an API key is required: send `Authorization: Bearer <key>`")
        with session_scope(state.sessions) as session:
            tenant = ensure_tenant(session, state.settings.api.default_tenant)
        return Principal(tenant_id=tenant, capabilities=frozenset(Capability))
    with session_scope(state.sessions) as session:
        return verify_key(session, auth, key)


def authenticate(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The caller named by the request's bearer key (or the default tenant when auth is off)."""
    return principal_for(
        _state(request),
        credentials.credentials if credentials is not None else None,
        authorization_sent="authorization" in request.headers,
    )


PrincipalDep = Annotated[Principal, Depends(authenticate)]


def _check(principal: Principal, capability: Capability) -> Principal:
    principal.require(capability)
    return principal


class RequireCapability:
    """A dependency passing the caller through if it holds `capability`, else 403."""

    def __init__(self, capability: Capability) -> None:
        self.capability = capability

    def __call__(self, principal: PrincipalDep) -> Principal:
        return _check(principal, self.capability)


def requires(capability: Capability) -> Any:
    """`dependencies=[requires(Capability.X)]` for a route that needs X but no tenant value."""
    return Depends(RequireCapability(capability))


AdminDep = Annotated[Principal, Depends(RequireCapability(Capability.ADMIN))]
ModelManagerDep = Annotated[Principal, Depends(RequireCapability(Capability.MANAGE_MODELS))]


def get_tenant(request: Request, principal: PrincipalDep) -> uuid.UUID:
    """The caller's tenant; reading methods need `read`, the others `write`."""
    needed = Capability.READ if request.method in _SAFE_METHODS else Capability.WRITE
    return _check(principal, needed).tenant_id


def get_reader_tenant(principal: PrincipalDep) -> uuid.UUID:
    """The caller's tenant, for read-only routes called with POST (searches)."""
    return _check(principal, Capability.READ).tenant_id


ReaderTenantDep = Annotated[uuid.UUID, Depends(get_reader_tenant)]


def authenticated_caller(principal: PrincipalDep) -> Principal:
    """The caller of a route that needs a valid key but no capability."""
    return principal


CallerDep = Annotated[Principal, Depends(authenticated_caller)]


def public_access() -> None:
    """Marks a route as open to callers without a key."""


PUBLIC = Depends(public_access)


def _guards(dependant: Dependant) -> Iterator[Any]:
    for sub in dependant.dependencies:
        call = sub.call
        if isinstance(call, RequireCapability) or call in (
            get_tenant,
            get_reader_tenant,
            authenticated_caller,
            public_access,
        ):
            yield call
        yield from _guards(sub)


def assert_routes_guarded(app: FastAPI) -> None:
    """Refuse an app in which a route declares no access rule (fail closed, at start-up)."""
    unguarded = [
        f"{sorted(context.methods or ())} {context.path}"
        for context in iter_route_contexts(app.routes)
        if isinstance(context.original_route, APIRoute)
        and next(_guards(context.dependant), None) is None
    ]
    if unguarded:
        raise RuntimeError(f"routes without an access rule (see api/auth.py): {unguarded}")
