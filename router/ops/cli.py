"""The ``offload`` command."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import orjson
import uvicorn

# Nothing that imports classifier is imported before main() has run the import-name check
# (router.dist): router.config does, and another distribution's classifier may be in its place.
if TYPE_CHECKING:
    from router.config import Config

log = logging.getLogger("offload")

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
# The discovery order is router.config.config_path's.
_CONFIG_HELP = "config file (default: $OFFLOAD_CONFIG, else ./config/router.yaml; `offload init` writes one)"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands: dict[str, Callable[[list[str]], int]] = {
        "init": _delegate("router.ops.init"),
        "serve": serve,
        "classify": classify,
        "report": _delegate("router.ledger.report"),
        "db": db,
        "vllm-command": _delegate("router.ops.vllm_command"),
        "demo": _delegate("router.ops.demo"),
        "export": _delegate("router.ledger.export"),
        "compare": _delegate("router.ledger.compare"),
        "gate": _delegate("router.gate.cli"),
        "eval": _delegate("classifier.evaluate"),
        "train": _delegate("classifier.train"),
    }
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in commands:
        print(
            "usage: offload {" + ",".join(commands) + "} [options]  (offload COMMAND --help)", file=sys.stderr
        )
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    from router.dist import import_clash

    clash = import_clash()
    if clash:
        # Another distribution (or a folder on sys.path) owns one of our import names: any
        # command would run somebody else's code, or fail with a traceback that hides why.
        print(f"offload: {clash}; install offload-router in a virtualenv of its own", file=sys.stderr)
        return 2
    from router.config import ConfigError

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return commands[argv[0]](argv[1:])
    except ConfigError as exc:
        print(f"offload: config error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file named on the command line: one line, never a traceback
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"offload {argv[0]}: cannot use {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a database or data error deep in a command: its first line
        if os.environ.get("OFFLOAD_TRACEBACK"):
            raise
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        print(
            f"offload {argv[0]}: {type(exc).__name__}: {first} (OFFLOAD_TRACEBACK=1 shows where)",
            file=sys.stderr,
        )
        return 1


def _delegate(module: str) -> Callable[[list[str]], int]:
    def run(args: list[str]) -> int:
        import importlib

        return int(importlib.import_module(module).main(args) or 0)

    return run


# ------------------------------------------------------------------ serve


def serve(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="offload serve", description="Run the proxy.")
    parser.add_argument("--config", help=_CONFIG_HELP)
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    opts = parser.parse_args(args)
    from router.config import load_config

    config = load_config(opts.config)
    from router.edge.access import configure_logging

    configure_logging(config.logging)
    host = opts.host or config.server.host
    port = opts.port if opts.port is not None else config.server.port
    from router.edge.auth import KeyStore

    if KeyStore(config.auth).open:
        if host not in _LOOPBACK:
            log.warning("no client key is configured: listening on 127.0.0.1 only, not %s", host)
            host = "127.0.0.1"
        else:
            log.warning("no client key is configured: any local process may call the proxy")
    from router.edge.server import guarded_protocol, head_limits, raise_descriptor_limit, return_freed_memory

    return_freed_memory()

    # First, so that the database, the journal and every connection get the raised limit.
    limits = head_limits(config.server, raise_descriptor_limit())
    _prepare_database(config, opts.config)
    _warn_about_open_files(config)
    from router.app import create_app

    app = create_app(config)
    log.info("offload-router on http://%s:%d/v1", host, port)
    # One worker per process keeps /metrics whole; scale with replicas.
    server = _Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            loop="uvloop",
            # httptools, with a head timeout, head size and count limits and a
            # connection cap that uvicorn lacks (router/edge/server.py).
            http=guarded_protocol(limits),
            access_log=False,
            log_level="warning",
            timeout_graceful_shutdown=int(config.server.shutdown_grace_s) or None,
        )
    )
    server.run()
    return 0


class _Server(uvicorn.Server):
    """uvicorn, minus re-raising SIGTERM once the graceful shutdown is done.

    uvicorn re-raises the signal it caught, so the process would end "killed
    by SIGTERM"; systemd and Kubernetes expect a clean exit 0 after a graceful
    stop (in-flight requests finished, usage flushed).
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        handled = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


