"""The access log: one line per request, and the process's log level and format.

A forwarded request's line is built from its usage row (request id, API, client name, route,
backend, status, latency, time to first token, tokens, reason, fallback), so the log and the
ledger never disagree; a request the proxy refused before deciding gets a shorter line. No
line ever holds a prompt, an answer or a key: a failed request carries only the error the
proxy or the upstream answered (secrets masked, cut short), so that a 5xx says what happened.

``logging.format: json`` writes every record, access lines and the rest, as one JSON object
per line (the access fields as keys); ``text`` writes ``key=value`` pairs.
"""

from __future__ import annotations

import atexit
import logging
import logging.handlers
import queue
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from router.config import LoggingConfig
    from router.errors import ProxyError
    from router.ledger.models import UsageRow

log = logging.getLogger("offload.access")
DETAIL_CHARS = 300  # of an error's message, in its line
QUEUE_RECORDS = 10_000  # waiting to be written; past it records are dropped, never waited for


def request_fields(row: UsageRow, detail: str | None = None) -> dict[str, Any]:
    """The fields of a forwarded request's line, in a fixed order."""
    fields: dict[str, Any] = {
        "request_id": row.request_id,
        "api": row.api,
        "endpoint": row.endpoint if row.endpoint != row.api else None,
        "client": row.client,
        "status": row.status,
        "route": row.route,
        "backend": row.backend,
        "decided": row.decided_backend,
        "latency_ms": round(row.latency_ms or 0.0, 1),
        "ttft_ms": None if row.ttft_ms is None else round(row.ttft_ms, 1),
        "prompt_tokens": row.prompt_tokens,
        "completion_tokens": row.completion_tokens,
        "cached_tokens": row.cached_tokens,
        "intent": row.intent,
        "reason": row.reason,
        "fallback": row.fallback_reason if row.fallback or row.backend is None else None,
        "error": row.error_type,
    }
    if detail and row.status >= 400:
        fields["detail"] = detail[:DETAIL_CHARS]
    return fields


def log_request(row: UsageRow, detail: str | None = None) -> None:
    if log.isEnabledFor(logging.INFO):
        level = logging.WARNING if row.status >= 500 else logging.INFO
        log.log(level, "request", extra={"access": request_fields(row, detail)})


def log_refusal(path: str, error: ProxyError) -> None:
    """A request refused before it was decided (401, 400, 413, 429...): status and why."""
    if log.isEnabledFor(logging.INFO):
        fields = {"path": path, "status": error.status, "error": error.code or error.type}
        log.info("refused", extra={"access": fields})


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "access", None)
        if fields is None:
            return super().format(record)
        pairs = " ".join(f"{k}={_text(v)}" for k, v in fields.items() if v is not None)
        return f"{self.formatTime(record)} {record.levelname} {record.name}: {record.getMessage()} {pairs}"


def _text(value: Any) -> str:
    text = str(value)
    return orjson.dumps(text).decode() if (" " in text or '"' in text or not text) else text


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        out.update(getattr(record, "access", None) or {})
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(out).decode()


class _DroppingQueueHandler(logging.handlers.QueueHandler):
    """Puts records on a bounded queue, never waits: a full queue (stderr not read, a slow
    terminal) drops the record and counts it, so logging never blocks the event loop."""

    dropped = 0

    def enqueue(self, record: logging.LogRecord) -> None:
        try:
            self.queue.put_nowait(record)
        except queue.Full:
            type(self).dropped += 1


def configure_logging(config: LoggingConfig) -> logging.handlers.QueueListener:
    """The process's logging as ``logging:`` says: its level, its format, the access log on
    or off. Called once by ``offload serve`` after the config is read. Records are written
    to stderr by a thread of their own (a request only puts its line on a queue); the
    returned listener is stopped at exit, which writes what is still queued."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if config.format == "json" else TextFormatter())
    records: queue.Queue[logging.LogRecord] = queue.Queue(QUEUE_RECORDS)
    listener = logging.handlers.QueueListener(records, handler)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(_DroppingQueueHandler(records))
    root.setLevel(config.level.upper())
    log.disabled = not config.access
    listener.start()
    atexit.register(_stop, listener)
    return listener


def _stop(listener: logging.handlers.QueueListener) -> None:
    if listener._thread is not None:  # not stopped already
        listener.stop()
