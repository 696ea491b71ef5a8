"""Configuration: YAML plus environment, validated once at start-up.

``${VAR}`` and ``${VAR:-default}`` are replaced from the environment before
validation. A secret whose variable is unset does not stop the proxy: the
backend (or client key) that needs it is marked unconfigured and names the
variable, so a fresh machine starts and serves whatever it can. Any other
problem raises :class:`ConfigError` with one line that names the key.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from classifier.model import DEFAULT_ROUTES, INTENTS

# Where the config is looked for when none is named: relative to the working directory, where
# a checkout has it and `offload init` writes it (router/init.py). Never beside the
# package: an installed wheel has no config/ folder.
DEFAULT_CONFIG_PATH = Path("config") / "router.yaml"
NO_CONFIG = (
    "no config file: pass --config PATH, set OFFLOAD_CONFIG, "
    "or run `offload init` to write a starter config/router.yaml here"
)

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
    # Before a request's headers are complete the client is anonymous: these bound what
    # it may hold (router/server.py). A connection that has not sent its whole request
    # head this long after connecting (or after its previous response) is closed.
    header_timeout_s: float = Field(10.0, gt=0)
    max_header_bytes: int = Field(32 * 1024, ge=1024)  # request line and headers; 431 past it
    max_headers: int = Field(100, gt=0)  # 431 past it
    # Open client connections; at the cap a new one displaces the longest-idle
    # connection that is between requests, else it is refused. Lowered at start to
    # what the descriptor limit (RLIMIT_NOFILE) leaves room for.
    max_connections: int = Field(4096, gt=0)
    # tokens_per_minute: the output tokens reserved at admission for a request that
    # names no max_tokens (router/limits.py); its real usage replaces them at the end.
    reserve_output_tokens: int = Field(1024, ge=0)


class DatabaseConfig(_Strict):
    url: str = "sqlite:///offload.db"
    store_text: bool = False  # prompt/completion text is never stored unless this is on
    batch_size: int = Field(500, gt=0)
    flush_interval_s: float = Field(1.0, gt=0)
    queue_max: int = Field(50_000, gt=0)
    spool_path: str = "offload-spool.jsonl"
    enabled: bool = True
    # Answered rows are appended to a journal next to the spool this often (one
    # write, no fsync) until committed: a SIGKILL or OOM kill loses at most the
    # rows of the last interval (docs/operations.md). Off: up to flush_interval_s.
    journal: bool = True
    journal_interval_s: float = Field(0.05, gt=0, le=10)

    @field_validator("url")
    @classmethod
    def _supported(cls, url: str) -> str:
        """SQLite or PostgreSQL through a driver that is installed, checked now: at the
        first insert it would be a traceback. The message never repeats the URL (it may
        hold a password)."""
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError, NoSuchModuleError

        try:
            parsed = make_url(url)
        except ArgumentError:
            raise ValueError(f"not a database URL; use {_DB_URLS}") from None
        if parsed.get_backend_name() not in ("sqlite", "postgresql"):
            raise ValueError(f"{parsed.get_backend_name()!r} is not supported; use {_DB_URLS}")
        try:
            parsed.get_dialect().import_dbapi()
        except (NoSuchModuleError, ImportError):
            raise ValueError(f"driver {parsed.drivername!r} is not installed; use {_DB_URLS}") from None
        return url


_DB_URLS = "sqlite:///PATH or postgresql+psycopg://USER:PASSWORD@HOST/DB"


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


# The APIs each kind of backend serves natively unless its `apis` says otherwise.
APIS = ("chat", "completions", "embeddings", "responses", "messages")
KIND_APIS: dict[str, tuple[str, ...]] = {
    "vllm": APIS,
    "openai": ("chat", "completions", "embeddings", "responses"),
    "anthropic": ("messages",),
}


class BackendConfig(_Strict):
    kind: Literal["vllm", "openai", "anthropic"]
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
    apis: list[str] | None = None  # the APIs served; default by kind (KIND_APIS)
    # Forward the client's own model name when it is not one the proxy knows (Claude
    # Code's claude-* names to an Anthropic backend) instead of `model`.
    keep_client_model: bool = False
    # Thinking: "client" honours the client's explicit request (reasoning_effort,
    # reasoning.effort, thinking), else extra_body's default; "on"/"off" decide.
    thinking: Literal["client", "on", "off"] = "client"
    # Responses' max_output_tokens when the client sent none. vLLM would otherwise
    # generate up to the whole remaining context (Codex never sends one).
    max_output_tokens: int | None = Field(None, gt=0)
    anthropic_version: str = "2023-06-01"  # sent upstream when the client sent none (anthropic kind)
    # The most a non-streamed answer may hold in memory; past it the client gets a 502.
    max_response_bytes: int = Field(64 * 1024 * 1024, gt=0)
    # A variant is the same server with other settings (local-thinking: local with thinking
    # on): it inherits the named backend's keys and shares its endpoints' capacity.
    variant_of: str | None = None

    @model_validator(mode="after")
    def _has_endpoint(self) -> BackendConfig:
        if not self.base_url and not self.endpoints:
            raise ValueError("needs base_url or endpoints")
        for url in self.urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"url {url!r} must start with http:// or https://")
        for api in self.apis or ():
            if api not in APIS:
                raise ValueError(f"apis: unknown API {api!r}; known: {', '.join(APIS)}")
        return self

    @property
    def urls(self) -> list[str]:
        """Each endpoint's base URL, ending in /v1 for every kind (Anthropic's is often
        given as the host root)."""
        found = [u.rstrip("/") for u in (list(self.endpoints) or [self.base_url or ""])]
        if self.kind == "anthropic":
            found = [u if u.endswith("/v1") else u + "/v1" for u in found]
        return found

    @property
    def served_apis(self) -> tuple[str, ...]:
        return tuple(self.apis) if self.apis is not None else KIND_APIS[self.kind]

    @property
    def route_name(self) -> str:
        return self.route or ("local" if self.kind == "vllm" else "cloud")

    @property
    def accepts_media(self) -> bool:
        return self.multimodal if self.multimodal is not None else self.kind != "vllm"

    @property
    def output_cap(self) -> int | None:
        """max_output_tokens as set, else 32,768 for vLLM (a bound, not a budget), else none."""
        if self.max_output_tokens is not None:
            return self.max_output_tokens
        return 32768 if self.kind == "vllm" else None


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


_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


class StateConfig(_Strict):
    """State the replicas share through Redis (router/shared.py): in-flight slots per
    endpoint, per-key limits and response ids. Without a ``state:`` key everything is
    counted in process, as one replica always has."""

    redis_url: str
    # How many replicas share each endpoint: while Redis is away each one falls back to
    # max_concurrency // replicas of it, so together they still fit the box.
    replicas: int = Field(gt=0)
    key_prefix: str = Field("offload", pattern=r"^[A-Za-z0-9_.:-]{1,64}$")
    # Every Redis call on the request path gives up after this long (then: fallback).
    timeout_ms: float = Field(50.0, gt=0, le=5000)
    # A slot lease lives this long unless renewed (three times per TTL while its request
    # runs): what a replica that died without releasing holds, at most.
    lease_ttl_s: float = Field(10.0, ge=0.3, le=600)
    # While Redis is away, a PING this often brings shared state back.
    probe_interval_s: float = Field(1.0, gt=0, le=60)
    response_ids_ttl_s: int = Field(86400, gt=0)

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, url: str) -> str:
        """A URL redis-py understands. The message never repeats it (it may hold a password)."""
        if not url.startswith(_REDIS_SCHEMES):
            raise ValueError("must start with redis://, rediss:// or unix://")
        return url


class RuleMatch(_Strict):
    """What a routing rule matches on; every condition given must hold."""

    client: str | list[str] | None = None  # client key name(s)
    header: dict[str, str] | None = None  # header name → exact value
    model: str | list[str] | None = None  # the model the client asked for, exactly
    system_contains: str | None = None
    system_regex: str | None = None
    tools: bool | None = None  # tools offered (true) or not (false)

    @field_validator("system_regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return value


class RuleConfig(_Strict):
    """A team rule (routing.rules): checked before the classifier, reason ``rule:<name>``."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    match: RuleMatch
    route: str | None = None  # give exactly one of route, backend, intent
    backend: str | None = None
    intent: str | None = None

    @model_validator(mode="after")
    def _one_target(self) -> RuleConfig:
        given = [k for k in ("route", "backend", "intent") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of route, backend or intent")
        if self.intent is not None and self.intent not in INTENTS:
            raise ValueError(f"unknown intent {self.intent!r}; known: {', '.join(INTENTS)}")
        if not self.match.model_fields_set:
            raise ValueError("match: give at least one condition")
        return self


class ShadowArm(_Strict):
    arm: str  # the local backend (or variant) that answers the copy
    rate: float = Field(1.0, gt=0, le=1)  # the share of this intent's cloud-bound requests copied


class ShadowRunsConfig(_Strict):
    """Idle shadow runs: copies of cloud-bound requests answered by a local arm in the
    background, while the box has slots to spare, to learn whether it could take them."""

    enabled: bool = True  # also switched at run time: POST /offload/state {"shadow_runs": false}
    intents: dict[str, ShadowArm] = {}
    # Never take the last this-many free slots: with 32, copies start only while fewer than
    # 8 are in use. Real traffic takes a copy's slot back at once anyway.
    reserve_slots: int = Field(24, ge=0)
    max_per_minute: int = Field(60, gt=0)  # per process
    max_text_bytes: int = Field(65536, gt=0)  # of a stored shadow answer (database.store_text)
    max_output_tokens: int = Field(8192, gt=0)  # a copy without its own bound gets this one


class RoutingConfig(_Strict):
    default: str = "local"
    # intent → a backend or route, or arms by weight ({cloud: 90, local-thinking: 10}): each
    # conversation sticks to one arm.
    # Default: the classifier's own table (classifier.model.DEFAULT_ROUTES).
    intents: dict[str, str | dict[str, float]] = Field(
        default_factory=lambda: dict[str, str | dict[str, float]](DEFAULT_ROUTES)
    )
    fallbacks: dict[str, list[str]] = {}
    mode: Literal["route", "shadow"] = "route"
    shadow_backend: str | None = None  # in shadow mode everything goes here
    confidence_floor: float = Field(0.5, ge=0, le=1)
    classifier_weights: str | None = None  # path; default: the packaged weights
    # Below confidence_floor: "route" (the route whose intents hold more probability: the
    # fewest misroutes, measured in bench/README.md), "default" (routing.default), "intent"
    # (the top intent anyway) or "cloud" (pay rather than risk the weak model).
    low_confidence: Literal["route", "default", "intent", "cloud"] = "route"
    # A tool-loop turn: "task" takes the decision of the conversation up to its last user
    # turn; "call_id" keeps the loop where its tool-call ids say it started (weak evidence).
    tool_loops: Literal["task", "call_id"] = "task"
    rules: list[RuleConfig] = []
    shadow_runs: ShadowRunsConfig = ShadowRunsConfig()
    capacity: CapacityConfig = CapacityConfig()

    @field_validator("intents", "shadow_runs")
    @classmethod
    def _known_intents(cls, value: Any) -> Any:
        named = value.intents if isinstance(value, ShadowRunsConfig) else value
        unknown = sorted(set(named) - set(INTENTS))
        if unknown:
            raise ValueError(f"unknown intent {unknown[0]!r}; known: {', '.join(INTENTS)}")
        for intent, target in value.items() if isinstance(value, dict) else ():
            if isinstance(target, dict) and (not target or any(w <= 0 for w in target.values())):
                raise ValueError(f"{intent}: give each arm a positive weight")
        return value


class ReportConfig(_Strict):
    # The unit of every price and hardware cost in this config: shown wherever money is.
    currency: str = Field("USD", pattern=r"^[A-Za-z$€£¥]{1,8}$")


class Config(_Strict):
    server: ServerConfig = ServerConfig()
    database: DatabaseConfig = DatabaseConfig()
    auth: AuthConfig = AuthConfig()
    backends: dict[str, BackendConfig]
    routing: RoutingConfig = RoutingConfig()
    health: HealthConfig = HealthConfig()
    state: StateConfig | None = None  # shared by the replicas through Redis
    report: ReportConfig = ReportConfig()

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, raw: Any) -> Any:
        """A variant's keys over its server's (``extra_body`` merged key by key)."""
        backends = raw.get("backends") if isinstance(raw, dict) else None
        if not isinstance(backends, dict):
            return raw
        resolved = {}
        for name, backend in backends.items():
            parent_name = backend.get("variant_of") if isinstance(backend, dict) else None
            resolved[name] = (
                backend if parent_name is None else _variant(name, backend, backends.get(parent_name))
            )
        return {**raw, "backends": resolved}

    @model_validator(mode="after")
    def _references_exist(self) -> Config:
        names = set(self.backends)
        if not names:
            raise ValueError("backends: at least one backend is required")
        refs: list[tuple[str, str]] = [("routing.default", self.routing.default)]
        # The built-in intent table names routes; a one-backend config may lack one.
        if "intents" in self.routing.model_fields_set:
            for intent, target in self.routing.intents.items():
                arms = list(target) if isinstance(target, dict) else [target]
                refs += [(f"routing.intents.{intent}", arm) for arm in arms]
        for intent, shadow in self.routing.shadow_runs.intents.items():
            refs.append((f"routing.shadow_runs.intents.{intent}.arm", shadow.arm))
        for src, targets in self.routing.fallbacks.items():
            refs.append((f"routing.fallbacks.{src}", src))
            refs += [(f"routing.fallbacks.{src}", t) for t in targets]
        if self.routing.shadow_backend:
            refs.append(("routing.shadow_backend", self.routing.shadow_backend))
        for i, rule in enumerate(self.routing.rules):
            rule_target = rule.route or rule.backend
            if rule_target is not None:
                refs.append((f"routing.rules[{i}] ({rule.name})", rule_target))
        rule_names = [rule.name for rule in self.routing.rules]
        if len(set(rule_names)) != len(rule_names):
            raise ConfigError("routing.rules: rule names must be unique")
        for key, name in refs:
            if self.backend_for_route(name) is None:
                raise ConfigError(f"{key}: unknown backend {name!r} (configured: {', '.join(sorted(names))})")
        if self.routing.mode == "shadow" and not self.routing.shadow_backend:
            raise ConfigError("routing.shadow_backend: required when routing.mode is shadow")
        return self

    def intent_backends(self) -> dict[str, str]:
        """intent → backend name, with routes (local/cloud) resolved; a split intent gives
        its heaviest arm (where the intent mostly goes)."""
        default = self.resolve(self.routing.default)
        return {i: self.backend_for_route(_heaviest(r)) or default for i, r in self.routing.intents.items()}

    def intent_splits(self) -> dict[str, list[tuple[str, float]]]:
        """intent → its arms as ``(backend, cumulative share)`` for the intents split by weight."""
        splits = {}
        for intent, target in self.routing.intents.items():
            if isinstance(target, dict):
                total, running, arms = sum(target.values()), 0.0, []
                for name, weight in target.items():
                    running += weight / total
                    arms.append((self.resolve(name), running))
                splits[intent] = arms
        return splits

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


