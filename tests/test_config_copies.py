"""Each copy of the starter config differs from it only where it says it does.

``config/spark.yaml`` and the ``router.yaml`` embedded in ``deploy/k8s/configmap.yaml``
are whole configs (systemd, compose and Kubernetes read one file), so they cannot just
override the starter config. Instead each lists, in its header comment, the keys in which
it differs from ``config/router.yaml``; these tests fail when a copy drifts in another key
(an edit made to one file and not the others) or stops differing in a listed one (a stale
note). The YAML is compared as written, ``${VAR}`` references unexpanded.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from classifier.model import DEFAULT_ROUTES, INTENTS
from router.config import DEFAULT_CONFIG_PATH, RoutingConfig, parse_config
from router.ops import demo

ROOT = Path(__file__).resolve().parent.parent
COPIES = {
    "config/spark.yaml": lambda text: yaml.safe_load(text),
    "deploy/k8s/configmap.yaml": lambda text: _embedded_router_yaml(text),
}
# "#   dotted.key   why": the lines under a header comment's "with these keys changed".
_LISTED = re.compile(r"^#   ([a-z_]+(?:\.[a-z_-]+)+)\s", re.MULTILINE)


def _embedded_router_yaml(text: str) -> Any:
    (configmap,) = [d for d in yaml.safe_load_all(text) if d and d.get("kind") == "ConfigMap"]
    return yaml.safe_load(configmap["data"]["router.yaml"])


def differing_keys(base: Any, copy: Any, prefix: str = "") -> set[str]:
    """Dotted paths where ``copy`` differs from ``base``: a value changed, added or removed.
    Mappings are compared key by key; anything else (lists included) as a whole."""
    if isinstance(base, dict) and isinstance(copy, dict):
        found: set[str] = set()
        for key in base.keys() | copy.keys():
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in base or key not in copy:
                found.add(path)
            else:
                found |= differing_keys(base[key], copy[key], path)
        return found
    return set() if base == copy else {prefix}


def starter() -> Any:
    return yaml.safe_load(DEFAULT_CONFIG_PATH.read_text())


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copy_differs_from_the_starter_config_exactly_where_it_says(name: str) -> None:
    text = (ROOT / name).read_text()
    listed = _LISTED.findall(text)
    assert listed, f"{name}: no list of the keys in which it differs from config/router.yaml"
    assert len(listed) == len(set(listed)), f"{name}: a key listed twice"
    actual = differing_keys(starter(), COPIES[name](text))
    assert sorted(actual - set(listed)) == [], f"{name} differs from config/router.yaml in unlisted keys"
    assert sorted(set(listed) - actual) == [], f"{name} lists keys in which it no longer differs"


def test_differing_keys_finds_changes_additions_and_removals() -> None:
    """The comparison the copies are held to can fail: a changed leaf, an added and a
    removed key, a changed list; equal subtrees say nothing."""
    base = {"a": {"b": 1, "c": [1, 2], "d": {"e": "x"}}, "f": 2}
    copy = {"a": {"b": 3, "c": [1], "d": {"e": "x"}, "g": 0}, "h": 1}
    assert differing_keys(base, copy) == {"a.b", "a.c", "a.g", "f", "h"}
    assert differing_keys(base, base) == set()


def test_the_copies_are_valid_configs() -> None:
    """Whatever they differ in, each still loads (secrets unset: those backends unconfigured)."""
    env = {"OFFLOAD_DATABASE_URL": "postgresql+psycopg://u:p@db:5432/offload"}
    for name, load in COPIES.items():
        raw = load((ROOT / name).read_text())
        raw["backends"]["local"].pop("recipe", None)  # a path relative to the file: test_recipe's
        raw["backends"]["local"].setdefault("max_concurrency", 8)
        raw["backends"]["local"].setdefault("context_window", 262144)
        parse_config(raw, env)


def test_the_starter_configs_intent_table_is_the_classifiers() -> None:
    """config/router.yaml spells the default table out for editing; it must be the one the
    proxy uses when a config has none (classifier.model.DEFAULT_ROUTES)."""
    assert starter()["routing"]["intents"] == dict(DEFAULT_ROUTES)
    assert RoutingConfig().intents == dict(DEFAULT_ROUTES)
    assert tuple(DEFAULT_ROUTES) == INTENTS


def test_the_demo_prices_and_box_are_the_starter_configs() -> None:
    """The demo's money lines use the starter config's list prices and hardware."""
    backends = starter()["backends"]
    assert backends["cloud"]["price"] == demo.CLOUD_PRICE
    assert backends["local"]["hardware"] == demo.LOCAL_HARDWARE
    assert demo.CLOUD_MODEL in backends["cloud"]["model"] and demo.LOCAL_MODEL in backends["local"]["model"]
