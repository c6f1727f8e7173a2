"""`graphrag interactions export`: the interaction log (ChatML JSON Lines) of a base or an
owner, from the database, on stdout or into a file."""

from __future__ import annotations

import uuid
from pathlib import Path

import typer
from rich.console import Console

from graphrag.db.engine import make_engine, make_session_factory, session_scope
from graphrag.errors import NotFoundError
from graphrag.settings import get_settings
from graphrag.tenancy import find_tenant

__all__ = ["interactions_app"]

interactions_app = typer.Typer(
    no_args_is_help=True, help="The interaction log: finished chat turns as ChatML records."
)
_err = Console(stderr=True)


@interactions_app.command("export")
def export(
    kb: uuid.UUID | None = typer.Option(None, "--kb", help="the knowledge base's id"),
    owner: str | None = typer.Option(None, help="the memory owner"),
    tenant: str | None = typer.Option(None, help="tenant name (default: api.default_tenant)"),
    out: Path | None = typer.Option(None, help="write to this file (default: stdout)"),
) -> None:
    """Write the logged turns of a base and/or an owner as JSON Lines, oldest first."""
    # Imported here: the chat package pulls in prometheus-client, which `graphrag worker` must
    # first point at its multiprocess directory (workers/metrics.py).
    from graphrag.chat.interaction_log import export_lines

    if kb is None and owner is None:
        raise typer.BadParameter("give --kb or --owner (or both)")
    settings = get_settings()
    engine = make_engine(settings)
    try:
        with session_scope(make_session_factory(engine)) as session:
            tenant_id = find_tenant(session, tenant or settings.api.default_tenant)
            if tenant_id is None:
                raise NotFoundError("no such tenant")
            limit = settings.chat.interaction_export_max
            lines = list(export_lines(session, tenant_id, kb_id=kb, owner=owner, limit=limit))
    except NotFoundError as exc:
        _err.print(exc.message, style="red", markup=False)
        raise typer.Exit(code=1) from None
    finally:
        engine.dispose()
    if out is None:
        typer.echo("".join(lines), nl=False)
    else:
        out.write_text("".join(lines), encoding="utf-8")
        _err.print(f"{len(lines)} records written to {out}", markup=False)
