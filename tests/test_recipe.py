"""The Laguna-on-Spark recipe: rendered command, router limits, errors."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from router.config import BackendConfig, load_config
from router.config.recipe import RecipeError, apply_recipe, apply_recipes, load_recipe, render_command
from router.ops import vllm_command as recipe_mod
from router.ops.vllm_command import main

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "config" / "laguna-spark.yaml"
SPARK = ROOT / "config" / "spark.yaml"

EXPECTED_VALUES = {
    "--tool-call-parser": "poolside_v1",
    "--reasoning-parser": "poolside_v1",
    "--max-num-seqs": "32",
    "--max-model-len": "262144",
    "--gpu-memory-utilization": "0.82",
    "--host": "0.0.0.0",
    "--port": "8888",
}
EXPECTED_JSON = {
    "--speculative-config": {
        "model": "poolside/Laguna-S-2.1-DFlash-NVFP4",
        "num_speculative_tokens": 15,
        "method": "dflash",
    },
    "--override-generation-config": {"temperature": 0.7, "top_p": 0.95},
}
EXPECTED_FLAGS = {"--enable-auto-tool-choice", "--enable-prompt-tokens-details", "--enable-prefix-caching"}
EXPECTED_ENV = {"CUTE_DSL_ARCH": "sm_121a", "MAX_JOBS": "4"}


def _split(command: str) -> tuple[dict[str, str], list[str]]:
    """Leading VAR=value words, then the argv."""
    words = shlex.split(command)
    env: dict[str, str] = {}
    while words and "=" in words[0] and not words[0].startswith("-"):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    return env, words


def _flags(argv: list[str]) -> dict[str, str | None]:
    """``--flag value`` / bare ``--flag`` pairs after ``vllm serve MODEL``."""
    out: dict[str, str | None] = {}
    i = 0
    while i < len(argv):
        flag = argv[i]
        assert flag.startswith("--"), f"stray word {flag!r} in {argv}"
        assert flag not in out, f"{flag} given twice"
        if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            out[flag] = argv[i + 1]
            i += 2
        else:
            out[flag] = None
            i += 1
    return out


def test_rendered_command_has_every_flag_value_and_env() -> None:
    command = render_command(load_recipe(RECIPE))
    env, argv = _split(command)
    assert env == EXPECTED_ENV
    assert argv[:3] == ["vllm", "serve", "poolside/Laguna-S-2.1-NVFP4"]
    flags = _flags(argv[3:])
    for flag, value in EXPECTED_VALUES.items():
        assert flags.get(flag) == value, flag
    for flag, value in EXPECTED_JSON.items():
        assert flag in flags and flags[flag] is not None, flag
        assert json.loads(flags[flag]) == value, flag
    for flag in EXPECTED_FLAGS:
        assert flag in flags and flags[flag] is None, flag
    assert set(flags) == set(EXPECTED_VALUES) | set(EXPECTED_JSON) | EXPECTED_FLAGS


def test_broken_linear_backend_is_left_out() -> None:
    command = render_command(load_recipe(RECIPE))
    assert "--linear-backend" not in command
    assert "flashinfer_b12x" not in command


def test_recipe_fields() -> None:
    r = load_recipe(RECIPE)
    assert (r.max_num_seqs, r.max_model_len, r.port) == (32, 262144, 8888)
    assert re.fullmatch(
        r"vllm==\d+\.\d+\.\d+", r.engine
    )  # its one pin (test_each_vllm_pin_lives_in_one_place)
    assert r.model == "poolside/Laguna-S-2.1-NVFP4"
    assert r.env == EXPECTED_ENV
    assert r.cold_start_s == 600


def test_command_survives_a_real_shell(tmp_path: Path) -> None:
    """The quoting holds when a POSIX shell reads the line (env assignments included)."""
    import subprocess

    r = load_recipe(RECIPE)
    stub = tmp_path / "vllm"
    stub.write_text('#!/bin/sh\nprintf "%s\\n" "CUTE=$CUTE_DSL_ARCH" "JOBS=$MAX_JOBS" "$@"\n')
    stub.chmod(0o755)
    out = subprocess.run(
        ["sh", "-c", render_command(r)],
        env={"PATH": f"{tmp_path}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out[:2] == ["CUTE=sm_121a", "JOBS=4"]
    assert out[2:] == ["serve", r.model, *r.args]


def test_spark_config_points_at_the_recipe() -> None:
    config = load_config(SPARK)
    local = config.backends["local"]
    assert local.recipe == "laguna-spark.yaml"
    assert apply_recipe(SPARK, local) == (32, 262144)
    # The model the router asks for is the one the server serves.
    assert local.model == load_recipe(RECIPE).model


def test_apply_recipe_lower_is_kept_higher_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text(RECIPE.read_text())
    cfg = tmp_path / "router.yaml"
    base = {"kind": "vllm", "base_url": "http://x:8888/v1", "model": "m", "recipe": "r.yaml"}
    assert apply_recipe(cfg, BackendConfig(**base, max_concurrency=8)) == (8, 262144)
    with pytest.raises(RecipeError, match=r"max_concurrency: 64 .*max-num-seqs 32"):
        apply_recipe(cfg, BackendConfig(**base, max_concurrency=64))
    with pytest.raises(RecipeError, match=r"context_window: .*max-model-len 262144"):
        apply_recipe(cfg, BackendConfig(**base, context_window=1_000_000))


def _write(tmp_path: Path, tree: dict) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    return path


@pytest.mark.parametrize(
    ("drop", "named"),
    [
        ("max-num-seqs", "vllm.args.max-num-seqs"),
        ("max-model-len", "vllm.args.max-model-len"),
        ("port", "vllm.args.port"),
        ("model", "vllm.model"),
        ("engine", "vllm.engine"),
        ("args", "vllm.args"),
    ],
)
def test_missing_required_key_is_named(tmp_path: Path, drop: str, named: str) -> None:
    tree = yaml.safe_load(RECIPE.read_text())
    if drop in tree["vllm"]:
        del tree["vllm"][drop]
    else:
        del tree["vllm"]["args"][drop]
    with pytest.raises(RecipeError) as err:
        load_recipe(_write(tmp_path, tree))
    assert named in str(err.value)
    assert "required" in str(err.value)
    assert str(tmp_path) in str(err.value)


def test_other_bad_recipes(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match=r"vllm: required"):
        load_recipe(_write(tmp_path, {"model": "x"}))
    tree = yaml.safe_load(RECIPE.read_text())
    tree["vllm"]["args"]["max-num-seqs"] = "lots"
    with pytest.raises(RecipeError, match=r"vllm.args.max-num-seqs: must be a positive integer"):
        load_recipe(_write(tmp_path, tree))
    tree = yaml.safe_load(RECIPE.read_text())
    tree["vllm"]["surprise"] = 1
    with pytest.raises(RecipeError, match=r"vllm.surprise: unknown key"):
        load_recipe(_write(tmp_path, tree))
    with pytest.raises(RecipeError, match=r"cannot read recipe"):
        load_recipe(tmp_path / "absent.yaml")


def test_underscore_keys_and_false_flags(tmp_path: Path) -> None:
    tree = yaml.safe_load(RECIPE.read_text())
    tree["vllm"]["args"] = {
        "max_num_seqs": 4,
        "max_model_len": 4096,
        "port": 9000,
        "enforce_eager": False,
        "trust-remote-code": None,
        "served-model-name": ["a", "b"],
        "enable_prompt_tokens_details": True,
        "enable-prefix-caching": True,
    }
    r = load_recipe(_write(tmp_path, tree))
    assert (r.max_num_seqs, r.max_model_len, r.port) == (4, 4096, 9000)
    assert r.args == ["--max-num-seqs", "4", "--max-model-len", "4096", "--port", "9000",
                      "--served-model-name", "a", "b", "--enable-prompt-tokens-details",
                      "--enable-prefix-caching"]  # fmt: skip


@pytest.mark.parametrize("flag", ["enable-prompt-tokens-details", "enable-prefix-caching"])
@pytest.mark.parametrize("value", ["absent", False, "yes"])
def test_what_the_router_needs_must_be_on(tmp_path: Path, flag: str, value: object) -> None:
    """Without cached-token counts every local row would say 0 cached tokens."""
    tree = yaml.safe_load(RECIPE.read_text())
    if value == "absent":
        del tree["vllm"]["args"][flag]
    else:
        tree["vllm"]["args"][flag] = value
    with pytest.raises(RecipeError, match=rf"vllm.args.{flag}: must be true \(the router needs"):
        load_recipe(_write(tmp_path, tree))


def test_each_vllm_pin_lives_in_one_place() -> None:
    """The Spark's vLLM is pinned by config/laguna-spark.yaml, the CPU tier's by
    tests/realvllm/cpu-recipe.yaml; nothing else in the repository writes a version."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    pins: dict[str, list[str]] = {}
    for name in files.stdout.split():
        path = ROOT / name
        if path.suffix in {".json", ".jsonl", ".txt"} or not path.is_file():
            continue  # recorded data
        for pin in re.findall(r"vllm(?:-cpu)?==\d+\.\d+\.\d+", path.read_text(errors="ignore")):
            pins.setdefault(pin, []).append(name)
    assert {pin: sorted(set(where)) for pin, where in pins.items()} == {
        load_recipe(RECIPE).engine: ["config/laguna-spark.yaml"],
        load_recipe(ROOT / "tests" / "realvllm" / "cpu-recipe.yaml").engine: [
            "tests/realvllm/cpu-recipe.yaml"
        ],
    }


