"""Who is looking at the console, and proof that a POST came from the console's own page.

**Who.** The console needs an admin key (``auth.admin_keys``), as ``/offload/state`` does:

* a browser logs in once with the key and then carries a session cookie;
* a script may send the key itself (``Authorization: Bearer`` or ``x-api-key``) on a GET;
* with no key configured at all, anyone on loopback may look, as the proxy then listens
  on 127.0.0.1 only; such a visitor still gets a session (named ``loopback``) so that
  its POSTs carry a CSRF token.

**The cookie** is ``payload.mac`` where the payload holds the admin key's name, an
expiry and a random id, signed with HMAC-SHA256. The signing key is derived from a
random secret *and* the configured admin keys: the secret (``auth.console_secret``, or
32 random bytes kept in ``auth.console_secret_file``, created 0600 on first start) makes
a cookie useless for guessing the admin key offline, since no guess can be checked
against its MAC without the secret; the admin keys make changing any of them log
everyone out. Replicas share cookies when they share the secret (set
``auth.console_secret`` from the environment). Logging out revokes the session here
(its random id is remembered until it would have expired), so a copied cookie stops
working at once on this replica. Failed logins are slowed per client address
(``router.console.throttle``). The cookie is
HttpOnly, SameSite=Strict, scoped to ``/offload/console``, and Secure whenever the
request came over https (uvicorn takes ``X-Forwarded-Proto`` from a local TLS
proxy); on plain http it cannot be Secure, or browsers would drop it on
``http://127.0.0.1``, so beyond loopback the console belongs behind TLS.

**CSRF.** Every page is served with a session, logged in or not (the login page's
anonymous one), and every form carries that session's token, an HMAC of its cookie.
A POST is refused (403) unless the token matches and the ``Origin`` (else
``Referer``) names the host the request was sent to; the SameSite=Strict cookie is
not even sent with a cross-site POST.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

import orjson
from sqlalchemy.engine import make_url
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response

from router.config import AuthConfig, DatabaseConfig
from router.console.throttle import LoginThrottle
from router.edge.auth import KeyStore
from router.errors import ProxyError
from router.ledger.db import is_sqlite

log = logging.getLogger("offload.console")

COOKIE = "offload_console"
PATH = "/offload/console"
LIFETIME_S = 12 * 3600
SECRET_FILE = "offload-console.secret"
LOOPBACK = "loopback"  # the name of a keyless loopback visitor, in labels' labelled_by
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


class ConsoleError(Exception):
    """A console request that cannot be answered as asked: an error page, or a redirect
    (``location``). Rendered in one place, ``router.console.render.error_response``."""

    def __init__(
        self, status: int, message: str, *, location: str | None = None, retry_after_s: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.location = location
        self.retry_after_s = retry_after_s  # a 429's Retry-After


@dataclass(frozen=True, slots=True)
class Session:
    name: str | None  # the admin key's name; None: not logged in (the login page's session)
    cookie: str  # the signed cookie value: the session's identity
    new: bool = False  # issued by this request: the response must set it

    @property
    def who(self) -> str:
        assert self.name is not None
        return self.name


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def signing_key(secret: bytes, admin_keys: list[str]) -> bytes:
    """The cookies' MAC key: keyed by the random secret, bound to the admin keys."""
    material = b"\0".join(hashlib.sha256(k.encode()).digest() for k in sorted(admin_keys))
    return hmac.new(secret, b"offload-console-session\0" + material, hashlib.sha256).digest()


def secret_path(auth: AuthConfig, database: DatabaseConfig) -> str:
    """Where the console secret is kept: ``auth.console_secret_file``, else beside the
    SQLite database, else beside the spool (the proxy's own files live together)."""
    if auth.console_secret_file:
        return auth.console_secret_file
    sqlite = make_url(database.url).database if is_sqlite(database.url) else None
    beside = sqlite if sqlite and sqlite != ":memory:" else database.spool_path
    return os.path.join(os.path.dirname(os.path.abspath(beside)), SECRET_FILE)


def load_secret(auth: AuthConfig, path: str) -> bytes:
    """``auth.console_secret``, else the secret kept in the file at ``path`` (made, 0600,
    on first start), else (that file cannot be written) a new one per process."""
    if auth.console_secret:
        return auth.console_secret.encode()
    try:
        with open(path, "rb") as fh:
            kept = fh.read().strip()
        if len(kept) >= 32:
            return kept
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("console secret %s unreadable (%s): sessions last until restart", path, exc.strerror)
        return os.urandom(32)
    fresh = os.urandom(32).hex().encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(fresh + b"\n")
    except FileExistsError:
        return load_secret(auth, path)  # another process just made it: use theirs
    except OSError as exc:
        log.warning("console secret %s not written (%s): sessions last until restart", path, exc.strerror)
    return fresh


