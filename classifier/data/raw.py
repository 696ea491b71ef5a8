"""Hand-written client bodies, as sent, into the project's line format.

    .venv/bin/python -m classifier.data.raw RAW.jsonl OUT.jsonl [--prefix roles1]

Some hand-written sets are written as what a client sends: each line holds ``api``, ``path``
and the raw ``body`` (a Chat Completions, OpenAI Responses or Anthropic Messages request) with
its labels (and an ``id``). The classifier is handed the router's view of a body: the body itself for chat,
the dialect's chat-shaped view (``router.dialects``) for Responses and Messages. This writes
that view as each line's ``request`` and keeps the labels and the id (lines without one are
numbered with ``--prefix``); the raw file is
kept beside the sets (``handwritten/raw/``, ``sealed/raw/``) so that tests can send the bodies
through the real endpoints' dialects and the policy, and ``tests/test_classifier_sets.py``
checks that each converted line is still the view of its raw body.

Uses ``router.dialects`` (imported when called): a tool of the checkout, not of the serving path.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from router.dialects import Dialect

# Labels copied from a raw line; ``api`` is the API the body was written for.
LABELS = ("intent", "language", "format", "kind", "multi_turn", "source")


def read_raw(path: str | Path) -> Iterator[dict[str, Any]]:
    """The raw lines of ``path`` (blank lines skipped)."""
    with open(path, "rb") as fh:
        for line in fh:
            if line.strip():
                yield orjson.loads(line)


def api_of(raw: dict[str, Any]) -> str:
    """The API a raw line's body is for: by its ``path``, else its ``api`` field."""
    from router.dialects import BY_PATH

    path = raw.get("path")
    if isinstance(path, str):
        path = path.partition("?")[0]  # Claude Code posts to /v1/messages?beta=true
        dialect = BY_PATH.get(path if path.startswith("/v1/") else "/v1" + path)
        if dialect is not None:
            return dialect.api
    api = str(raw.get("api", "")).lower()
    for name in ("responses", "messages", "completions", "chat"):
        if name in api:
            return name
    raise ValueError(f"no known API in path {path!r} or api {raw.get('api')!r}")


def dialect_of(api: str) -> Dialect:
    """The dialect of an API named by :func:`api_of`."""
    from router.dialects import CHAT, COMPLETIONS, MESSAGES, RESPONSES

    return {"chat": CHAT, "completions": COMPLETIONS, "responses": RESPONSES, "messages": MESSAGES}[api]


def request_view(api: str, body: dict[str, Any]) -> dict[str, Any]:
    """What the classifier is handed for ``body``: its dialect's decision view."""
    return dialect_of(api).view(body)


def convert_line(raw: dict[str, Any], line_id: str) -> dict[str, Any]:
    """One raw line as a line of the project's sets."""
    api = api_of(raw)
    out: dict[str, Any] = {"id": line_id, "request": request_view(api, raw["body"]), "api": api}
    out.update({k: raw[k] for k in LABELS if k in raw})
    return out


def convert(raw_path: str | Path, prefix: str = "raw") -> list[dict[str, Any]]:
    return [
        convert_line(raw, str(raw.get("id") or f"{prefix}-{i:03d}"))
        for i, raw in enumerate(read_raw(raw_path))
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw", type=Path, help="raw lines: api, path, body and labels")
    ap.add_argument("out", type=Path, help="the set in the project's line format")
    ap.add_argument("--prefix", default="raw", help="id prefix of lines without an id (default %(default)s)")
    args = ap.parse_args(argv)
    lines = convert(args.raw, args.prefix)
    args.out.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    print(f"wrote {args.out} ({len(lines)} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
