"""The sandbox's first act, run as ``python -I -S -c <this file> <settings>``: contain the
process, then ``exec`` the case's program in its place.

It runs in a fresh interpreter of its own (no threads, nothing inherited but what
:mod:`router.gate.sandbox` passes), so it can do what a ``preexec_fn`` must not. In order:
a network namespace of its own, empty (root only); resource limits; a throwaway user
(root only); no new privileges; Landlock (Linux 5.13+): read-only access to the
interpreter's and the system's files, read-write to its own folder only, no TCP (ABI 4+),
no signals or abstract sockets outside its domain (ABI 6+). What applied is written as one
first line to stderr (``offload-jail: ...``); the sandbox strips it and reports it.
Standard library only: nothing of ``router`` is imported here.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import sys

CLONE_NEWNET = 0x40000000
PR_SET_NO_NEW_PRIVS = 38
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # x86_64 and arm64 alike
O_PATH = getattr(os, "O_PATH", 0o10000000)  # Linux: the same value on x86_64 and arm64
READ_DIR_RIGHTS = 1 | 4 | 8  # execute, read file, read dir
FILE_RIGHTS = 1 | 2 | 4  # execute, write file, read file (what a file, not a folder, may get)
TRUNCATE = 1 << 14


def _handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: execute .. make_sym
    if abi >= 2:
        rights |= 1 << 13  # refer
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= 1 << 15  # ioctl_dev
    return rights


def landlock(libc: ctypes.CDLL, read: list[str], write: str, devices: list[str]) -> int:
    """Restrict this process (and what it execs) to ``read`` read-only and ``write`` read-write;
    the Landlock ABI applied (0: not available)."""
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi <= 0:
        return 0
    fs = _handled_fs(abi)
    attr = (ctypes.c_uint64 * 3)(fs, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)  # fs, net (tcp), scoped
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return 0
    file_rights = FILE_RIGHTS | (TRUNCATE if abi >= 3 else 0)
    rules = [(p, READ_DIR_RIGHTS) for p in read] + [(write, fs)] + [(d, file_rights & ~1) for d in devices]
    for path, rights in rules:
        if not os.path.exists(path):
            continue
        if not os.path.isdir(path):
            rights &= file_rights
        fd = os.open(path, O_PATH | os.O_CLOEXEC)
        rule = ctypes.create_string_buffer(12)  # struct landlock_path_beneath_attr, packed
        ctypes.memmove(rule, ctypes.byref(ctypes.c_uint64(rights)), 8)
        ctypes.memmove(ctypes.addressof(rule) + 8, ctypes.byref(ctypes.c_int32(fd)), 4)
        libc.syscall(SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(1), rule, ctypes.c_uint32(0))
        os.close(fd)
    applied = libc.syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) == 0
    os.close(ruleset)
    return abi if applied else 0


def main() -> None:
    settings = json.loads(sys.argv[1])
    libc = ctypes.CDLL(None, use_errno=True)
    applied = []
    root = os.geteuid() == 0
    if root and libc.unshare(CLONE_NEWNET) == 0:
        applied.append("net=namespace")
    for name, value in settings["limits"].items():
        resource.setrlimit(getattr(resource, name), (value, value))
    if root:
        os.setgroups([])
        os.setgid(settings["uid"])
        os.setuid(settings["uid"])
        applied.append(f"uid={settings['uid']}")
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    abi = landlock(libc, settings["read"], settings["dir"], ["/dev/null", "/dev/urandom", "/dev/zero"])
    if abi:
        applied.append(f"landlock={abi}")
    os.write(2, ("offload-jail: " + " ".join(applied) + "\n").encode())
    python = settings["python"]
    os.execv(python, [python, "-I", "-S", "-B", settings["program"]])


if __name__ == "__main__":
    main()