def _heaviest(target: str | dict[str, float]) -> str:
    return max(target, key=target.__getitem__) if isinstance(target, dict) else target


# What makes a server: a variant takes these from the backend it is a variant of.
_SERVER_KEYS = ("kind", "base_url", "endpoints", "api_key", "max_concurrency", "route", "recipe", "hardware")


def _variant(name: str, variant: dict[str, Any], parent: Any) -> dict[str, Any]:
    where = f"backends.{name}.variant_of"
    if not isinstance(parent, dict):
        raise ConfigError(f"{where}: unknown backend {variant['variant_of']!r}")
    if parent.get("variant_of") is not None:
        raise ConfigError(
            f"{where}: {variant['variant_of']!r} is itself a variant; name the server's backend"
        )
    own_server = [key for key in _SERVER_KEYS if key in variant]
    if own_server:
        raise ConfigError(
            f"backends.{name}.{own_server[0]}: a variant shares its server's (remove it, or drop variant_of)"
        )
    # The hardware is the server's: counted once, with the server's own backend.
    merged = {**{k: v for k, v in parent.items() if k not in ("variant_of", "hardware")}, **variant}
    extra = {**(parent.get("extra_body") or {}), **(variant.get("extra_body") or {})}
    for key, value in (parent.get("extra_body") or {}).items():
        mine = (variant.get("extra_body") or {}).get(key)
        if isinstance(value, dict) and isinstance(mine, dict):
            extra[key] = {**value, **mine}
    if extra:
        merged["extra_body"] = extra
    return merged


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


