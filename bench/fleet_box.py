"""A simulated Spark that also notes which session each request belonged to (bench only).

``python -m router.fake.spark`` with one addition for bench/fleet.py's two-box mode: a
middleware reads each generative request's ``[task N]`` marker (the first user turn of
session N) and keeps ``(N, time.time())``; ``GET /_bench/visits`` returns them. The proxy
does not tell its client which endpoint served a turn, so the bench merges the two boxes'
visits by time to see which box each session's turns ran on.

    .venv/bin/python bench/fleet_box.py --port P [the options of router.fake.spark]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from router.fake.spark import SparkFake  # noqa: E402
from router.fake.spark_engine import SparkSpec  # noqa: E402

MARKER = re.compile(rb"\[task (\d+)\]")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def with_visits(app: web.Application) -> web.Application:
    visits: list[tuple[int, float]] = []

    @web.middleware
    async def note(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.method == "POST" and request.path.startswith("/v1/"):
            found = MARKER.search(await request.read())  # read once: aiohttp keeps the bytes
            if found:
                visits.append((int(found[1]), time.time()))
        return await handler(request)

    async def listing(request: web.Request) -> web.Response:
        return web.json_response(visits)

    app.middlewares.append(note)
    app.router.add_get("/_bench/visits", listing)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--max-output", type=int, default=512)
    opts = parser.parse_args()
    fake = SparkFake(SparkSpec(), scale=opts.scale, max_output=opts.max_output, model="fake-model")
    web.run_app(
        with_visits(fake.app()),
        host="127.0.0.1",
        port=opts.port,
        access_log=None,
        print=None,
        handler_cancellation=True,
    )


if __name__ == "__main__":
    main()
