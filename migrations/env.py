"""Alembic environment, configured programmatically by ``router.ledger.db``.

``router.ledger.db`` passes an open connection in ``config.attributes["connection"]``
so that the URL (which may carry ``%``-escapes or a ``search_path`` option)
never goes through Alembic's ini interpolation. Plain ``alembic -c`` use with
``sqlalchemy.url`` set still works.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection
from sqlalchemy.pool import NullPool

from router.ledger.models import Base

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    context.configure(
        url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata, literal_binds=True
    )
    with context.begin_transaction():
        context.run_migrations()
else:
    given = config.attributes.get("connection")
    if given is not None:
        _run(given)
    else:
        engine = create_engine(config.get_main_option("sqlalchemy.url") or "", poolclass=NullPool)
        with engine.begin() as conn:
            _run(conn)
