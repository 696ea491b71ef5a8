"""The response that relays a stream, and how it notices the client leaving.

Starlette's StreamingResponse runs each stream in an anyio task group with a
second task listening for the disconnect. The relay needs only the listener:
one watcher task that cancels the sending task when the client goes, which
then closes the upstream connection (and vLLM frees the slot).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

T = TypeVar("T")


async def _wait_for_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def cancel_on_disconnect(receive: Receive, work: Awaitable[T], on_disconnect: Callable[[], T]) -> T:
    """Await ``work``; if the client disconnects first, cancel it and return ``on_disconnect()``."""
    this = asyncio.current_task()
    assert this is not None
    done = False
    watcher = asyncio.ensure_future(_wait_for_disconnect(receive))
    watcher.add_done_callback(lambda w: None if done or w.cancelled() else this.cancel())
    try:
        return await work
    except asyncio.CancelledError:
        if not watcher.done() or watcher.cancelled():
            raise  # cancelled for another reason (shutdown): not a disconnect
        this.uncancel()
        return on_disconnect()
    finally:
        done = True
        watcher.cancel()


class RelayResponse(StreamingResponse):
    """A StreamingResponse that needs no task group per stream."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await cancel_on_disconnect(receive, self.stream_response(send), lambda: None)
        except OSError:
            pass  # the client went away mid-send
        finally:
            # Cancelled between two events, the body iterator would otherwise stay
            # suspended; closing it runs its cleanup (release the upstream slot).
            aclose = getattr(self.body_iterator, "aclose", None)
            if aclose is not None:
                await aclose()
