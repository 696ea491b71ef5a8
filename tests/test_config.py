"""Configuration: one-line errors that name the key; secrets only from the environment."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from router.config import ConfigError, load_config, parse_config

BASE = {
    "backends": {
        "local": {"kind": "vllm", "base_url": "http://localhost:8888/v1", "model": "m"},
        "cloud": {
            "kind": "openai",
            "base_url": "https://api.openai.com/v1",
            "model": "g",
            "api_key": "${OPENAI_API_KEY}",
        },
    },
    "routing": {"fallbacks": {"local": ["cloud"]}},
}


def with_(path: str, value: object) -> dict:
    import copy

    raw = copy.deepcopy(BASE)
    node = raw
    keys = path.split(".")
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    node[keys[-1]] = value
    return raw


def test_shipped_configs_load_without_any_secret():
    config = load_config(Path("config/router.yaml"))
    assert config.backends["cloud"].api_key is None
    assert config.backends["cloud"].api_key_env == "OPENAI_API_KEY"
    assert config.backends["local"].extra_body == {"chat_template_kwargs": {"enable_thinking": False}}


def test_env_substitution_and_defaults():
    env = {"OPENAI_API_KEY": "sk-test", "MODEL": "gpt-x"}
    config = parse_config(with_("backends.cloud.model", "${MODEL:-gpt-5.1}"), env=env)
    assert config.backends["cloud"].model == "gpt-x"
    assert config.backends["cloud"].api_key == "sk-test"
    config = parse_config(with_("backends.cloud.model", "${MODEL:-gpt-5.1}"), env={})
    assert config.backends["cloud"].model == "gpt-5.1"


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("backends.local.max_concurrency", 0, "backends.local.max_concurrency:"),
        ("backends.local.kind", "tgi", "backends.local.kind:"),
        ("backends.local.colour", "blue", "backends.local.colour: unknown key"),
        ("routing.intents", {"poetry": "local"}, "routing.intents: unknown intent 'poetry'"),
        ("routing.default", "gpu2", "routing.default: unknown backend 'gpu2'"),
        ("routing.fallbacks", {"local": ["nowhere"]}, "routing.fallbacks.local: unknown backend 'nowhere'"),
        (
            "backends.local.model",
            "${UNSET_MODEL_VAR}",
            "backends.local.model: environment variable UNSET_MODEL_VAR",
        ),
        ("backends.local.base_url", "localhost:8888", "must start with http"),
        ("server.port", "eighty", "server.port:"),
    ],
)
def test_bad_config_names_the_key(path, value, expected):
    with pytest.raises(ConfigError) as caught:
        parse_config(with_(path, value), env={})
    message = str(caught.value)
    assert expected in message and "\n" not in message


def test_serve_refuses_a_bad_config_with_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "backends:\n  local: {kind: vllm, base_url: 'http://x/v1', model: m, max_concurrency: -1}\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "router.ops.cli", "serve", "--config", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "backends.local.max_concurrency" in result.stderr
    assert "Traceback" not in result.stderr


def test_unreadable_and_invalid_yaml(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("backends: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(broken)


def test_without_client_keys_serve_listens_on_loopback_only(tmp_path):
    import httpx

    from tests.harness import free_port, wait_until

    port = free_port()
    config = tmp_path / "open.yaml"
    config.write_text(
        "server: {host: 0.0.0.0}\ndatabase: {enabled: false}\n"
        "backends: {local: {kind: vllm, base_url: 'http://127.0.0.1:9/v1', model: m}}\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "router.ops.cli", "serve", "--config", str(config), "--port", str(port)],
        stderr=subprocess.PIPE,
        text=True,
    )

    def up() -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        assert wait_until(up, timeout=30)
        if shutil.which("ss"):
            bound = subprocess.run(["ss", "-ltn"], capture_output=True, text=True).stdout
            assert f"127.0.0.1:{port}" in bound and f"0.0.0.0:{port}" not in bound
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "no client key is configured: listening on 127.0.0.1 only" in err
