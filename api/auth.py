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
capability is 403 `forbidden`; a key over its request rate is 429 `rate_limited`, and so is a
key sent from an address that sent too many bad ones.

The key is checked once per request, by the request guard (`api.request_guard`) before any body
byte is read, for every route `KeyedRoutes` finds in need of one; the guard leaves the caller on
the request's state, where the dependencies find it (they check the key themselves when the
guard did not).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, RouteContext, iter_route_contexts
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.security.utils import get_authorization_scheme_param
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.routing import Mount
from starlette.types import Scope

from api.route_table import RouteTable
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
    "KeyedRoutes",
    "ModelManagerDep",
    "PrincipalDep",
    "ReaderTenantDep",
    "RequireCapability",
    "assert_routes_guarded",
    "authenticate_scope",
    "get_reader_tenant",
    "get_tenant",
    "principal_for",
    "remember_principal",
    "remembered_principal",
    "requires",
]

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_BEARER = "bearer"
_PRINCIPAL_STATE = "graphrag_principal"  # the request-state key of the authenticated caller
_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="ApiKey",
    description="An API key: `Authorization: Bearer grk_<prefix>_<secret>`.",
)


def _state(request: Request) -> AppState:
    state: AppState = request.app.state.graphrag
    return state


def principal_for(
    state: AppState, key: str | None, *, authorization_sent: bool, address: str | None
) -> Principal:
    """The caller a bearer key stands for, or the default tenant when auth is off and no
    `Authorization` header was sent; every face of the API authenticates through here.

    Each call counts one request against the key's rate limit (429 beyond it). A request that
    sends an `Authorization` header from an `address` that sent too many bad keys is 429 before
    its key is even hashed, and each refused one counts against that address.
    """
    if authorization_sent:
        state.failed_auth.check(address)
    try:
        principal = _identify(state, key, authorization_sent=authorization_sent)
    except UnauthorizedError:
        if authorization_sent:
            state.failed_auth.failed(address)
        raise
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


def authenticate_scope(state: AppState, scope: Scope) -> Principal:
    """The caller of an HTTP request, from its `Authorization: Bearer` header and its client
    address (see `principal_for`); blocking (database and Redis calls)."""
    header = Headers(scope=scope).get("authorization")
    scheme, key = get_authorization_scheme_param(header)
    bearer = key if header and scheme.lower() == _BEARER and key else None
    client = scope.get("client")
    address = str(client[0]) if client else None
    return principal_for(state, bearer, authorization_sent=header is not None, address=address)


def remember_principal(scope: Scope, principal: Principal) -> None:
    """Leave the authenticated caller on the request's state, for the dependencies."""
    scope.setdefault("state", {})[_PRINCIPAL_STATE] = principal


def remembered_principal(scope: Scope) -> Principal | None:
    """The caller the request guard authenticated, if it did."""
    found = scope.get("state", {}).get(_PRINCIPAL_STATE)
    return found if isinstance(found, Principal) else None


async def authenticate(
    request: Request,
    _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The caller named by the request's bearer key (or the default tenant when auth is off):
    the one the request guard found, else checked here (`_credentials` documents the scheme)."""
    found = remembered_principal(request.scope)
    if found is not None:
        return found
    return await run_in_threadpool(authenticate_scope, _state(request), request.scope)


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
    """The access rules a route declares, through its dependencies and theirs."""
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


def _needs_key(app: FastAPI, context: RouteContext) -> bool:
    """Whether a route needs a key: fail closed, every route does unless it is a `PUBLIC` API
    route, one of FastAPI's documentation pages or a mount of static files."""
    route = context.original_route
    if isinstance(route, APIRoute):
        rules = list(_guards(context.dependant))
        return not rules or any(rule is not public_access for rule in rules)
    if isinstance(route, Mount):
        return not isinstance(route.app, StaticFiles)
    docs = {app.openapi_url, app.docs_url, app.redoc_url, app.swagger_ui_oauth2_redirect_url}
    return context.path not in docs


class KeyedRoutes:
    """Which requests need a key, read once from the app's routes in the router's order: the
    first route that matches both path and method decides, as it does for the router; a request
    no route takes needs none (the router answers it 404 or 405 without reading its body)."""

    def __init__(self, app: FastAPI) -> None:
        self._table = RouteTable(app, lambda context: _needs_key(app, context))

    def needs_key(self, scope: Scope) -> bool:
        """Whether the HTTP request of `scope` goes to a route that needs a key."""
        return self._table.lookup(scope, default=False)