def _warn_about_open_files(config: Config) -> None:
    """The database, spool and journal hold prompts, names and spend: say so when other
    local users may read them (files made before this version, or by hand)."""
    from router.ledger.db import private_file_paths, too_open

    if not config.database.enabled:
        return
    wide = too_open(private_file_paths(config.database.url, config.database.spool_path))
    if wide:
        log.warning("readable by other local users: %s; run chmod 600 on them", ", ".join(wide))


def _prepare_database(config: Config, config_file: str | None) -> None:
    """SQLite is upgraded in place; an out-of-date PostgreSQL stops the start.

    An unreachable database does not: the proxy serves, and usage rows wait in
    the spool file until the database is back.
    """
    if not config.database.enabled:
        return
    from sqlalchemy.exc import OperationalError

    from router.ledger.db import SchemaOutOfDate, ensure_schema

    try:
        ensure_schema(config.database.url, config_file)
    except SchemaOutOfDate as exc:
        print(f"offload: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except OperationalError as exc:
        log.warning(
            "database unreachable at start-up (%s): usage rows go to the spool", type(exc.orig).__name__
        )


# --------------------------------------------------------------- classify


def classify(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="offload classify", description="Print routing decisions as JSON.")
    parser.add_argument("--config", help=_CONFIG_HELP)
    parser.add_argument("--batch", help="JSONL file: {id?, request} or a bare request body per line")
    parser.add_argument(
        "--api",
        choices=("chat", "responses", "messages"),
        default="chat",
        help="the API of the request bodies (default: chat): what /v1/chat/completions, "
        "/v1/responses or /v1/messages would decide",
    )
    parser.add_argument("text", nargs="?", help="a user message to classify")
    opts = parser.parse_args(args)
    if not opts.batch and opts.text is None:
        parser.error("give TEXT or --batch FILE")
    from router.config import load_config
    from router.decide.policy import Policy, load_classifier
    from router.forward.backends import Pool

    config = load_config(opts.config)
    policy = Policy(config, load_classifier(config.routing.classifier_weights))
    pool = Pool(config)  # never started: what the config says, every configured backend up
    items = _batch(opts.batch) if opts.batch else iter([(None, _text_request(opts.text, opts.api))])
    for ident, request in items:
        print(orjson.dumps(_decision_line(policy, pool, opts.api, ident, request)).decode())
    return 0


def _text_request(text: str, api: str) -> dict[str, Any]:
    turn = [{"role": "user", "content": text}]
    if api == "responses":
        return {"model": "auto", "input": turn}
    if api == "messages":
        return {"model": "auto", "max_tokens": 1024, "messages": turn}
    return {"model": "auto", "messages": turn}


def _batch(path: str) -> Iterator[tuple[Any, dict[str, Any]]]:
    with open(path, "rb") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                item = orjson.loads(line)
            except orjson.JSONDecodeError:
                yield n, {"__error__": f"line {n}: not valid JSON"}
                continue
            if isinstance(item, dict) and isinstance(item.get("request"), dict):
                yield item.get("id", n), item["request"]
            else:
                yield n, item


def _decision_line(policy: Any, pool: Any, api: str, ident: Any, request: Any) -> dict[str, Any]:
    """What /offload/route answers for the same body (router.forward.plan), with its id."""
    from router.dialects import COMPLETIONS, ROUTE_APIS
    from router.errors import ProxyError
    from router.forward.plan import route_plan

    if not isinstance(request, dict) or "__error__" in request:
        error = request.get("__error__") if isinstance(request, dict) else "not a JSON object"
        return {"id": ident, "error": error}
    dialect = ROUTE_APIS[api]
    if api == "chat" and "messages" not in request:
        dialect = COMPLETIONS
    try:
        decision = policy.decide(request, {}, len(orjson.dumps(request)), dialect)
    except ProxyError as exc:
        return {"id": ident, "error": exc.message}
    plan = route_plan(pool, decision, dialect.api)
    return {"id": ident, **{k: plan[k] for k in ("intent", "confidence", "route", "backend", "reason")}}


# --------------------------------------------------------------------- db


def db(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="offload db", description="Database schema.")
    parser.add_argument("action", choices=["upgrade", "current"])
    parser.add_argument("--config", help=_CONFIG_HELP)
    opts = parser.parse_args(args)
    from router.config import load_config
    from router.ledger import db as database

    config = load_config(opts.config)

    if opts.action == "upgrade":
        before = database.current_revision(config.database.url)
        database.upgrade(config.database.url)
        print(f"database at revision {database.head_revision()} (was {before or 'empty'})")
    else:
        print(database.current_revision(config.database.url) or "empty")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
