"""Bring a database to the newest schema (and back, for tests) with Alembic."""

from __future__ import annotations

from alembic import command
from alembic.config import Config

from graphrag.db.engine import database_url, make_engine, wait_for_db
from graphrag.settings import Settings, project_root

__all__ = ["alembic_config", "downgrade_to_base", "upgrade_to_head"]


def alembic_config(settings: Settings) -> Config:
    """Alembic's config for this checkout, pointed at the settings' database."""
    cfg = Config(str(project_root() / "alembic.ini"))
    cfg.set_main_option("sqlalchemy.url", database_url(settings).replace("%", "%%"))
    return cfg


def upgrade_to_head(settings: Settings) -> None:
    """Wait until the database answers, then apply every migration."""
    engine = make_engine(settings)
    try:
        wait_for_db(engine, settings)
    finally:
        engine.dispose()
    command.upgrade(alembic_config(settings), "head")


def downgrade_to_base(settings: Settings) -> None:
    command.downgrade(alembic_config(settings), "base")
