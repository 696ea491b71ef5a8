"""Per-key windows and response ids in Redis.

The windows are the sliding minute of router/edge/limits.py (requests counted at admission,
tokens reserved at admission and replaced by the real usage at the end), as sorted sets and
two sums per key, admitted in one script with the same arithmetic and Retry-After. A response
id is one key with a TTL.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from typing import Any

import orjson

from router.forward.redis_link import _NOW, Link
from router.forward.redis_slots import RELEASE_FLUSH_S
from router.forward.shared import WINDOW_S, Minted, Refused
from router.sessions import Seen

log = logging.getLogger("offload.shared")


# Response ids are the client's to choose (previous_response_id): never a huge key.
MAX_ID_BYTES = 256
# A session's home outlives any prefix cache: after it the session is placed afresh.
SESSION_TTL_S = 24 * 3600

# One key's windows. KEYS: requests (id → admitted at), tokens ("id:n" → charged at),
# reserved ("id:n" → admitted at), sums (hash: tokens, reserved). Entries leave the
# window when they are a window old, as in router/edge/limits.py (_Window.expire).
_EXPIRE = """
local window = tonumber(ARGV[2])
local start = now - window
local function drop(key, field)
  local old = redis.call('ZRANGEBYSCORE', key, '-inf', start)
  if #old == 0 then return end
  local total = 0
  for _, member in ipairs(old) do total = total + tonumber(string.match(member, ':(%d+)$')) end
  redis.call('HINCRBY', KEYS[4], field, -total)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', start)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', start)
drop(KEYS[2], 'tokens')
drop(KEYS[3], 'reserved')
local function keep_all() for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], 2 * window) end end
"""


def _settlements(first: int) -> str:
    """Lua applying the settlements in ARGV from ``first`` on, four values each: the held
    reservation ("id:n" or ''), its n, the charge ("id:n" or ''), its n. A reservation that
    already lapsed is not released twice; the usage is charged all the same."""
    return f"""
for i = {first}, #ARGV, 4 do
  if ARGV[i] ~= '' and redis.call('ZREM', KEYS[3], ARGV[i]) == 1 then
    redis.call('HINCRBY', KEYS[4], 'reserved', -tonumber(ARGV[i + 1]))
  end
  local tokens = tonumber(ARGV[i + 3])
  if ARGV[i + 2] ~= '' and tokens > 0 then
    redis.call('ZADD', KEYS[2], now, ARGV[i + 2])
    redis.call('HINCRBY', KEYS[4], 'tokens', tokens)
  end
end
"""


# ARGV: now_ms, window_ms, rpm (-1: none), tpm (-1: none), reserve, id, then this replica's
# settlements for the key since its last call (applied first: they ride on the next admission).
# Returns {1, 'ok', 0} or {0, 'tokens' | 'requests', ms until the next request fits}.
ADMIT = (
    _NOW
    + _EXPIRE
    + _settlements(7)
    + """
local rpm, tpm, reserve = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if tpm >= 0 then
  local sums = redis.call('HMGET', KEYS[4], 'tokens', 'reserved')
  local committed = (tonumber(sums[1]) or 0) + (tonumber(sums[2]) or 0)
  local need = math.max(reserve, 1)
  if committed ~= 0 and committed + need > tpm then
    local wait = 1000
    local charged = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
    for i = 1, #charged, 2 do
      committed = committed - tonumber(string.match(charged[i], ':(%d+)$'))
      if committed == 0 or committed + need <= tpm then
        wait = tonumber(charged[i + 1]) + window - now
        break
      end
    end
    keep_all()
    return {0, 'tokens', wait}
  end
end
if rpm >= 0 and redis.call('ZCARD', KEYS[1]) >= rpm then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  keep_all()
  return {0, 'requests', tonumber(oldest[2]) + window - now}
end
redis.call('ZADD', KEYS[1], now, ARGV[6])
if reserve > 0 then
  redis.call('ZADD', KEYS[3], now, ARGV[6] .. ':' .. ARGV[5])
  redis.call('HINCRBY', KEYS[4], 'reserved', reserve)
