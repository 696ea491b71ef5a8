"""The whole config: its sections, the references between them, and backend variants."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from router.config.sections import (
    AuthConfig,
    BackendConfig,
    ConfigError,
    DatabaseConfig,
    GateConfig,
    HealthConfig,
    LoggingConfig,
    ReportConfig,
    RoutingConfig,
    ServerConfig,
    StateConfig,
    _Strict,
)


class Config(_Strict):
    server: ServerConfig = ServerConfig()
    database: DatabaseConfig = DatabaseConfig()
    auth: AuthConfig = AuthConfig()
    backends: dict[str, BackendConfig]
    routing: RoutingConfig = RoutingConfig()
    health: HealthConfig = HealthConfig()
    state: StateConfig | None = None  # shared by the replicas through Redis
    report: ReportConfig = ReportConfig()
    logging: LoggingConfig = LoggingConfig()
    gate: GateConfig = GateConfig()  # `offload gate` (router.gate)

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
        for src, targets in (self.routing.fallbacks or {}).items():
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

    @property
    def fallbacks(self) -> dict[str, list[str]]:
        """``routing.fallbacks``, else both ways between the routes this config has."""
        if self.routing.fallbacks is not None:
            return self.routing.fallbacks
        routes = {b.route_name for b in self.backends.values()}
        return {"local": ["cloud"], "cloud": ["local"]} if routes >= {"local", "cloud"} else {}

    def fallback_chain(self, first: str) -> list[str]:
        """``first``, then the backends its traffic falls back to, in order, each once
        (``routing.fallbacks`` keyed by the backend's name, else by its route)."""
        fallbacks = self.fallbacks
        chain = [first]
        for target in fallbacks.get(first, fallbacks.get(self.backends[first].route_name, [])):
            name = self.resolve(target)
            if name not in chain:
                chain.append(name)
        return chain


def _heaviest(target: str | dict[str, float]) -> str:
    return max(target, key=target.__getitem__) if isinstance(target, dict) else target


# What makes a server: a variant takes these from the backend it is a variant of.
_SERVER_KEYS = (
    "kind", "base_url", "endpoints", "api_key", "max_concurrency", "route", "recipe", "hardware",
    "max_ttft_s", "prefill_tps", "decode_tps", "kv_tokens", "queue_tokens",
)  # fmt: skip


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
