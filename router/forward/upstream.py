"""Talking to one upstream: the POST, its first bytes, a whole answer, an error's body.

Each failure before any byte of an answer is an :class:`UpstreamFailure` with a reason
(the next candidate may answer); an answer past ``max_response_bytes`` is
:class:`AnswerTooLarge`. The forwarder (router/forward/proxy.py) decides what follows.
"""

from __future__ import annotations

import asyncio
import logging

import aiohttp

from router.forward.backends import Backend, Endpoint, Unavailable, own_resource_error
from router.forward.call import Call

log = logging.getLogger("offload.proxy")


class UpstreamFailure(Unavailable):
    """The request failed before any byte of an answer: try the next backend. (An
    ``Unavailable`` means no attempt was made; telling them apart gives 502 or 503.)
    ``blames_backend`` is false when the proxy itself ran out of descriptors or memory."""

    def __init__(self, reason: str, message: str, blames_backend: bool = True) -> None:
        super().__init__(reason, message)
        self.blames_backend = blames_backend


class AnswerTooLarge(Exception):
    """A non-streamed answer passed the backend's ``max_response_bytes``."""


async def post(
    backend: Backend, endpoint: Endpoint, call: Call, payload: bytes, deadline: float | None
) -> aiohttp.ClientResponse:
    """POST once (response headers by ``deadline`` for a stream); retry once a pooled
    connection that the server had already closed."""
    assert endpoint.session is not None
    headers = {
        "Content-Type": "application/json",
        "X-Request-Id": call.facts.request_id,
        **backend.auth_headers,
        **(call.headers or {}),
    }
    url = endpoint.url + call.dialect.path + (f"?{call.query}" if call.query else "")
    for attempt in (1, 2):
        try:
            async with asyncio.timeout_at(deadline):
                return await endpoint.session.post(url, data=payload, headers=headers)
        except aiohttp.ServerDisconnectedError as exc:
            if attempt == 2:
                raise UpstreamFailure("connection_reset", f"{backend.name}: {exc}") from None
        except aiohttp.ClientConnectorError as exc:
            if own_resource_error(exc):
                raise own_failure(backend) from None
            raise UpstreamFailure(
                "connect_error", f"{backend.name}: cannot connect ({exc.strerror})"
            ) from None
        except TimeoutError:
            reason = "first_byte_timeout" if deadline is not None else "timeout"
            raise UpstreamFailure(reason, f"{backend.name}: no answer in time") from None
        except (aiohttp.ConnectionTimeoutError, aiohttp.SocketTimeoutError):
            raise UpstreamFailure("timeout", f"{backend.name}: timed out") from None
        except aiohttp.ClientError as exc:
            raise UpstreamFailure("connection_reset", f"{backend.name}: {type(exc).__name__}") from None
        except OSError as exc:
            if own_resource_error(exc):
                raise own_failure(backend) from None
            raise UpstreamFailure("connect_error", f"{backend.name}: {exc.strerror}") from None
    raise AssertionError("unreachable")


async def read_error(response: aiohttp.ClientResponse) -> bytes:
    try:
        return await response.content.read(64 * 1024)  # an error is small; a bigger one is cut
    except (aiohttp.ClientError, TimeoutError):
        return b""  # normalise_upstream_error still says which status it was


async def first_chunk(backend: Backend, response: aiohttp.ClientResponse, deadline: float | None) -> bytes:
    """Wait for the stream's first bytes: until then the request can still move.
    (On failure forward() closes the response: closed, not pooled, makes vLLM abort.)"""
    try:
        async with asyncio.timeout_at(deadline):
            first = await response.content.readany()
    except TimeoutError:
        raise UpstreamFailure("first_byte_timeout", f"{backend.name}: no first byte in time") from None
    except aiohttp.ClientError as exc:
        raise UpstreamFailure("connection_reset", f"{backend.name}: {type(exc).__name__}") from None
    if not first:
        raise UpstreamFailure("empty_stream", f"{backend.name}: closed the stream at once")
    return first


async def read_whole(backend: Backend, response: aiohttp.ClientResponse) -> bytes:
    """The whole answer, never more than the backend's ``max_response_bytes`` in memory."""
    limit = backend.config.max_response_bytes
    if (response.content_length or 0) > limit:
        raise AnswerTooLarge
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.content.iter_any():
            size += len(chunk)
            if size > limit:
                raise AnswerTooLarge
            chunks.append(chunk)
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise UpstreamFailure("connection_reset", f"{backend.name}: {type(exc).__name__}") from None
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def own_failure(backend: Backend) -> UpstreamFailure:
    log.error("cannot reach %s: the proxy is out of file descriptors or memory", backend.name)
    return UpstreamFailure(
        "proxy_resources", "the proxy is out of descriptors or memory", blames_backend=False
    )
