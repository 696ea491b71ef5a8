"""What the installed distribution carries, and whether its import names are its own.

The checkout keeps the Alembic scripts in ``migrations/`` and the starter config in
``config/``, top-level folders beside ``router/``. A wheel carries the same files
inside the ``router`` package (``router/migrations``, ``router/starter``: the
``package-dir`` mapping in pyproject.toml), so that the distribution installs only
two top-level import names, ``router`` and ``classifier``. Both are data read by
path (Alembic wants a directory), so :func:`data_dir` finds them either way.

Those two names are generic enough that another distribution may install its own
``router`` or ``classifier`` into the same environment, or a folder of that name
may sit earlier on ``sys.path``. :func:`import_clash` says so in one line before a
command runs with somebody else's code.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
from importlib import metadata
from pathlib import Path

import router

DISTRIBUTION = "offload-router"
IMPORT_NAMES = ("router", "classifier")

_PACKAGE = Path(router.__file__).resolve().parent


def data_dir(packaged: str, checkout: str) -> Path:
    """``router/<packaged>`` in an installed wheel, else the checkout's top-level ``<checkout>``."""
    inside = _PACKAGE / packaged
    return inside if inside.is_dir() else _PACKAGE.parent / checkout


def migrations_dir() -> Path:
    """The Alembic script directory (``env.py``, ``versions/``)."""
    return data_dir("migrations", "migrations")


def starter_dir() -> Path:
    """The starter config: ``router.yaml`` (what ``make serve`` runs) and the recipe it names."""
    return data_dir("starter", "config")


def import_clash() -> str | None:
    """One line naming an import name of ours that resolves to someone else's files, or None.

    Installed from a wheel, ``router`` and ``classifier`` must be the files this
    distribution's RECORD lists, with the recorded hashes (pip lets a second
    distribution overwrite them in place). From a checkout (editable or not
    installed at all) there is no record of files: both must be folders of the
    same checkout.
    """
    recorded = _recorded_files()
    for name in IMPORT_NAMES:
        origin = _origin(name)
        if origin is None:
            continue  # not importable: whoever imports it says so (the classifier is optional)
        if recorded is None:
            if origin.parent.parent != _PACKAGE.parent:
                return f"import name {name!r} resolves to {origin}, outside this checkout ({_PACKAGE.parent})"
            continue
        entry = recorded.get(f"{name}/__init__.py")
        if entry is None or entry[0] != origin:
            return f"import name {name!r} resolves to {origin}, which is not a file of {DISTRIBUTION}"
        if entry[1] and _sha256(origin) != entry[1]:
            owner = _other_owner(f"{name}/__init__.py")
            by = f" by {owner}" if owner else " by another distribution"
            return f"import name {name!r}: {origin} was overwritten{by}"
    return None


def _recorded_files() -> dict[str, tuple[Path, str]] | None:
    """``{"router/__init__.py": (path, sha256)}`` when the running ``router`` is the installed one."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    files: dict[str, tuple[Path, str]] = {}
    for f in dist.files or []:
        if f.name == "__init__.py" and len(f.parts) == 2 and f.parts[0] in IMPORT_NAMES:
            digest = f.hash.value if f.hash and f.hash.mode == "sha256" else ""
            files[str(f)] = (Path(str(dist.locate_file(f))).resolve(), digest)
    own = files.get("router/__init__.py")
    if own is None or own[0] != _PACKAGE / "__init__.py":
        return None  # an editable install, or a checkout run beside an installed copy
    return files


def _origin(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    return Path(spec.origin).resolve() if spec and spec.origin else None


def _sha256(path: Path) -> str:
    """The file's hash as RECORD writes it (urlsafe base64, unpadded)."""
    return base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=").decode()


def _other_owner(record_path: str) -> str | None:
    """``name version`` of another installed distribution whose RECORD lists ``record_path``."""
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name and name.lower() != DISTRIBUTION and any(str(f) == record_path for f in dist.files or []):
            return f"{name} {dist.version}"
    return None
