"""``offload init [--dir PATH] [--force]``: a starter config and an environment template.

Writes, under DIR (default: the working directory), what config discovery looks for
(``router.config.config_path``), so that ``offload serve`` run there needs no flag:

- ``config/router.yaml``: the embedded defaults, the same file ``make serve`` runs in a
  checkout (the wheel carries the checkout's ``config/router.yaml``: router/dist.py);
- ``config/laguna-spark.yaml``: the serving recipe that config names;
- ``.env``: every ``${VAR}`` the config reads, secrets blank and settings commented out
  with their defaults; mode 0600, since it is where the keys go.

Any of them already there stops it, with nothing written, unless ``--force``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from router.config import DEFAULT_CONFIG_PATH, env_references
from router.dist import starter_dir

# The config and the recipe it names (pyproject.toml's package-data for router.starter).
STARTER_FILES = ("router.yaml", "laguna-spark.yaml")
ENV_FILE = ".env"


# What the starter config's secrets are for: the two sides must never share a value.
SECRET_NOTES = {
    "OFFLOAD_API_KEY": "client key: what your agents send to the proxy (pick any long random string)",
    "OFFLOAD_ADMIN_KEY": "admin key: the console and /offload/state",
    "OPENAI_API_KEY": "upstream key: the proxy's own key to OpenAI; never give it to an agent",
    "ANTHROPIC_API_KEY": "upstream key: the proxy's own key to Anthropic; never give it to an agent",
}


def env_template(config_text: str) -> str:
    """A ``.env`` for a config: its secrets to fill in, its settings with their defaults."""
    refs = env_references(config_text)
    secrets = [var for var, default in refs.items() if default is None]
    lines = [
        f"# Environment for {DEFAULT_CONFIG_PATH}, written by `offload init`. Never commit it filled in.",
        "# Load it before `offload serve` with: set -a; . ./.env; set +a",
        "# (or systemd's EnvironmentFile=, docker's --env-file).",
        "#",
        "# No default: a backend whose key is unset is reported unconfigured in /readyz and the",
        "# rest keeps serving; with no client key the proxy listens on 127.0.0.1 only.",
        "# The proxy refuses to start when an upstream key equals a client key.",
        *(line for var in secrets for line in _secret_lines(var)),
        "",
        "# Settings, commented out at the config's default:",
        *(f"# {var}={default}" for var, default in refs.items() if default is not None),
    ]
    return "\n".join(lines) + "\n"


def _secret_lines(var: str) -> list[str]:
    note = SECRET_NOTES.get(var)
    return [f"# {note}", f"{var}="] if note else [f"{var}="]


def planned_files(directory: Path) -> dict[Path, bytes]:
    """What init writes under ``directory``: ``{path: content}``."""
    source = starter_dir()
    out = {
        directory / DEFAULT_CONFIG_PATH.parent / name: (source / name).read_bytes() for name in STARTER_FILES
    }
    config_text = (source / DEFAULT_CONFIG_PATH.name).read_text()
    out[directory / ENV_FILE] = env_template(config_text).encode()
    return out


def write(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` through a new file renamed into place: a symlink at
    ``path`` (an existing ``.env`` pointing elsewhere) is replaced, its target never
    written, and the ``.env`` is 0600 from its first byte whatever the umask."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = 0o600 if path.name == ENV_FILE else 0o644
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)  # the umask may have narrowed (or, for .env, not mattered)
            fh.write(content)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="offload init",
        description=f"Write a starter {DEFAULT_CONFIG_PATH} (with the recipe it names) and a .env template.",
    )
    parser.add_argument("--dir", default=".", help="where to write them (default: the working directory)")
    parser.add_argument("--force", action="store_true", help="overwrite files that are already there")
    opts = parser.parse_args(argv)
    directory = Path(opts.dir)
    files = planned_files(directory)
    existing = [str(p) for p in files if p.exists() or p.is_symlink()]
    if existing and not opts.force:
        print(
            f"offload init: {', '.join(existing)} already there: nothing written (--force overwrites)",
            file=sys.stderr,
        )
        return 2
    try:
        for path, content in files.items():
            write(path, content)
    except OSError as exc:
        print(f"offload init: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    config_text = (starter_dir() / DEFAULT_CONFIG_PATH.name).read_text()
    secrets = [var for var, default in env_references(config_text).items() if default is None]
    go = "" if directory == Path(".") else f"cd {shlex.quote(str(directory))} && "
    print(f"wrote {', '.join(str(p) for p in files)}")
    print(f"next: fill in {directory / ENV_FILE} ({', '.join(secrets)}), then run the proxy with")
    print(f"  {go}set -a && . ./.env && set +a && offload serve")
    return 0
