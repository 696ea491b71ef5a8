"""The config's sections (server, database, auth, backends, routing, ...): pydantic models,
strict (an unknown key is an error) and frozen, validated once at start-up."""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from classifier.model import DEFAULT_ROUTES, INTENTS
from router.redact import redact_urls


class ConfigError(Exception):
    """A bad configuration. The message is one line naming the key."""


# The shortest period of any background loop (flushes, journal, probes, scrapes): below it a
# loop would spin a core for nothing (1e-6 s once took 96 % of one), so it is a config error.
MIN_LOOP_S = 0.01


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
    # it may hold (router/edge/server.py). A connection that has not sent its whole request
    # head this long after connecting (or after its previous response) is closed.
    header_timeout_s: float = Field(10.0, gt=0)
    max_header_bytes: int = Field(32 * 1024, ge=1024)  # request line and headers; 431 past it
    max_headers: int = Field(100, gt=0)  # 431 past it
    # Open client connections; at the cap a new one displaces the longest-idle
    # connection that is between requests, else it is refused. Lowered at start to
    # what the descriptor limit (RLIMIT_NOFILE) leaves room for.
    max_connections: int = Field(4096, gt=0)
    # tokens_per_minute: the output tokens reserved at admission for a request that
    # names no max_tokens (router/edge/limits.py); its real usage replaces them at the end.
    reserve_output_tokens: int = Field(1024, ge=0)
    # /readyz answers anyone (load balancers, probes): backends' states and counts. Their
    # models and endpoint URLs only to an admin key, unless this is on.
    public_details: bool = False


class DatabaseConfig(_Strict):
    url: str = "sqlite:///offload.db"
    store_text: bool = False  # prompt/completion text is never stored unless this is on
    batch_size: int = Field(500, gt=0)
    flush_interval_s: float = Field(1.0, ge=MIN_LOOP_S)
    queue_max: int = Field(50_000, gt=0)
    spool_path: str = "offload-spool.jsonl"
    enabled: bool = True
    # Answered rows are appended to a journal next to the spool this often (one
    # write, no fsync) until committed: a SIGKILL or OOM kill loses at most the
    # rows of the last interval (docs/operations.md). Off: up to flush_interval_s.
    journal: bool = True
    journal_interval_s: float = Field(0.05, ge=MIN_LOOP_S, le=10)
    # PostgreSQL: the writer's longest wait for a lock, and for any one statement. Past
    # them a batch goes to the spool: a locked table never holds rows or a shutdown.
    lock_timeout_s: float = Field(3.0, gt=0, le=600)
    statement_timeout_s: float = Field(10.0, gt=0, le=3600)

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
    # The console cookies' signing secret (from the environment; share it between replicas).
    # Unset: a random one kept in console_secret_file (default: beside the SQLite database
    # or the spool), created 0600 on first start.
    console_secret: str | None = None
    console_secret_file: str | None = None


class Price(_Strict):
    input_per_mtok: float = Field(0.0, ge=0)
    output_per_mtok: float = Field(0.0, ge=0)
    # Unset: the provider's rule (router/ledger/prices.py): for kind anthropic 0.1 x input
    # (reads) and 1.25 x input (5-minute cache writes); for other kinds the input price.
    cached_input_per_mtok: float | None = Field(None, ge=0)
    cache_write_per_mtok: float | None = Field(None, ge=0)


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
    # The most one stream event may hold as it arrives; past it the stream ends as its API
    # ends a failure (a runaway upstream event must not take the proxy's memory).
    max_event_bytes: int = Field(16 * 1024 * 1024, gt=0)
    # vLLM only: drop Claude Code's per-request billing header block from the front of the
    # system prompt, which would otherwise defeat vLLM's prefix cache on every turn.
    strip_billing_header: bool = True
    # Admission by expected time to first token (router/forward/admission.py), vLLM backends
    # only: past max_ttft_s a cloud-eligible request spills (reason ttft), or when the KV cache
    # would overflow (reason kv); unset, admission counts request slots as before. The rates
    # are where learning starts; kv_tokens is the KV cache's size when vLLM's /metrics does
    # not say (vllm:cache_config_info); queue_tokens bounds the uncached tokens that may wait
    # (default: what the box prefills in two max_ttft_s).
    max_ttft_s: float | None = Field(None, gt=0)
    prefill_tps: float = Field(700.0, gt=0)
    decode_tps: float = Field(20.0, gt=0)
    kv_tokens: int | None = Field(None, gt=0)
    queue_tokens: int | None = Field(None, ge=0)
    # Several endpoints: each session sticks to the endpoint that holds its prefix cache,
    # new sessions placed by consistent hashing with bounded load (router/forward/affinity.py):
    # none is given an endpoint with affinity_load_factor times its share of requests in flight.
    affinity: bool = True
    affinity_load_factor: float = Field(1.25, ge=1)
    # A variant is the same server with other settings (local-thinking: local with thinking
    # on): it inherits the named backend's keys and shares its endpoints' capacity.
    variant_of: str | None = None
    # Set when the recipe is read (router.config.recipe.apply_recipes), not written by hand:
    # the digest of its `vllm serve` line, which `offload gate` stores beside its evidence.
    recipe_sha256: str | None = None

    @model_validator(mode="after")
    def _has_endpoint(self) -> BackendConfig:
        if not self.base_url and not self.endpoints:
            raise ValueError("needs base_url or endpoints")
        for url in self.urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"url {redact_urls(url)!r} must start with http:// or https://")
            parts = urlsplit(url)
            has_credentials = parts.username is not None or parts.password is not None
            if has_credentials and self.api_key and self.kind != "anthropic":
                # Both would be the Authorization header (Basic from the URL, Bearer from the
                # key): aiohttp refuses every such request, so refuse the config, once.
                raise ValueError(
                    f"url {redact_urls(url)!r}: credentials in the URL and api_key are both "
                    "an Authorization header; give one of them"
                )
        for api in self.apis or ():
            if api not in APIS:
                raise ValueError(f"apis: unknown API {api!r}; known: {', '.join(APIS)}")
        if self.max_ttft_s is not None and self.kind != "vllm":
            raise ValueError("max_ttft_s: admission by time to first token is for vllm backends only")
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