def env_references(text: str) -> dict[str, str | None]:
    """The ``${VAR}`` / ``${VAR:-default}`` a config text reads, in order: ``{VAR: default or None}``."""
    found: dict[str, str | None] = {}
    for m in _ENV_REF.finditer(text):
        found.setdefault(m.group(1), m.group(2))
    return found


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


# What a config or recipe file may cost to load. Real ones are a few KB with a
# handful of anchors; these bounds refuse /dev/zero, a file the size of a disk and
# an alias bomb (a few lines whose aliases expand to billions of nodes) in
# milliseconds, before anything walks the expanded tree.
MAX_YAML_BYTES = 1024 * 1024
MAX_YAML_NODES = 100_000  # nodes with every alias expanded
MAX_YAML_DEPTH = 64
# The classifier weights file: the packaged one is about 1.3 MB.
MAX_WEIGHTS_BYTES = 64 * 1024 * 1024

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _Refused(Exception):
    def __init__(self, message: str, node: yaml.Node) -> None:
        super().__init__(message)
        self.line = node.start_mark.line + 1


def read_bounded(file: Path, limit: int) -> bytes:
    """A regular file's bytes, refusing devices, FIFOs and anything over ``limit``.

    Raises OSError with a one-line ``strerror``."""
    with open(file, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit:,} bytes")
    return data


