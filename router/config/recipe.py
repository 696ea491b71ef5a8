"""The local vLLM serving recipe: one YAML file, the router's and the server's truth.

A recipe file (``config/laguna-spark.yaml``) holds a ``vllm:`` mapping with the
engine, the model, the ``vllm serve`` arguments, the environment and notes. A
router backend points at it with ``recipe:`` (a path relative to the router
config's directory). From it:

- :func:`render_command` gives the exact ``vllm serve`` command line,
- :func:`apply_recipe` gives the router's ``max_concurrency`` and
  ``context_window`` (``max-num-seqs`` and ``max-model-len``), so the router and
  the server never disagree,
- ``offload vllm-command`` (router/ops/vllm_command.py) prints or runs it.

A recipe must turn on what the router depends on (:data:`ROUTER_NEEDS`): cached-token
counts in usage and the prefix cache behind them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from router.config.files import read_yaml
from router.config.model import Config
from router.config.sections import BackendConfig, ConfigError

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ARG_NAME = re.compile(r"[a-z0-9][a-z0-9-]*\Z")
# Arguments that must be present: the router reads them (and DFlash crashes without max-num-seqs).
_REQUIRED_ARGS = ("max-num-seqs", "max-model-len", "port")
# Flags that must be on, stated in the recipe rather than left to vLLM's defaults, because the
# router depends on what they make vLLM do.
ROUTER_NEEDS = {
    # Without it vLLM reports no cached-token counts (chat: prompt_tokens_details null;
    # Messages: no cache_read_input_tokens): every local row would say 0 cached tokens.
    "enable-prompt-tokens-details": "the cached-token counts in usage, which rows and cache pricing read",
    # The cache those counts come from; sessions stick to the box holding their prefix.
    "enable-prefix-caching": "the prefix cache that makes a resent agent history cheap",
}


class RecipeError(ConfigError):
    """A bad recipe file. The message is one line naming the file and the key."""


@dataclass(frozen=True)
class Recipe:
    engine: str
    model: str
    args: list[str]  # everything after `vllm serve MODEL`, already rendered
    env: dict[str, str]
    max_num_seqs: int
    max_model_len: int
    port: int
    cold_start_s: int | None = None
    notes: str = ""
    path: Path | None = field(default=None, compare=False)

    def argv(self) -> list[str]:
        """``["vllm", "serve", MODEL, *args]``."""
        return ["vllm", "serve", self.model, *self.args]


def _render_args(args: dict[str, Any], where: str) -> list[str]:
    out: list[str] = []
    for raw_key, value in args.items():
        key = str(raw_key).replace("_", "-")
        if not _ARG_NAME.match(key):
            raise RecipeError(f"{where}.{raw_key}: not a valid flag name")
        flag = f"--{key}"
        if value is None or value is False:
            continue
        if value is True:
            out.append(flag)
        elif isinstance(value, dict):
            out += [flag, json.dumps(value, separators=(", ", ": "))]
        elif isinstance(value, list):
            if not value or any(isinstance(v, dict | list | bool) or v is None for v in value):
                raise RecipeError(f"{where}.{raw_key}: a list must hold plain values")
            out += [flag, *(str(v) for v in value)]
        elif isinstance(value, int | float | str):
            out += [flag, str(value)]
        else:
            raise RecipeError(f"{where}.{raw_key}: unsupported value {value!r}")
    return out


def _positive_int(args: dict[str, Any], key: str, where: str) -> int:
    value = args[key]
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise RecipeError(f"{where}.{key}: must be a positive integer, got {value!r}")
    return value


def parse_recipe(raw: Any, where: str = "recipe") -> Recipe:
    """Validate an already-loaded recipe tree. Raises RecipeError naming the key."""
    if not isinstance(raw, dict) or not isinstance(raw.get("vllm"), dict):
        raise RecipeError(f"{where}: vllm: required (a mapping with engine, model, args, env)")
    section = raw["vllm"]
    known = {"engine", "model", "args", "env", "cold_start_s", "notes"}
    unknown = sorted(set(section) - known)
    if unknown:
        raise RecipeError(f"{where}: vllm.{unknown[0]}: unknown key (known: {', '.join(sorted(known))})")
    for key in ("engine", "model"):
        if not isinstance(section.get(key), str) or not section[key].strip():
            raise RecipeError(f"{where}: vllm.{key}: required (a non-empty string)")
    args = section.get("args")
    if not isinstance(args, dict):
        raise RecipeError(f"{where}: vllm.args: required (a mapping of vllm serve flags)")
    args = {str(k).replace("_", "-"): v for k, v in args.items()}
    for key in _REQUIRED_ARGS:
        if key not in args:
            raise RecipeError(f"{where}: vllm.args.{key}: required")
    ints = {key: _positive_int(args, key, f"{where}: vllm.args") for key in _REQUIRED_ARGS}
    for key, why in ROUTER_NEEDS.items():
        if args.get(key) is not True:
            raise RecipeError(f"{where}: vllm.args.{key}: must be true (the router needs {why})")
    env_raw = section.get("env") or {}
    if not isinstance(env_raw, dict):
        raise RecipeError(f"{where}: vllm.env: must be a mapping of variable to value")
    env: dict[str, str] = {}
    for name, value in env_raw.items():
        if not _ENV_NAME.match(str(name)):
            raise RecipeError(f"{where}: vllm.env.{name}: not a valid variable name")
        if value is None or isinstance(value, dict | list):
            raise RecipeError(f"{where}: vllm.env.{name}: must be a plain value")
        env[str(name)] = str(value).lower() if isinstance(value, bool) else str(value)
    cold = section.get("cold_start_s")
    if cold is not None and (isinstance(cold, bool) or not isinstance(cold, int) or cold < 0):
        raise RecipeError(f"{where}: vllm.cold_start_s: must be a non-negative integer")
    return Recipe(
        engine=section["engine"].strip(),
        model=section["model"].strip(),
        args=_render_args(args, f"{where}: vllm.args"),
        env=env,
        max_num_seqs=ints["max-num-seqs"],
        max_model_len=ints["max-model-len"],
        port=ints["port"],
        cold_start_s=cold,
        notes=str(section.get("notes") or "").strip(),
    )


def load_recipe(path: str | os.PathLike[str]) -> Recipe:
    """Read and validate a recipe file. Raises RecipeError naming the file and key."""
    file = Path(path)
    recipe = parse_recipe(read_yaml(file, "recipe", RecipeError), str(file))
    return replace(recipe, path=file)


def render_command(recipe: Recipe) -> str:
    """``VAR=value ... vllm serve MODEL --flag value ...``, quoted for a POSIX shell."""
    assignments = [f"{name}={shlex.quote(value)}" for name, value in recipe.env.items()]
    return " ".join([*assignments, shlex.join(recipe.argv())])


def recipe_path(config_file: str | os.PathLike[str], backend: BackendConfig) -> Path:
    """The backend's recipe file, resolved relative to the router config's directory.

    It must stay inside that directory once symlinks and ``..`` are resolved: a config
    names a recipe, not any file the proxy's user can read (``../../etc/passwd``,
    ``/dev/zero``). Reading it is bounded too (router.config.read_yaml).
    """
    if not backend.recipe:
        raise RecipeError("backend has no recipe")
    base = Path(config_file).resolve().parent
    path = (base / Path(backend.recipe).expanduser()).resolve()
    if not path.is_relative_to(base):
        raise RecipeError(f"{backend.recipe}: must be a file in the config's directory {base}")
    return path


def apply_recipe(config_file: str | os.PathLike[str], backend: BackendConfig) -> tuple[int, int]:
    """``(max_concurrency, context_window)`` for a backend with a recipe.

    Values come from the recipe's ``max-num-seqs`` and ``max-model-len``. A value
    set explicitly on the backend may be lower (a replica taking a share of the
    box, or a tighter context budget) but never higher than what the server
    actually runs with: that raises RecipeError naming both.
    """
    recipe = load_recipe(recipe_path(config_file, backend))
    pairs = (
        ("max_concurrency", backend.max_concurrency, "max-num-seqs", recipe.max_num_seqs),
        ("context_window", backend.context_window, "max-model-len", recipe.max_model_len),
    )
    out: list[int] = []
    for key, mine, rkey, theirs in pairs:
        if mine is not None and mine > theirs:
            raise RecipeError(
                f"{key}: {mine} is more than the recipe's {rkey} {theirs} ({recipe.path}); "
                f"remove it or lower it"
            )
        out.append(theirs if mine is None else mine)
    return out[0], out[1]


def apply_recipes(config: Config, config_file: str | os.PathLike[str]) -> Config:
    """``config`` with every recipe backend's limits taken from its recipe (see apply_recipe).

    Config is frozen, so this returns a copy. Errors name the backend:
    ``backends.local.recipe: ...``.
    """
    backends = dict(config.backends)
    changed = False
    for name, backend in config.backends.items():
        if not backend.recipe:
            continue
        try:
            concurrency, window = apply_recipe(config_file, backend)
            digest = hashlib.sha256(render_command(load_recipe(recipe_path(config_file, backend))).encode())
        except RecipeError as exc:
            raise RecipeError(f"backends.{name}.recipe: {exc}") from None
        update = {
            "max_concurrency": concurrency,
            "context_window": window,
            "recipe_sha256": digest.hexdigest(),
        }
        backends[name] = backend.model_copy(update=update)
        changed = True
    return config.model_copy(update={"backends": backends}) if changed else config
