"""Run readers' SPARQL where the engine cannot reach the network.

The guard (:mod:`ratified_rdf.queries.guard`) refuses SERVICE by the parse tree, but it reads
the text with rdflib's parser and Oxigraph reads it with its own: wherever the two disagree,
a query the guard passed could still make Oxigraph fetch a URL. So readers' queries also run
on threads that *cannot* open an Internet socket: a seccomp filter, installed on the thread
itself (filters are per thread, and inherited by threads it starts), makes ``socket()`` fail
with ``EACCES`` for the IPv4 and IPv6 families, and ``io_uring_setup`` with it. Unix sockets
and files still work; the rest of the process, and its other threads, are untouched.

The filter needs Linux on x86-64 or AArch64; elsewhere :func:`forbid_network` returns
``False`` and the guard alone stands (:data:`NETWORK_SEALED` says which, and ``ratified
serve`` says so when it starts).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import platform
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Final, TypeVar

_T = TypeVar("_T")

# <linux/filter.h>, <linux/seccomp.h>, <linux/audit.h>, <linux/prctl.h>
_BPF_LD_W_ABS: Final = 0x20
_BPF_JEQ_K: Final = 0x15
_BPF_JGE_K: Final = 0x35
_BPF_RET_K: Final = 0x06
_SECCOMP_RET_ALLOW: Final = 0x7FFF0000
_SECCOMP_RET_ERRNO: Final = 0x00050000
_SECCOMP_MODE_FILTER: Final = 2
_PR_SET_NO_NEW_PRIVS: Final = 38
_PR_SET_SECCOMP: Final = 22
_AF_INET: Final = 2
_AF_INET6: Final = 10
_X32_SYSCALL_BIT: Final = 0x40000000

# machine -> (AUDIT_ARCH_*, __NR_socket, __NR_io_uring_setup)
_ARCHES: Final[dict[str, tuple[int, int, int]]] = {
    "x86_64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
}


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter)))


def _program(arch: int, nr_socket: int, nr_io_uring: int) -> list[tuple[int, int, int, int]]:
    """The BPF program: deny inet sockets and io_uring, allow everything else."""
    deny = _SECCOMP_RET_ERRNO | errno.EACCES
    return [
        (_BPF_LD_W_ABS, 0, 0, 4),  # 0: seccomp_data.arch
        (_BPF_JEQ_K, 1, 0, arch),  # 1: the ABI we know -> 3
        (_BPF_RET_K, 0, 0, deny),  # 2: any other ABI: deny (fail closed)
        (_BPF_LD_W_ABS, 0, 0, 0),  # 3: seccomp_data.nr
        (_BPF_JGE_K, 0, 1, _X32_SYSCALL_BIT),  # 4: x32 numbering -> 5, else -> 6
        (_BPF_RET_K, 0, 0, deny),  # 5
        (_BPF_JEQ_K, 0, 1, nr_io_uring),  # 6: io_uring_setup -> 7, else -> 8
        (_BPF_RET_K, 0, 0, deny),  # 7
        (_BPF_JEQ_K, 0, 3, nr_socket),  # 8: socket() -> 9, else -> 12
        (_BPF_LD_W_ABS, 0, 0, 16),  # 9: seccomp_data.args[0], low 32 bits: the family
        (_BPF_JEQ_K, 2, 0, _AF_INET),  # 10: -> 13
        (_BPF_JEQ_K, 1, 0, _AF_INET6),  # 11: -> 13
        (_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW),  # 12
        (_BPF_RET_K, 0, 0, deny),  # 13
    ]


def _supported() -> tuple[int, int, int] | None:
    if not sys.platform.startswith("linux") or sys.byteorder != "little":
        return None
    return _ARCHES.get(platform.machine())


NETWORK_SEALED: Final = _supported() is not None
"""Whether this platform can seal a thread off the network (Linux on x86-64 or AArch64)."""

_sealed = threading.local()


def forbid_network() -> bool:
    """Forbid the calling thread (and threads it starts later) to open IPv4 or IPv6 sockets,
    for good. Returns whether the filter is in place (``False`` where the platform has no
    seccomp we know). Calling it again on a sealed thread does nothing."""
    if getattr(_sealed, "done", False):
        return True
    arch = _supported()
    if arch is None:
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    steps = _program(*arch)
    filters = (_SockFilter * len(steps))(*(_SockFilter(*step) for step in steps))
    program = _SockFprog(len(steps), filters)
    prctl = libc.prctl
    prctl.restype = ctypes.c_int
    if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    if prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"seccomp refused the network filter: {os.strerror(error)}")
    _sealed.done = True
    return True


def _seal_worker() -> None:
    forbid_network()


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
OFFLINE_THREADS: Final = 4
"""Threads that run library readers' SPARQL, each sealed off the network."""


def run_offline(job: Callable[[], _T]) -> _T:
    """Run ``job`` on a thread sealed off the network (see :func:`forbid_network`) and return
    its result; the caller's own thread keeps its network."""
    global _pool
    if getattr(_sealed, "done", False):
        return job()
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(
                OFFLINE_THREADS, thread_name_prefix="ratified-offline", initializer=_seal_worker
            )
        pool = _pool
    return pool.submit(job).result()


__all__ = ["NETWORK_SEALED", "OFFLINE_THREADS", "forbid_network", "run_offline"]