def read_yaml(file: Path, what: str, error: type[ConfigError] = ConfigError) -> Any:
    """A YAML file's contents; ``error`` names the file (and line) when it can't be had.

    Safe types only, and bounded (:data:`MAX_YAML_BYTES`, :data:`MAX_YAML_NODES`
    with aliases expanded, :data:`MAX_YAML_DEPTH`); a key given twice in one
    mapping is an error rather than the silent last-one-wins of YAML loaders.
    """
    try:
        text = read_bounded(file, MAX_YAML_BYTES).decode()
    except OSError as exc:
        raise error(f"cannot read {what} {file}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise error(f"cannot read {what} {file}: not UTF-8 text") from None
    try:
        return _load_yaml(text)
    except _Refused as exc:
        raise error(f"{file} line {exc.line}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise error(f"{file}{where}: not valid YAML") from None


def _load_yaml(text: str) -> Any:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_tree(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _check_tree(root: yaml.Node) -> None:
    """Refuse, before constructing anything, a tree that is too big once its aliases are
    expanded, too deep, recursive, or that gives a mapping key twice.

    One walk over the distinct nodes (an alias is a second edge to the same node), with
    each node's expanded size memoised: linear in the file, whatever it expands to.
    """
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, finished = stack.pop()
        key = id(node)
        if finished:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in _children(node))
            if size[key] > MAX_YAML_NODES:
                raise _Refused(f"refused: its aliases expand to more than {MAX_YAML_NODES:,} values", node)
            continue
        if key in size:
            continue
        if key in on_path:
            raise _Refused("refused: an alias refers to its own anchor", node)
        if depth > MAX_YAML_DEPTH:
            raise _Refused(f"refused: nested deeper than {MAX_YAML_DEPTH} levels", node)
        if isinstance(node, yaml.MappingNode):
            _check_keys(node)
        on_path.add(key)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in _children(node) if id(child) not in size)


def _check_keys(node: yaml.MappingNode) -> None:
    seen: set[tuple[str, str]] = set()
    for key, _value in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE_TAG:
            continue  # "<<: *base" merges are meant to be overridden
        if (key.tag, key.value) in seen:
            raise _Refused(f"duplicate key {key.value!r}", key)
        seen.add((key.tag, key.value))


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Read, substitute and validate the config at ``path`` (or OFFLOAD_CONFIG)."""
    file = config_path(path)
    config = parse_config(read_yaml(file, "config"))
    _check_classifier_weights(config.routing.classifier_weights)
    if any(b.recipe for b in config.backends.values()):
        # The serving recipe decides max_concurrency and context_window, so the
        # router and the vLLM server never disagree. (Imported here: it imports us.)
        from router.recipe import apply_recipes

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