class Sessions:
    def __init__(
        self,
        auth: AuthConfig,
        keys: KeyStore,
        *,
        clock: Callable[[], float] = time.time,
        throttle: LoginThrottle | None = None,
        secret: bytes | None = None,
    ) -> None:
        """``secret``: the random secret the cookies' MAC key is derived from (random per
        instance when not given; :func:`load_secret` gives the configured or kept one)."""
        self._keys = keys
        admin = [k.key for k in auth.admin_keys if k.key]
        self._admins = frozenset(k.name for k in auth.admin_keys if k.key)
        self._open = keys.open
        self._secret = signing_key(secret if secret is not None else os.urandom(32), admin)
        self._time = clock
        self.throttle = throttle if throttle is not None else LoginThrottle()
        self._revoked: dict[str, int] = {}  # a logged-out session's random id → its expiry

    @property
    def open(self) -> bool:
        """No key configured at all: loopback visitors need no login."""
        return self._open

    # ------------------------------------------------------------ cookies

    def issue(self, name: str | None) -> Session:
        payload = _b64(orjson.dumps([name, int(self._time()) + LIFETIME_S, os.urandom(12).hex()]))
        return Session(name, f"{payload}.{self._mac(payload)}", new=True)

    def read(self, request: Request) -> Session | None:
        """The request's session, if its cookie is genuine, unexpired and still names an admin."""
        value = request.cookies.get(COOKIE, "")
        payload, _, mac = value.partition(".")
        # Bytes: compare_digest refuses a str that is not ASCII, and a cookie may hold anything.
        if not payload or not hmac.compare_digest(
            mac.encode("utf-8", "replace"), self._mac(payload).encode()
        ):
            return None
        try:
            name, expires, nonce = orjson.loads(_unb64(payload))
        except (ValueError, TypeError):
            return None
        if not isinstance(expires, int) or expires < self._time():
            return None
        if nonce in self._revoked:
            return None  # logged out
        if name is not None and name not in self._admins and not (self._open and name == LOOPBACK):
            return None  # that admin key was removed from the config
        return Session(name, value)

    def set_cookie(self, response: Response, session: Session, request: Request) -> None:
        response.set_cookie(
            COOKIE,
            session.cookie,
            max_age=LIFETIME_S,
            path=PATH,
            secure=request.url.scheme == "https",
            httponly=True,
            samesite="strict",
        )

    def revoke(self, session: Session) -> None:
        """Log ``session`` out: its cookie is refused from now on, wherever it was copied."""
        payload = session.cookie.partition(".")[0]
        try:
            _name, expires, nonce = orjson.loads(_unb64(payload))
        except (ValueError, TypeError):
            return
        now = self._time()
        # Forget what has expired anyway, so the set holds at most a lifetime of logouts.
        self._revoked = {n: e for n, e in self._revoked.items() if e >= now}
        self._revoked[str(nonce)] = int(expires)

    def csrf(self, session: Session) -> str:
        return self._mac("csrf:" + session.cookie)

    def _mac(self, text: str) -> str:
        return _b64(hmac.new(self._secret, text.encode(), hashlib.sha256).digest()[:24])

    # ------------------------------------------------------------ who

    def viewer(self, request: Request) -> Session:
        """The admin looking at a page: their session, a key sent with the request, or a
        keyless loopback visitor; else ConsoleError (303 to the login page, 401, 403)."""
        session = self.read(request)
        if session is not None and session.name is not None:
            return session
        headers = request.headers
        if "authorization" in headers or "x-api-key" in headers:
            name = self._throttled_admin_name(headers, client_address(request))
            return Session(name, "")  # a script: no cookie, so it cannot POST
        if self._open:
            _require_loopback(request)
            return self.issue(LOOPBACK)
        here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise ConsoleError(303, "log in with an admin key", location=f"{PATH}/login?next={quote(here)}")

    def login(self, key: str, address: str) -> Session:
        """A new session for an admin key (never the old one: no session fixation), unless
        ``address`` has failed too often lately (429, the key not even checked)."""
        headers = Headers({"authorization": f"Bearer {key.strip()}"})
        return self.issue(self._throttled_admin_name(headers, address))

    def _throttled_admin_name(self, headers: Headers, address: str) -> str:
        wait = self.throttle.wait_s(address)
        if wait > 0:
            raise ConsoleError(429, "too many failed logins: try again later", retry_after_s=wait)
        try:
            name = self._admin_name(headers)
        except ConsoleError as exc:
            if exc.status == 401:  # no key of this proxy (a client key is 403: not a guess)
                self.throttle.failed(address)
            raise
        self.throttle.succeeded(address)
        return name

    def _admin_name(self, headers: Headers) -> str:
        try:
            caller = self._keys.require_admin(headers)
        except ProxyError as exc:
            message = "this key is not an admin key" if exc.status == 403 else "invalid admin key"
            raise ConsoleError(exc.status, message) from None
        if caller is None:  # no key configured: only reachable from loopback
            return LOOPBACK
        return caller.name

    # ------------------------------------------------------------ POSTs

    def check_post(self, request: Request, token: str, *, logging_in: bool = False) -> Session:
        """The session a POST acts for. 401 without one (logged in, or the login page's
        when ``logging_in``); 403 unless it carries that session's token and comes from a
        page of this host."""
        session = self.read(request)
        if session is None or (session.name is None) != logging_in:
            raise ConsoleError(
                401, "log in first" if not logging_in else "reload the login page and try again"
            )
        if not hmac.compare_digest(token.encode("utf-8", "replace"), self.csrf(session).encode()):
            raise ConsoleError(403, "this form has expired: reload the page and try again")
        if not same_origin(request):
            raise ConsoleError(403, "cross-site request refused")
        return session


def same_origin(request: Request) -> bool:
    """Does the POST's ``Origin`` (else its ``Referer``) name the host it was sent to?"""
    source = request.headers.get("origin") or request.headers.get("referer")
    if not source or source == "null":
        return False
    parts = urlsplit(source)
    if parts.scheme not in ("http", "https"):
        return False
    if request.url.scheme == "https" and parts.scheme != "https":
        return False
    return parts.netloc.lower() == request.headers.get("host", "").lower()


def client_address(request: Request) -> str:
    """Who failed logins are counted against: the peer address (behind a local TLS proxy,
    uvicorn has already put the forwarded client there)."""
    return request.client.host if request.client else ""


def _require_loopback(request: Request) -> None:
    host = request.client.host if request.client else ""
    if host not in _LOOPBACK_HOSTS and not host.startswith("127."):
        raise ConsoleError(403, "with no admin key configured the console answers loopback only")
