"""``offload vllm-command [--config PATH] [--exec | --engine]``: the exact ``vllm serve`` command
of the local recipe (router/config/recipe.py), printed, or run in place of this process; or
the engine it pins (``pip install "$(offload vllm-command --engine)"``)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
from pathlib import Path

from router.config import ConfigError, config_path, load_config
from router.config.recipe import RecipeError, load_recipe, recipe_path, render_command


def find_recipe_backend(config_file: str | os.PathLike[str] | None = None) -> tuple[str, Path]:
    """``(backend name, recipe path)`` of the first backend in the config with a recipe."""
    file = config_path(config_file)
    config = load_config(file)
    for name, backend in config.backends.items():
        if backend.recipe:
            return name, recipe_path(file, backend)
    raise RecipeError(f"{file}: no backend has a recipe (set backends.<name>.recipe, e.g. laguna-spark.yaml)")


def _vllm_executable() -> list[str] | None:
    found = shutil.which("vllm")
    if found:
        return [found]
    if importlib.util.find_spec("vllm") is not None:
        return [sys.executable, "-m", "vllm.entrypoints.cli.main"]
    return None


def main(argv: list[str] | None = None) -> int:
    """``offload vllm-command [--config PATH] [--exec | --engine]``."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["vllm-command"]:
        args_in = args_in[1:]
    parser = argparse.ArgumentParser(
        prog="offload vllm-command",
        description="Print (or run) the exact `vllm serve` command of the local recipe.",
    )
    parser.add_argument("--config", help="router config (default: OFFLOAD_CONFIG or config/router.yaml)")
    parser.add_argument(
        "--exec", dest="run", action="store_true", help="replace this process with vllm serve"
    )
    parser.add_argument(
        "--engine", action="store_true", help="print the pinned engine (a pip requirement) and exit"
    )
    opts = parser.parse_args(args_in)
    try:
        name, path = find_recipe_backend(opts.config)
        recipe = load_recipe(path)
    except ConfigError as exc:
        print(f"offload vllm-command: {exc}", file=sys.stderr)
        return 2
    if opts.engine:
        print(recipe.engine)  # the serving vLLM's one pin
        return 0
    if not opts.run:
        print(render_command(recipe))
        for line in _variant_notes(opts.config, name):
            print(line, file=sys.stderr)  # stdout stays the bare command, for scripts
        return 0
    exe = _vllm_executable()
    if exe is None:
        print(
            f"offload vllm-command: vllm is not installed (not on PATH, not importable); "
            f"the recipe for backend {name!r} wants {recipe.engine}",
            file=sys.stderr,
        )
        return 2
    print(f"offload vllm-command: backend {name!r}: {render_command(recipe)}", file=sys.stderr, flush=True)
    # The recipe's environment wins over the inherited one: it is part of the frozen recipe.
    env = {**os.environ, **recipe.env}
    argv_out = [*exe, *recipe.argv()[1:]]
    os.execvpe(argv_out[0], argv_out, env)
    return 0  # pragma: no cover - execvpe does not return


def _variant_notes(config_path: str | None, server: str) -> list[str]:
    """What this one server also serves: the backend's variants and how they differ."""
    try:
        backends = load_config(config_path).backends
    except ConfigError:
        return []
    notes = []
    for name, backend in backends.items():
        if backend.variant_of == server:
            thinking = f"thinking {backend.thinking}"
            bound = f", max_output_tokens {backend.max_output_tokens}" if backend.max_output_tokens else ""
            notes.append(
                f"# also served by this command: variant {name!r} of {server!r} ({thinking}{bound}),"
            )
    if notes:
        notes.append("# switched per request (chat_template_kwargs), sharing max-num-seqs with it")
    return notes


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