end
keep_all()
return {1, 'ok', 0}
"""
)

# ARGV: now_ms, window_ms, then settlements (as above): those no admission carried in time.
SETTLE = _NOW + _EXPIRE + _settlements(3) + "keep_all()\nreturn 1\n"


class SharedWindows:
    """Per-key windows in Redis (router/edge/limits.py's arithmetic, in Lua). Admission waits
    for Redis; a settlement never does: it rides on the key's next admission from this
    replica, or goes with the others after ``RELEASE_FLUSH_S``, one call per key."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self._admit = link.client.register_script(ADMIT)
        self._settle = link.client.register_script(SETTLE)
        self._window_ms = int(WINDOW_S * 1000)
        self._pending: dict[str, list[str | int]] = {}  # key name → settlements (4 values each)
        self._flush_timer: asyncio.TimerHandle | None = None

    def keys(self, name: str) -> list[str]:
        base = f"{self.link.prefix}:limits:{{{name}}}"  # one hash slot per key name
        return [f"{base}:requests", f"{base}:tokens", f"{base}:reserved", f"{base}:sums"]

    async def admit(self, name: str, rpm: int | None, tpm: int | None, reserve: int) -> str | Refused | None:
        if not self.link.up:
            return None
        rid = os.urandom(8).hex()
        limits = [-1 if rpm is None else rpm, -1 if tpm is None else tpm]
        # The key's pending settlements ride along. Should the call fail they are not sent
        # again (it may have run): the reservations lapse within the window instead.
        settled = self._pending.pop(name, [])
        args = [self.link.now_ms(), self._window_ms, *limits, reserve, rid, *settled]
        got = await self.link.call(lambda: self._admit(keys=self.keys(name), args=args))
        if got is None:
            return None
        ok, what, wait_ms = got
        return rid if ok else Refused(what.decode(), int(wait_ms) / 1000)

    def settle(self, name: str, reservation: str, held: int, tokens: int) -> bool:
        return self._charge(name, f"{reservation}:{held}" if held > 0 else "", held, reservation, tokens)

    def charge(self, name: str, tokens: int) -> bool:
        return self._charge(name, "", 0, os.urandom(8).hex(), tokens)

    async def flush(self) -> None:
        """Send the pending settlements now (shutdown)."""
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        for name, args in self._take_pending():
            await self.link.call(functools.partial(self._settle, keys=self.keys(name), args=args))

    def _charge(self, name: str, held_member: str, held: int, charge_id: str, tokens: int) -> bool:
        if not self.link.up:
            return False
        charged = f"{charge_id}:{tokens}" if tokens > 0 else ""
        self._pending.setdefault(name, []).extend((held_member, held, charged, tokens))
        if self._flush_timer is None:
            self._flush_timer = asyncio.get_running_loop().call_later(RELEASE_FLUSH_S, self._flush_soon)
        return True

    def _take_pending(self) -> list[tuple[str, list[str | int]]]:
        pending, self._pending = self._pending, {}
        now = self.link.now_ms()
        return [(name, [now, self._window_ms, *groups]) for name, groups in pending.items()]

    def _flush_soon(self) -> None:
        self._flush_timer = None
        for name, args in self._take_pending():
            self.link.spawn(functools.partial(self._settle, keys=self.keys(name), args=args))


class SharedOwners:
    """Response id → backend and client key, one key each with a TTL (``state.response_ids_ttl_s``)."""

    def __init__(self, link: Link, ttl_s: int) -> None:
        self.link = link
        self._ttl_ms = ttl_s * 1000

    def key(self, response_id: str) -> str:
        return f"{self.link.prefix}:response:{response_id}"

    def put(self, response_id: str, minted: Minted) -> None:
        if self.link.up and len(response_id) <= MAX_ID_BYTES:
            key = self.key(response_id)
            value = orjson.dumps([minted.backend, minted.client, minted.session])
            self.link.spawn(lambda: self.link.client.set(key, value, px=self._ttl_ms))

    async def get(self, response_id: str) -> Minted | None:
        if len(response_id) > MAX_ID_BYTES:
            return None
        key = self.key(response_id)
        got = await self.link.call(lambda: self.link.client.get(key))
        return _minted(got)


def _minted(value: Any) -> Minted | None:
    """A stored ``[backend, client, session]`` (or ``[backend, client]``, as versions before
    sessions wrote it); anything else (a value with no client) is no owner at all: the turn
    is decided as for an unknown id."""
    try:
        stored = orjson.loads(value) if isinstance(value, bytes) else None
    except orjson.JSONDecodeError:
        return None
    if not isinstance(stored, list) or len(stored) not in (2, 3):
        return None
    backend, client, session = (*stored, None)[:3]
    if isinstance(backend, str) and all(v is None or isinstance(v, str) for v in (client, session)):
        return Minted(backend, client, session)
    return None


class SharedSessions:
    """Session → where its last turn ran (router/sessions.py), one key each with a TTL."""

    def __init__(self, link: Link, ttl_s: int = SESSION_TTL_S) -> None:
        self.link = link
        self._ttl_ms = ttl_s * 1000

    def key(self, session_key: str) -> str:
        return f"{self.link.prefix}:session:{session_key}"

    def put(self, key: str, seen: Seen) -> None:
        if self.link.up:
            redis_key, value = self.key(key), orjson.dumps(list(seen))
            self.link.spawn(lambda: self.link.client.set(redis_key, value, px=self._ttl_ms))

    async def get(self, key: str) -> Seen | None:
        if not self.link.up:
            return None
        redis_key = self.key(key)
        got = await self.link.call(lambda: self.link.client.get(redis_key))
        return _seen(got)


def _seen(value: Any) -> Seen | None:
    try:
        stored = orjson.loads(value) if isinstance(value, bytes) else None
    except orjson.JSONDecodeError:
        return None
    if not isinstance(stored, list) or len(stored) != 4:
        return None
    route, backend, tokens, box = stored
    strings = isinstance(route, str) and isinstance(backend, str)
    if strings and isinstance(tokens, int) and (box is None or isinstance(box, str)):
        return Seen(route, backend, tokens, box)
    return None
