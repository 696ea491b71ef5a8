"""Configuration: YAML plus environment, validated once at start-up.

``${VAR}`` and ``${VAR:-default}`` are replaced from the environment before
validation. A secret whose variable is unset does not stop the proxy: the
backend (or client key) that needs it is marked unconfigured and names the
variable, so a fresh machine starts and serves whatever it can. Any other
problem raises :class:`ConfigError` with one line that names the key.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from router.config.env import MissingEnv, _secrets_to_markers, env_references, substitute_env
from router.config.files import MAX_WEIGHTS_BYTES, read_bounded, read_yaml
from router.config.keys import check_keys_apart, secret_sources
from router.config.model import Config
from router.config.sections import (
    APIS,
    INTENTS,
    KIND_APIS,
    AuthConfig,
    BackendConfig,
    CapacityConfig,
    ClientKey,
    ConfigError,
    DatabaseConfig,
    Hardware,
    HealthConfig,
    LoggingConfig,
    Price,
    ReportConfig,
    RoutingConfig,
    RuleConfig,
    RuleMatch,
    ServerConfig,
    ShadowArm,
    ShadowRunsConfig,
    StateConfig,
    SwitchCostConfig,
    Timeouts,
)

# Where the config is looked for when none is named: relative to the working directory, where
# a checkout has it and `offload init` writes it (router/ops/init.py). Never beside the
# package: an installed wheel has no config/ folder.
DEFAULT_CONFIG_PATH = Path("config") / "router.yaml"
NO_CONFIG = (
    "no config file: pass --config PATH, set OFFLOAD_CONFIG, "
    "or run `offload init` to write a starter config/router.yaml here"
)


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    key = ".".join(str(p) for p in first["loc"]) or "(top level)"
    msg = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        msg = "unknown key"
    return f"{key}: {msg}"


def parse_config(raw: Any, env: dict[str, str] | os._Environ[str] = os.environ) -> Config:
    """Validate an already-loaded YAML tree. Raises ConfigError naming the key."""
    if not isinstance(raw, dict):
        raise ConfigError("(top level): the config must be a mapping of keys")
    sources = secret_sources(raw)
    raw = substitute_env(raw, env)
    _secrets_to_markers(raw)
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from None
    check_keys_apart(config, sources)
    return config


def config_path(path: str | os.PathLike[str] | None = None) -> Path:
    """The config file: ``path`` (``--config``), else ``$OFFLOAD_CONFIG``, else ./config/router.yaml.

    Raises ConfigError saying how to get a config when none is named and there is
    no ./config/router.yaml. A named file that does not exist is reported when read.
    """
    if path:
        return Path(path)
    if os.environ.get("OFFLOAD_CONFIG"):
        return Path(os.environ["OFFLOAD_CONFIG"])
    if DEFAULT_CONFIG_PATH.exists():
        return DEFAULT_CONFIG_PATH
    raise ConfigError(NO_CONFIG)


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Read, substitute and validate the config at ``path`` (or OFFLOAD_CONFIG)."""
    file = config_path(path)
    config = parse_config(read_yaml(file, "config"))
    _check_classifier_weights(config.routing.classifier_weights)
    if any(b.recipe for b in config.backends.values()):
        # The serving recipe decides max_concurrency and context_window, so the
        # router and the vLLM server never disagree. (Imported here: only recipes need it.)
        from router.config.recipe import apply_recipes

        config = apply_recipes(config, file)
    return config


def _check_classifier_weights(path: str | None) -> None:
    """A configured weights file must load now: at the first request it would be a
    traceback. (The packaged weights are the install's business, not the config's.)"""
    if path is None:
        return
    key = "routing.classifier_weights"
    try:
        raw = read_bounded(Path(path), MAX_WEIGHTS_BYTES)
    except OSError as exc:
        raise ConfigError(f"{key}: cannot read {path}: {exc.strerror}") from None
    try:
        from classifier import IntentModel
    except ImportError:
        return  # no classifier package: every request takes routing.default anyway
    try:
        IntentModel.from_json(raw)
    except Exception as exc:
        reason = str(exc).splitlines()[0][:200] if isinstance(exc, ValueError) else type(exc).__name__
        raise ConfigError(f"{key}: {path} is not intent weights: {reason}") from None


__all__ = [
    "APIS",
    "DEFAULT_CONFIG_PATH",
    "INTENTS",
    "KIND_APIS",
    "NO_CONFIG",
    "AuthConfig",
    "BackendConfig",
    "CapacityConfig",
    "SwitchCostConfig",
    "ClientKey",
    "Config",
    "ConfigError",
    "DatabaseConfig",
    "Hardware",
    "HealthConfig",
    "LoggingConfig",
    "MissingEnv",
    "Price",
    "ReportConfig",
    "RoutingConfig",
    "RuleConfig",
    "RuleMatch",
    "ServerConfig",
    "ShadowArm",
    "ShadowRunsConfig",
    "StateConfig",
    "Timeouts",
    "config_path",
    "env_references",
    "load_config",
    "parse_config",
    "read_bounded",
    "read_yaml",
    "substitute_env",
]
