"""Configuration: YAML plus environment, validated once at start-up.

``${VAR}`` and ``${VAR:-default}`` are replaced from the environment before
validation. A secret whose variable is unset does not stop the proxy: the
backend (or client key) that needs it is marked unconfigured and names the
variable, so a fresh machine starts and serves whatever it can. Any other
problem raises :class:`ConfigError` with one line that names the key.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

DEFAULT_CONFIG_PATH = Path(__file__).resolve().parent.parent / "config" / "router.yaml"
INTENTS = ("coding", "tools", "instruction", "math", "reasoning", "writing")

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")


class ConfigError(Exception):
    """A bad configuration. The message is one line naming the key."""


class MissingEnv(str):
    """Placeholder left where a ``${VAR}`` had no value and no default."""

    var: str

    def __new__(cls, var: str) -> MissingEnv:
        obj = super().__new__(cls, "")
        obj.var = var
        return obj


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerConfig(_Strict):
    host: str = "127.0.0.1"
    port: int = Field(8080, ge=0, le=65535)
    # A full 262,144-token context is about 1 MB of text; JSON escaping and
    # tool schemas can double it, so allow generous room.
    max_body_bytes: int = Field(8 * 1024 * 1024, gt=0)
    max_json_depth: int = Field(64, gt=0)
    max_messages: int = Field(10_000, gt=0)
    # Seconds to receive a whole request body; a stalled or trickling client gets 408.
    body_read_timeout_s: float = Field(60.0, gt=0)
    # Seconds to let in-flight requests finish after SIGTERM.
    shutdown_grace_s: float = Field(30.0, ge=0)


class DatabaseConfig(_Strict):
    url: str = "sqlite:///offload.db"
    store_text: bool = False  # prompt/completion text is never stored unless this is on
    batch_size: int = Field(500, gt=0)
    flush_interval_s: float = Field(1.0, gt=0)
    queue_max: int = Field(50_000, gt=0)
    spool_path: str = "offload-spool.jsonl"
    enabled: bool = True


class ClientKey(_Strict):
    name: str
    key: str | None = None
    key_env: str | None = None  # set when ${VAR} was unset: the key is disabled
    routes: list[str] | None = None  # restrict this key to these routes/backends
    requests_per_minute: int | None = Field(None, gt=0)
    tokens_per_minute: int | None = Field(None, gt=0)


class AuthConfig(_Strict):
    keys: list[ClientKey] = []
    admin_keys: list[ClientKey] = []


class Price(_Strict):
    input_per_mtok: float = Field(0.0, ge=0)
    output_per_mtok: float = Field(0.0, ge=0)
    cached_input_per_mtok: float | None = Field(None, ge=0)


class Hardware(_Strict):
    """What the local box costs, for the monthly net-offload figure."""

    cost: float = Field(0.0, ge=0)
    amortisation_months: int = Field(36, gt=0)
    watts: float = Field(0.0, ge=0)
    price_per_kwh: float = Field(0.0, ge=0)


class Timeouts(_Strict):
    connect_s: float = Field(2.0, gt=0)
    # Streams: no first SSE byte within this long → try the fallback.
    first_byte_s: float = Field(60.0, gt=0)
    # Longest silence tolerated once a response is flowing.
    read_s: float = Field(600.0, gt=0)


class BackendConfig(_Strict):
    kind: Literal["vllm", "openai"]
    base_url: str | None = None
    endpoints: list[str] = []  # several servers in one backend (several Sparks)
    model: str
    api_key: str | None = None
    api_key_env: str | None = None  # set when ${VAR} was unset: backend unconfigured
    route: Literal["local", "cloud"] | None = None  # default: vllm → local, openai → cloud
    max_concurrency: int | None = Field(None, gt=0)
    context_window: int | None = Field(None, gt=0)
    extra_body: dict[str, Any] = {}
    multimodal: bool | None = None  # default: vllm text-only, openai multimodal
    embeddings_model: str | None = None  # this backend serves /v1/embeddings with this model
    price: Price = Price()
    hardware: Hardware | None = None
    timeouts: Timeouts = Timeouts()
    recipe: str | None = None  # path to a vLLM recipe file (config/laguna-spark.yaml)

    @model_validator(mode="after")
    def _has_endpoint(self) -> BackendConfig:
        if not self.base_url and not self.endpoints:
            raise ValueError("needs base_url or endpoints")
        for url in self.urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"url {url!r} must start with http:// or https://")
        return self

    @property
    def urls(self) -> list[str]:
        found = list(self.endpoints) or [self.base_url or ""]
        return [u.rstrip("/") for u in found]

    @property
    def route_name(self) -> str:
        return self.route or ("local" if self.kind == "vllm" else "cloud")

    @property
    def accepts_media(self) -> bool:
        return self.multimodal if self.multimodal is not None else self.kind == "openai"


class CapacityConfig(_Strict):
    policy: Literal["spill", "queue"] = "spill"
    queue_timeout_s: float = Field(5.0, ge=0)
    # vLLM /metrics scrape interval for num_requests_waiting and friends.
    metrics_interval_s: float = Field(2.0, gt=0)


class HealthConfig(_Strict):
    interval_s: float = Field(5.0, gt=0)
    cloud_interval_s: float = Field(60.0, gt=0)
    probe_cloud: bool = False  # cloud: passive detection only unless turned on
    failure_threshold: int = Field(3, gt=0)
    open_s: float = Field(10.0, gt=0)  # breaker stays open this long before one half-open trial request
    probe_timeout_s: float = Field(2.0, gt=0)


class RoutingConfig(_Strict):
    default: str = "local"
    intents: dict[str, str] = {
        "coding": "local",
        "tools": "local",
        "instruction": "local",
        "math": "cloud",
        "reasoning": "cloud",
        "writing": "cloud",
    }
    fallbacks: dict[str, list[str]] = {}
    mode: Literal["route", "shadow"] = "route"
    shadow_backend: str | None = None  # in shadow mode everything goes here
    confidence_floor: float = Field(0.5, ge=0, le=1)
    classifier_weights: str | None = None  # path; default: the packaged weights
    capacity: CapacityConfig = CapacityConfig()

    @field_validator("intents")
    @classmethod
    def _known_intents(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(value) - set(INTENTS))
        if unknown:
            raise ValueError(f"unknown intent {unknown[0]!r}; known: {', '.join(INTENTS)}")
        return value


class Config(_Strict):
    server: ServerConfig = ServerConfig()
    database: DatabaseConfig = DatabaseConfig()
    auth: AuthConfig = AuthConfig()
    backends: dict[str, BackendConfig]
    routing: RoutingConfig = RoutingConfig()
    health: HealthConfig = HealthConfig()

    @model_validator(mode="after")
    def _references_exist(self) -> Config:
        names = set(self.backends)
        if not names:
            raise ValueError("backends: at least one backend is required")
        refs: list[tuple[str, str]] = [("routing.default", self.routing.default)]
        # The built-in intent table names routes; a one-backend config may lack one.
        if "intents" in self.routing.model_fields_set:
            refs += [(f"routing.intents.{k}", v) for k, v in self.routing.intents.items()]
        for src, targets in self.routing.fallbacks.items():
            refs.append((f"routing.fallbacks.{src}", src))
            refs += [(f"routing.fallbacks.{src}", t) for t in targets]
        if self.routing.shadow_backend:
            refs.append(("routing.shadow_backend", self.routing.shadow_backend))
        for key, name in refs:
            if self.backend_for_route(name) is None:
                raise ConfigError(f"{key}: unknown backend {name!r} (configured: {', '.join(sorted(names))})")
        if self.routing.mode == "shadow" and not self.routing.shadow_backend:
            raise ConfigError("routing.shadow_backend: required when routing.mode is shadow")
        return self

    def intent_backends(self) -> dict[str, str]:
        """intent → backend name, with routes (local/cloud) resolved."""
        default = self.resolve(self.routing.default)
        return {i: self.backend_for_route(r) or default for i, r in self.routing.intents.items()}

    def resolve(self, name: str) -> str:
        """A backend name for a backend name or route alias known to exist."""
        found = self.backend_for_route(name)
        assert found is not None, name  # checked at validation
        return found

    def backend_for_route(self, route: str) -> str | None:
        """The backend that an alias (``local``/``cloud``) or backend name means."""
        return self.route_table().get(route)

    def route_table(self) -> dict[str, str]:
        """Every name that may stand for a backend → that backend: each backend's own name,
        and each route alias for the first backend with that route (a name beats an alias).
        Built on demand: the request path keeps its own copy (Policy)."""
        table: dict[str, str] = {}
        for name, backend in self.backends.items():
            table.setdefault(backend.route_name, name)
        table.update((name, name) for name in self.backends)
        return table

    def fallback_chain(self, first: str) -> list[str]:
        """``first``, then the backends its traffic falls back to, in order, each once
        (``routing.fallbacks`` keyed by the backend's name, else by its route)."""
        fallbacks = self.routing.fallbacks
        chain = [first]
        for target in fallbacks.get(first, fallbacks.get(self.backends[first].route_name, [])):
            name = self.resolve(target)
            if name not in chain:
                chain.append(name)
        return chain


# ---------------------------------------------------------------- loading


def substitute_env(value: Any, env: dict[str, str] | os._Environ[str] = os.environ) -> Any:
    """Replace ``${VAR}`` / ``${VAR:-default}`` in every string of a YAML tree."""
    if isinstance(value, dict):
        return {k: substitute_env(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute_env(v, env) for v in value]
    if not isinstance(value, str) or "${" not in value:
        return value
    whole = _ENV_REF.fullmatch(value)
    if whole:
        var, default = whole.group(1), whole.group(2)
        got = env.get(var)
        if got:
            return got
        return default if default is not None else MissingEnv(var)

    missing: list[str] = []

    def repl(m: re.Match[str]) -> str:
        got = env.get(m.group(1))
        if got:
            return got
        if m.group(2) is not None:
            return m.group(2)
        missing.append(m.group(1))
        return ""

    out = _ENV_REF.sub(repl, value)
    return MissingEnv(missing[0]) if missing else out


def _secrets_to_markers(raw: dict[str, Any]) -> None:
    """Turn unset secrets into ``*_env`` fields; any other unset variable is an error."""
    for _name, backend in (raw.get("backends") or {}).items():
        if isinstance(backend, dict) and isinstance(backend.get("api_key"), MissingEnv):
            backend["api_key_env"] = backend.pop("api_key").var
    auth = raw.get("auth") or {}
    if isinstance(auth, dict):
        for section in ("keys", "admin_keys"):
            for entry in auth.get(section) or []:
                if isinstance(entry, dict) and isinstance(entry.get("key"), MissingEnv):
                    entry["key_env"] = entry.pop("key").var
    _reject_missing(raw, "")


def _reject_missing(value: Any, path: str) -> None:
    if isinstance(value, MissingEnv):
        raise ConfigError(f"{path}: environment variable {value.var} is not set")
    if isinstance(value, dict):
        for k, v in value.items():
            _reject_missing(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _reject_missing(v, f"{path}[{i}]")


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
    raw = substitute_env(raw, env)
    _secrets_to_markers(raw)
    try:
        return Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from None


def config_path(path: str | os.PathLike[str] | None = None) -> Path:
    return Path(path or os.environ.get("OFFLOAD_CONFIG") or DEFAULT_CONFIG_PATH)


def read_yaml(file: Path, what: str, error: type[ConfigError] = ConfigError) -> Any:
    """A YAML file's contents; ``error`` names the file (and line) when it can't be had."""
    try:
        text = file.read_text()
    except OSError as exc:
        raise error(f"cannot read {what} {file}: {exc.strerror}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise error(f"{file}{where}: not valid YAML") from None


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Read, substitute and validate the config at ``path`` (or OFFLOAD_CONFIG)."""
    file = config_path(path)
    config = parse_config(read_yaml(file, "config"))
    if any(b.recipe for b in config.backends.values()):
        # The serving recipe decides max_concurrency and context_window, so the
        # router and the vLLM server never disagree. (Imported here: it imports us.)
        from router.recipe import apply_recipes

        config = apply_recipes(config, file)
    return config
