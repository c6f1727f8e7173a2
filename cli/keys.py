"""`graphrag keys`: create, list and revoke API keys from the command line.

`create` writes the plain key alone on stdout (it is shown only this once), so scripts can
capture it; everything else goes to stderr or a table.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table
from sqlalchemy.orm import Session

from graphrag.auth import keys
from graphrag.auth.models import ApiKeyCreate, ApiKeyPublic, Capability
from graphrag.db.engine import make_engine, make_session_factory, session_scope
from graphrag.errors import NotFoundError
from graphrag.settings import Settings, get_settings
from graphrag.tenancy import ensure_tenant, find_tenant

__all__ = ["keys_app"]

keys_app = typer.Typer(no_args_is_help=True, help="Create, list and revoke API keys.")
_err = Console(stderr=True)


@contextmanager
def _session(settings: Settings) -> Iterator[Session]:
    engine = make_engine(settings)
    try:
        with session_scope(make_session_factory(engine)) as session:
            yield session
    finally:
        engine.dispose()


@keys_app.command("create")
def create(
    name: str = typer.Option(..., "--name", help="a label for people"),
    caps: list[Capability] = typer.Option(..., "--cap", help="a capability (repeatable)"),
    tenant: str | None = typer.Option(None, help="tenant name (default: api.default_tenant)"),
    owner: str | None = typer.Option(
        None, help="the memory owner the key acts for (default: memory.default_owner)"
    ),
) -> None:
    """Create a key and print it once."""
    try:
        request = ApiKeyCreate(name=name, capabilities=caps, owner=owner)
    except ValidationError as exc:
        raise typer.BadParameter(str(exc)) from None
    settings = get_settings()
    tenant_name = tenant or settings.api.default_tenant
    with _session(settings) as session:
        created = keys.create_key(
            session,
            settings.auth,
            tenant_id=ensure_tenant(session, tenant_name),
            name=request.name,
            capabilities=request.capabilities,
            owner=request.owner,
        )
    _err.print(
        f"[green]key {created.id}[/] ({', '.join(created.capabilities)}) for tenant "
        f"{tenant_name}; it is shown only now:"
    )
    typer.echo(created.key)


@keys_app.command("list")
def list_(
    tenant: str | None = typer.Option(None, help="only this tenant's keys (default: all)"),
) -> None:
    """List keys (never their secret)."""
    settings = get_settings()
    rows: list[ApiKeyPublic] = []
    with _session(settings) as session:
        tenant_id = find_tenant(session, tenant) if tenant else None
        if tenant is None or tenant_id is not None:
            rows = keys.list_keys(session, tenant_id)
    table = Table("id", "tenant", "name", "prefix", "capabilities", "created", "revoked")
    for row in rows:
        table.add_row(
            str(row.id),
            str(row.tenant_id),
            row.name,
            row.prefix,
            ",".join(row.capabilities),
            row.created_at.isoformat(timespec="seconds"),
            row.revoked_at.isoformat(timespec="seconds") if row.revoked_at else "",
        )
    Console().print(table)


@keys_app.command("revoke")
def revoke(key_id: uuid.UUID = typer.Argument(..., help="the key's id")) -> None:
    """Revoke a key at once (any tenant's)."""
    try:
        with _session(get_settings()) as session:
            revoked = keys.revoke_key(session, None, key_id)
    except NotFoundError as exc:
        _err.print(f"[red]{exc.message}[/]: {key_id}")
        raise typer.Exit(code=1) from exc
    _err.print(f"[green]revoked[/] {revoked.id} ({revoked.name})")
