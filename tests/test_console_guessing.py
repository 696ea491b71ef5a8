"""The console resists guessing its admin key: a cookie gives no offline oracle, failed
logins are slowed per address, and logging out ends the session, copies of it included."""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
from pathlib import Path

import pytest

from router.config import parse_config
from router.console.session import SECRET_FILE, _b64
from router.console.throttle import LoginThrottle
from tests.test_console import (
    ADMIN_KEY,
    BASE,
    ORIGIN,
    OTHER_ADMIN_KEY,
    console_client,
    csrf_of,
    login,
    make_config,
    seed,
    traffic,
)


def _mac_from_admin_keys_alone(payload: str) -> str:
    """What a guesser holding a cookie can compute for each guess if the MAC key were
    derived from the admin keys only (the scheme before this round)."""
    material = b"\0".join(hashlib.sha256(k.encode()).digest() for k in sorted([ADMIN_KEY, OTHER_ADMIN_KEY]))
    secret = hashlib.sha256(b"offload-console-session\0" + material).digest()
    return _b64(hmac.new(secret, payload.encode(), hashlib.sha256).digest()[:24])


async def test_an_anonymous_cookie_cannot_confirm_a_guessed_admin_key(tmp_path: Path) -> None:
    async with console_client(make_config(f"sqlite:///{tmp_path}/u.db")) as client:
        page = await client.get(f"{BASE}/login")
        assert page.status_code == 200
        cookie = client.cookies.get("offload_console", path=BASE)
        assert cookie
        payload, _, mac = cookie.partition(".")
        # Even the right key does not reproduce the MAC: the random secret is missing.
        assert mac != _mac_from_admin_keys_alone(payload)


async def test_the_secret_is_kept_private_and_survives_a_restart(tmp_path: Path) -> None:
    config = make_config(f"sqlite:///{tmp_path}/u.db")
    old = os.umask(0o022)
    try:
        async with console_client(config) as client:
            assert (await login(client)).status_code == 303
            cookie = client.cookies.get("offload_console", path=BASE)
    finally:
        os.umask(old)
    kept = tmp_path / SECRET_FILE
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    async with console_client(config) as restarted:  # a new process, the same config and files
        restarted.cookies.set("offload_console", cookie or "", path=BASE)
        assert (await restarted.get(f"{BASE}/month")).status_code == 200


async def test_replicas_sharing_a_configured_secret_share_sessions(tmp_path: Path) -> None:
    def replica(folder: str) -> object:
        raw = make_config(f"sqlite:///{tmp_path}/{folder}.db").model_dump(mode="json", exclude_none=True)
        raw["auth"]["console_secret"] = "${OFFLOAD_CONSOLE_SECRET}"
        return parse_config(raw, env={"OFFLOAD_CONSOLE_SECRET": "s" * 40})

    async with console_client(replica("a")) as first:  # type: ignore[arg-type]
        assert (await login(first)).status_code == 303
        cookie = first.cookies.get("offload_console", path=BASE)
    async with console_client(replica("b")) as second:  # type: ignore[arg-type]
        second.cookies.set("offload_console", cookie or "", path=BASE)
        assert (await second.get(f"{BASE}/month")).status_code == 200
    assert not (tmp_path / SECRET_FILE).exists()  # configured: nothing written


async def test_failed_logins_lock_the_address_out_without_checking_the_key(tmp_path: Path) -> None:
    config = make_config(f"sqlite:///{tmp_path}/u.db")
    async with console_client(config, peer="10.0.0.7") as guesser:
        statuses = [(await login(guesser, f"sk-guess-{i}")).status_code for i in range(8)]
        assert statuses[:5] == [401] * 5
        assert statuses[5:] == [429] * 3
        # Locked: the right key is refused as well (no oracle), with a Retry-After.
        r = await login(guesser)
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
        assert (await guesser.get(f"{BASE}/month")).status_code == 303
        # Guessing through the key header is counted against the same address.
        r = await guesser.get(f"{BASE}/month", headers={"authorization": f"Bearer {ADMIN_KEY}"})
        assert r.status_code == 429
    async with console_client(config, peer="10.0.0.8") as colleague:  # another address is not slowed
        assert (await login(colleague)).status_code == 303


def test_the_lockout_doubles_and_a_success_forgets() -> None:
    now = [1000.0]
    throttle = LoginThrottle(free_failures=3, base_wait_s=1.0, max_wait_s=8.0, clock=lambda: now[0])
    for _ in range(3):
        assert throttle.wait_s("a") == 0
        throttle.failed("a")
    assert throttle.wait_s("a") == pytest.approx(1.0)
    now[0] += 1.0
    assert throttle.wait_s("a") == 0
    throttle.failed("a")
    assert throttle.wait_s("a") == pytest.approx(2.0)
    for _ in range(5):
        throttle.failed("a")
    assert throttle.wait_s("a") == pytest.approx(8.0)  # capped
    throttle.succeeded("a")
    assert throttle.wait_s("a") == 0


def test_old_failures_are_forgotten_and_the_map_is_bounded() -> None:
    now = [0.0]
    throttle = LoginThrottle(free_failures=1, window_s=60.0, capacity=3, clock=lambda: now[0])
    throttle.failed("a")
    assert throttle.wait_s("a") > 0
    now[0] += 61.0
    assert throttle.wait_s("a") == 0  # the window passed without a failure
    for address in ("b", "c", "d", "e"):
        throttle.failed(address)
    assert throttle.wait_s("b") == 0  # the oldest address went first
    assert throttle.wait_s("e") > 0


async def test_logout_revokes_the_session_and_every_copy_of_its_cookie(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/u.db"
    seed(url, traffic())
    async with console_client(make_config(url)) as client:
        assert (await login(client)).status_code == 303
        copied = client.cookies.get("offload_console", path=BASE)
        page = await client.get(f"{BASE}/labels")
        r = await client.post(f"{BASE}/logout", data={"csrf": csrf_of(page.text)}, headers=ORIGIN)
        assert r.status_code == 303
        client.cookies.set("offload_console", copied or "", path=BASE)
        r = await client.get(f"{BASE}/month")
        assert r.status_code == 303 and r.headers["location"].startswith(f"{BASE}/login")
        # Logging in again gives a new, working session.
        client.cookies.clear()
        assert (await login(client)).status_code == 303
        assert (await client.get(f"{BASE}/month")).status_code == 200