def test_cli_prints_the_engine(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(SPARK), "--engine"]) == 0
    assert capsys.readouterr().out.strip() == load_recipe(RECIPE).engine


def test_cli_prints_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(SPARK)]) == 0
    out = capsys.readouterr().out.strip()
    assert out == render_command(load_recipe(RECIPE))
    assert "--enable-prompt-tokens-details" in out.split() and "--enable-prefix-caching" in out.split()
    # The `offload` dispatcher may pass the subcommand name through.
    assert main(["vllm-command", "--config", str(SPARK)]) == 0
    assert "vllm serve poolside/Laguna-S-2.1-NVFP4" in capsys.readouterr().out


def test_cli_without_a_recipe_backend_exits_2(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    plain = tmp_path / "plain.yaml"
    plain.write_text("backends: {local: {kind: vllm, base_url: 'http://localhost:8888/v1', model: m}}\n")
    assert main(["--config", str(plain)]) == 2
    assert "no backend has a recipe" in capsys.readouterr().err


def test_cli_exec_without_vllm_exits_2(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr(recipe_mod, "_vllm_executable", lambda: None)
    monkeypatch.setattr(recipe_mod.os, "execvpe", lambda *a: pytest.fail("must not exec"))
    assert main(["--config", str(SPARK), "--exec"]) == 2
    assert "vllm is not installed" in capsys.readouterr().err


def test_cli_exec_runs_vllm_with_recipe_env(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict = {}

    def fake_exec(file, args, env):
        seen.update(file=file, args=args, env=env)
        raise SystemExit(0)

    monkeypatch.setattr(recipe_mod, "_vllm_executable", lambda: ["/opt/vllm/bin/vllm"])
    monkeypatch.setattr(recipe_mod.os, "execvpe", fake_exec)
    monkeypatch.setenv("MAX_JOBS", "64")
    with pytest.raises(SystemExit):
        main(["--config", str(SPARK), "--exec"])
    r = load_recipe(RECIPE)
    assert seen["file"] == "/opt/vllm/bin/vllm"
    assert seen["args"] == ["/opt/vllm/bin/vllm", "serve", r.model, *r.args]
    assert seen["env"]["MAX_JOBS"] == "4"  # the frozen recipe wins over the inherited env
    assert seen["env"]["CUTE_DSL_ARCH"] == "sm_121a"


def test_apply_recipes_returns_a_config_with_the_recipe_limits(tmp_path: Path) -> None:
    import yaml

    from router.config import parse_config

    config = parse_config(yaml.safe_load(SPARK.read_text()), env={})
    applied = apply_recipes(config, SPARK)
    assert applied.backends["local"].max_concurrency == 32
    assert applied.backends["local"].context_window == 262144
    assert applied.backends["cloud"] == config.backends["cloud"]
    assert config.backends["local"].max_concurrency is None  # the input is not changed
    assert load_config(SPARK).backends["local"].max_concurrency == 32  # load_config applies it
    # Errors name the backend, and load_config stops on them.
    bad = tmp_path / "router.yaml"
    bad.write_text(SPARK.read_text().replace("recipe: laguna-spark.yaml", "recipe: missing.yaml"))
    with pytest.raises(RecipeError, match=r"backends.local.recipe: cannot read recipe"):
        load_config(bad)
