"""Reading a config or recipe file: bounded in size, nodes and depth, no duplicate keys."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

import yaml

from router.config.sections import ConfigError

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
