"""Issue 13, item 13: every broken config is one line on stderr, and the loader refuses
what it must not read (files outside the config's directory, devices, alias bombs,
duplicate keys).

Each case runs the real ``offload`` command in a subprocess: the exit code and the
exact stderr are what an operator sees.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from router.config import ConfigError, load_config, read_yaml

ROOT = Path(__file__).resolve().parent.parent
GOOD = (
    "database: {{url: 'sqlite:///{tmp}/usage.db', spool_path: '{tmp}/spool.jsonl'}}\n"
    "backends:\n  local: {{kind: vllm, base_url: 'http://127.0.0.1:9/v1', model: m{extra}}}\n"
)


def alias_bomb() -> str:
    """The classic: nine levels of nine aliases, 387 million strings once expanded."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    previous = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [{', '.join(['*' + previous] * 9)}]")
        previous = name
    return "\n".join(lines) + "\n"


def broken(tmp: Path, case: str) -> tuple[Path, str]:
    """A config that is wrong in one way, and what its one line must say."""
    good = GOOD.format(tmp=tmp, extra="")
    (tmp / "garbage.json").write_text('{"format": "something else"}')
    cases: dict[str, tuple[str, str]] = {
        "weights_missing": (
            good + f"routing: {{classifier_weights: '{tmp}/no-such-weights.json'}}\n",
            "routing.classifier_weights: cannot read",
        ),
        "weights_malformed": (
            good + f"routing: {{classifier_weights: '{tmp}/garbage.json'}}\n",
            "routing.classifier_weights:",
        ),
        "weights_device": (good + "routing: {classifier_weights: /dev/zero}\n", "not a regular file"),
        "mysql": (good.replace(f"sqlite:///{tmp}/usage.db", "mysql://u:hunter2@db/offload"), "database.url:"),
        "not_a_url": (
            good.replace(f"sqlite:///{tmp}/usage.db", "not a url"),
            "database.url: not a database URL",
        ),
        "recipe_escapes": (
            GOOD.format(tmp=tmp, extra=", recipe: ../../../../../../etc/passwd"),
            "must be a file in the config's directory",
        ),
        "recipe_device": (
            GOOD.format(tmp=tmp, extra=", recipe: /dev/zero"),
            "must be a file in the config's directory",
        ),
        "alias_bomb": (
            good + "x-anchors:\n" + "".join("  " + line + "\n" for line in alias_bomb().splitlines()),
            "aliases",
        ),
        "recursive_alias": (good + "x-loop: &loop [*loop]\n", "alias refers to its own anchor"),
        "duplicate_key": (good + "database: {enabled: false}\n", "line 4: duplicate key 'database'"),
        "deep": (good + "x-deep: " + "[" * 200 + "]" * 200 + "\n", "nested deeper than"),
        # URL credentials with a bearer key: aiohttp refuses every request (a 500 with no row),
        # so the config is refused, the password never echoed (no line may hold it).
        "url_credentials": (
            good.replace("http://127.0.0.1:9/v1", "http://ops:hunter2@127.0.0.1:9/v1").replace(
                "model: m", "model: m, api_key: sk-local"
            ),
            "backends.local: url 'http://ops:<redacted>@127.0.0.1:9/v1': credentials in the URL and api_key",
        ),
        # A background loop this fast spins a core (1e-6 s once took 96 % of one).
        "spinning_interval": (good + "health: {interval_s: 0.000001}\n", "health.interval_s"),
    }
    text, expected = cases[case]
    path = tmp / f"{case}.yaml"
    path.write_text(text)
    return path, expected


def run(*args: str, limit_memory: bool = False) -> subprocess.CompletedProcess[str]:
    def cap() -> None:  # an alias bomb or /dev/zero must not be able to take the machine
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(
        [sys.executable, "-m", "router.ops.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=cap if limit_memory else None,
    )


CASES = [
    "weights_missing", "weights_malformed", "weights_device", "mysql", "not_a_url", "recipe_escapes",
    "recipe_device", "alias_bomb", "recursive_alias", "duplicate_key", "deep", "url_credentials",
    "spinning_interval",
]  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_serve_gives_one_line_for_each_broken_config(tmp_path: Path, case: str) -> None:
    config, expected = broken(tmp_path, case)
    result = run("serve", "--config", str(config), limit_memory=True)
    lines = result.stderr.splitlines()
    assert result.returncode != 0
    assert len(lines) == 1, result.stderr[-3000:]
    assert lines[0].startswith("offload: config error: ") and expected in lines[0], lines[0]
    assert "hunter2" not in result.stderr


@pytest.mark.parametrize("case", ["weights_malformed", "mysql", "not_a_url", "alias_bomb", "duplicate_key"])
@pytest.mark.parametrize(
    "command",
    [["classify", "hello"], ["report", "--month", "2026-11"], ["db", "upgrade"]],
    ids=["classify", "report", "db-upgrade"],
)
def test_other_commands_give_one_line_too(tmp_path: Path, case: str, command: list[str]) -> None:
    config, expected = broken(tmp_path, case)
    result = run(*command[:1], "--config", str(config), *command[1:], limit_memory=True)
    lines = result.stderr.splitlines()
    assert result.returncode != 0 and len(lines) == 1, result.stderr[-3000:]
    assert expected in lines[0], lines[0]


def test_the_config_file_itself_must_be_a_bounded_regular_file(tmp_path: Path) -> None:
    result = run("serve", "--config", "/dev/zero", limit_memory=True)
    assert result.returncode != 0 and result.stderr.splitlines() == [
        "offload: config error: cannot read config /dev/zero: not a regular file"
    ]
    big = tmp_path / "big.yaml"
    big.write_text("# padding\n" * 200_000)
    with pytest.raises(ConfigError, match="larger than 1,048,576 bytes"):
        load_config(big)


def test_a_recipe_inside_the_config_directory_still_loads(tmp_path: Path) -> None:
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "r.yaml").write_text((ROOT / "config" / "laguna-spark.yaml").read_text())
    config = tmp_path / "router.yaml"
    config.write_text(GOOD.format(tmp=tmp_path, extra=", recipe: recipes/r.yaml"))
    assert load_config(config).backends["local"].max_concurrency == 32
    (tmp_path / "recipes" / "link.yaml").symlink_to("/etc/passwd")  # a symlink out is still out
    config.write_text(GOOD.format(tmp=tmp_path, extra=", recipe: recipes/link.yaml"))
    with pytest.raises(ConfigError, match="must be a file in the config's directory"):
        load_config(config)


def test_anchors_and_merge_keys_within_bounds_still_work(tmp_path: Path) -> None:
    path = tmp_path / "anchors.yaml"
    path.write_text("base: &b {x: 1, y: [1, 2]}\nc: {<<: *b, x: 3}\nd: [*b, *b]\n")
    assert read_yaml(path, "config") == {
        "base": {"x": 1, "y": [1, 2]},
        "c": {"x": 3, "y": [1, 2]},
        "d": [{"x": 1, "y": [1, 2]}, {"x": 1, "y": [1, 2]}],
    }
