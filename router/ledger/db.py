"""Engines and schema migrations.

SQLite (the embedded default) is upgraded automatically at start-up: it is
private to one proxy. PostgreSQL is shared by every replica, so a replica
never migrates it behind the operator's back; it refuses to start and names
the command instead (``offload db upgrade --config PATH``).
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.pool import NullPool

from router.dist import migrations_dir
from router.ledger.journal import journal_paths

if TYPE_CHECKING:
    from alembic.config import Config as AlembicConfig

# Alembic is imported where it is used: `offload report` and the proxy's hot
# imports do not need it, and its import logs a line per plugin at INFO.
logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)

# The Alembic scripts: the checkout's top-level migrations/, which a wheel carries as
# router/migrations (router/dist.py). Found from the package, never from the working directory.
MIGRATIONS_DIR = migrations_dir()


class SchemaOutOfDate(RuntimeError):
    """The database is not at the schema revision this code expects."""


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def sqlite_file_missing(url: str) -> bool:
    """A SQLite database whose file does not exist yet: readers answer "nothing recorded"
    rather than create an empty file by connecting."""
    database = make_url(url).database if is_sqlite(url) else None
    return bool(database) and not Path(str(database)).exists()


PRIVATE_MODE = 0o600  # what the proxy's own files hold: prompts (store_text), keys' names, spend


def create_private_sqlite(url: str) -> None:
    """Create a SQLite database file 0600 before SQLite does (it would take the umask,
    0644 under the usual 022). SQLite gives its ``-wal`` and ``-shm`` files the mode of
    the database file, so they are private too, whatever the umask."""
    database = make_url(url).database if is_sqlite(url) else None
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    try:
        fd = os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_MODE)
    except OSError:
        return  # there already, or its directory is missing: SQLite says what it says
    os.fchmod(fd, PRIVATE_MODE)  # O_CREAT's mode passes through the umask
    os.close(fd)


def private_file_paths(url: str, spool_path: str) -> list[Path]:
    """The proxy's own files: the SQLite database with its -wal and -shm, the spool and
    the journal's two files."""

    paths: list[Path] = []
    database = make_url(url).database if is_sqlite(url) else None
    if database and database != ":memory:":
        paths += [Path(database), Path(f"{database}-wal"), Path(f"{database}-shm")]
    spool = Path(spool_path)
    paths += [spool, *journal_paths(spool)]
    return paths


def too_open(paths: list[Path]) -> list[str]:
    """Each existing file among ``paths`` that others than its owner may read or write,
    as ``path (0644)``: start-up warns about them, and never changes a mode by itself."""
    found = []
    for path in paths:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except OSError:
            continue
        if mode & 0o077:
            found.append(f"{path} ({mode:04o})")
    return found


def make_engine(
    url: str, *, pooled: bool = True, write_timeouts: tuple[float, float] | None = None
) -> Engine:
    """An engine with sane connect timeouts; SQLite in WAL mode.

    The writer uses it from worker threads, hence ``check_same_thread=False``.
    ``write_timeouts`` (the writer's: lock wait, statement, in seconds) bound every
    statement on PostgreSQL, so that a locked table makes the writer spool within
    seconds rather than hold its batch, and a shutdown, hostage. (SQLite's busy timeout
    bounds its lock wait already.)
    """
    kwargs: dict[str, Any] = {}
    if is_sqlite(url):
        # busy timeout: wait for a concurrent reader/writer (the report) briefly.
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 5}
    elif url.startswith("postgresql"):
        # An unreachable server must fail fast so rows go to the spool; TCP
        # keepalives notice a server that vanished mid-insert (a partition
        # drops packets rather than refusing them) within about 11 s.
        kwargs["connect_args"] = {
            "connect_timeout": 3,
            "keepalives": 1,
            "keepalives_idle": 5,
            "keepalives_interval": 2,
            "keepalives_count": 3,
        }
    if not pooled:
        kwargs["poolclass"] = NullPool
    engine = create_engine(url, **kwargs)
    if is_sqlite(url):

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            # WAL lets the report read while the writer writes.
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            # Temporary tables and statement journals in memory: a temp file would need
            # a new descriptor, which a proxy out of them does not have.
            cur.execute("PRAGMA temp_store=MEMORY")
            cur.close()

    elif write_timeouts is not None:
        lock_ms, statement_ms = (int(t * 1000) for t in write_timeouts)

        @event.listens_for(engine, "connect")
        def _timeouts(dbapi_conn: Any, _record: Any) -> None:
            # SET, not a connect option: the URL's own `options` (a search_path) stay.
            cur = dbapi_conn.cursor()
            cur.execute(f"SET lock_timeout = {lock_ms}")
            cur.execute(f"SET statement_timeout = {statement_ms}")
            cur.close()
            dbapi_conn.commit()

    return engine


def describe_error(exc: BaseException) -> str:
    """An error as a log line may show it: its type and error code, never its message.

    SQLAlchemy's message quotes the statement's parameters and a driver's may quote
    a value: with ``database.store_text`` on, that is prompt text. The type with the
    SQLSTATE (PostgreSQL), SQLite's error name or the errno still says what happened:
    ``OperationalError (08006)``, ``OperationalError (SQLITE_CANTOPEN)``, ``OSError (EMFILE)``.
    """
    orig = getattr(exc, "orig", None)
    inner = orig if isinstance(orig, BaseException) else exc
    code = getattr(inner, "sqlstate", None) or getattr(inner, "sqlite_errorname", None)
    if code is None and isinstance(inner, OSError) and inner.errno:
        code = errno.errorcode.get(inner.errno)
    return f"{type(inner).__name__} ({code})" if code else type(inner).__name__


def alembic_config() -> AlembicConfig:
    from alembic.config import Config as AlembicConfig

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return cfg


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None, f"no migrations found in {MIGRATIONS_DIR}"
    return head


def current_revision(url: str) -> str | None:
    """The database's revision, or None for a database Alembic has never touched."""
    from alembic.runtime.migration import MigrationContext

    engine = make_engine(url, pooled=False)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def upgrade(url: str, revision: str = "head") -> None:
    """Apply migrations up to ``revision`` (idempotent); a new SQLite file is made 0600."""
    from alembic import command

    create_private_sqlite(url)
    cfg = alembic_config()
    engine = make_engine(url, pooled=False)
    try:
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
    finally:
        engine.dispose()


def ensure_schema(url: str, config_path: str | None = None) -> None:
    """Make sure the schema is at head: upgrade SQLite, refuse a stale PostgreSQL."""
    if is_sqlite(url):
        upgrade(url)
        return
    current, head = current_revision(url), head_revision()
    if current != head:
        from router.config import config_path as default_config_path

        path = config_path or str(default_config_path(None))
        raise SchemaOutOfDate(
            f"database schema is at revision {current or '(empty)'}, this version needs {head}; "
            f"run: offload db upgrade --config {path}"
        )