class SwitchCostConfig(_Strict):
    """A session's turn that would change route weighs what the move costs (router/decide/switch.py):
    it moves when the classifier's confidence is at least cost / (cost + half), so a move that
    costs ``half_usd`` (into the cloud: its uncached history at the cloud's input price) or
    ``half_s`` (back to the box: the history's re-prefill at its prefill_tps) needs 0.5."""

    enabled: bool = True
    half_usd: float = Field(0.05, gt=0)
    half_s: float = Field(30.0, gt=0)


class CapacityConfig(_Strict):
    policy: Literal["spill", "queue"] = "spill"
    queue_timeout_s: float = Field(5.0, ge=0)
    # vLLM /metrics scrape interval for num_requests_waiting and friends.
    metrics_interval_s: float = Field(2.0, ge=MIN_LOOP_S)


class HealthConfig(_Strict):
    interval_s: float = Field(5.0, ge=MIN_LOOP_S)
    cloud_interval_s: float = Field(60.0, ge=MIN_LOOP_S)
    probe_cloud: bool = False  # cloud: passive detection only unless turned on
    failure_threshold: int = Field(3, gt=0)
    open_s: float = Field(10.0, gt=0)  # breaker stays open this long before one half-open trial request
    probe_timeout_s: float = Field(2.0, gt=0)


_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


class StateConfig(_Strict):
    """State the replicas share through Redis (router/forward/shared.py): in-flight slots per
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
    probe_interval_s: float = Field(1.0, ge=MIN_LOOP_S, le=60)
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
    # In the last user turn (its first 4,096 characters): where Codex puts its compaction ask.
    user_contains: str | None = None
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


class LoggingConfig(_Strict):
    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["text", "json"] = "text"
    access: bool = True  # one line per request (router/edge/access.py), never its content

    @field_validator("level", "format", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value


class ReportConfig(_Strict):
    # The unit of every price and hardware cost in this config: shown wherever money is.
    currency: str = Field("USD", pattern=r"^[A-Za-z$€£¥]{1,8}$")


class RoutingConfig(_Strict):
    default: str = "local"
    # intent → a backend or route, or arms by weight ({cloud: 90, local-thinking: 10}): each
    # conversation sticks to one arm.
    # Default: the classifier's own table (classifier.model.DEFAULT_ROUTES).
    intents: dict[str, str | dict[str, float]] = Field(
        default_factory=lambda: dict[str, str | dict[str, float]](DEFAULT_ROUTES)
    )
    # backend or route → where its traffic goes next, in order. Unset: each route falls back
    # to the other (local → cloud, cloud → local), where both exist; {} turns fallback off.
    fallbacks: dict[str, list[str]] | None = None
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
    switch_cost: SwitchCostConfig = SwitchCostConfig()

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


# smf-bench's categories → the router's intents (`offload gate propose`).
GATE_CATEGORIES = {
    "coding": "coding",
    "tool_calling": "tools",
    "instruction": "instruction",
    "math": "math",
    "reasoning": "reasoning",
    "prose": "writing",
    "writing": "writing",
}


class GateConfig(_Strict):
    """`offload gate` (router.gate): how its categories map to intents, and when the
    evidence sends an intent to the box."""

    categories: dict[str, str] = Field(default_factory=lambda: dict(GATE_CATEGORIES))
    # An intent goes local when the local pass rate reaches its floor and, where a cloud
    # run exists, is no more than `margin` below the cloud's.
    floor: float = Field(0.75, ge=0, le=1)
    floors: dict[str, float] = {}  # per intent, over `floor`
    margin: float = Field(0.10, ge=0, le=1)
    case_timeout_s: float = Field(10.0, gt=0)  # a unit_test program's wall-clock limit
    sandbox_python: str | None = None  # default: this interpreter, else /usr/bin/python3

    @field_validator("categories", "floors")
    @classmethod
    def _known(cls, value: dict[str, Any], info: Any) -> dict[str, Any]:
        intents = value.values() if info.field_name == "categories" else value.keys()
        unknown = sorted(set(intents) - set(INTENTS))
        if unknown:
            raise ValueError(f"unknown intent {unknown[0]!r}; known: {', '.join(INTENTS)}")
        if info.field_name == "floors" and any(not 0 <= f <= 1 for f in value.values()):
            raise ValueError("a floor is a pass rate between 0 and 1")
        return value
