"""Confine the process that runs untrusted kernel code on the CPU.

A CPU-backend kernel is compiled as host C++ and loaded into a process; anything a kernel
file can express in C++ runs there: static constructors, calls to libc, inline assembly.
:func:`confine` turns the calling process (a fresh child, forked for one job) into a
sandbox before that code is loaded, so constructors run under it too:

* **process**: a new session and process group (the parent kills the group as a whole),
  ``PR_SET_NO_NEW_PRIVS``, no core dumps, not dumpable (no ptrace of it, no
  ``/proc/<pid>/mem`` of it by a sibling);
* **files and descriptors**: every descriptor closed but stdin (``/dev/null``), stdout and
  stderr (the bounded capture files) and the channel; an empty environment; an empty
  working directory;
* **resources**: ``RLIMIT_DATA`` (memory), ``RLIMIT_FSIZE`` (the capture files cannot grow
  past the bound; ``SIGXFSZ`` ignored, so a write past it fails), ``RLIMIT_NOFILE``;
* **Landlock** (Linux 5.13+, where the kernel has it): the filesystem is read-only and
  only beneath the directories the job needs (the kernel module, system libraries, the
  Python installation), nothing else readable (no ``$HOME``, no ``/proc/<pid>/environ``
  of the parent); no TCP; no signals to processes outside the sandbox (ABI 6);
* **seccomp** (libseccomp, through ``pyseccomp``): starting processes or programs
  (``fork``, ``clone`` without ``CLONE_THREAD``, ``execve``), sockets, ``ptrace`` and
  cross-process memory access, signals to other processes, opening a file for writing,
  creating, removing, renaming or changing files, namespaces, mounts, module loading,
  ``io_uring``, BPF, keyrings and terminal injection (``TIOCSTI``) kill the process
  (``SIGSYS``: the caller reports a forbidden system call). The filter is a deny list
  over a default of allow, not an allow list: the emulator, numpy and the interpreter
  keep working on any libc, and Landlock closes the filesystem where a syscall is
  missing from the list.

Before a module is loaded, :func:`forbidden_imports` reads the functions it imports
(``nm -D``): a kernel's code may reach the runtime, the math library, ``printf``,
``malloc`` (the device heap) and the C++ support functions, nothing else (no ``system``, ``getenv``, ``dlsym``, no
CPython API): such a module is refused before any of its code runs.

:func:`confine` raises :class:`SandboxError` when it cannot install the seccomp filter
(libseccomp missing): the caller must not run the kernel then. A kernel without Landlock
runs with the seccomp filter alone; :func:`confine` returns what it installed.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
import sys

PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
CLONE_THREAD = 0x00010000
O_WRITE_FLAGS = (os.O_WRONLY, os.O_RDWR, os.O_CREAT, os.O_TRUNC, os.O_APPEND)
TIOCSTI, TIOCLINUX = 0x5412, 0x541C

# syscalls that kill the process (the ones a libc does not have on an architecture are
# skipped): programs and processes, other processes, sockets, changing the filesystem,
# privileges, namespaces and mounts, kernel facilities nothing in a kernel run needs
DENIED = (
    "execve", "execveat", "fork", "vfork",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_open", "pidfd_getfd",
    "pidfd_send_signal", "tkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    "creat", "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat",
    "rmdir", "link", "linkat", "symlink", "symlinkat", "mknod", "mknodat", "chmod", "fchmod",
    "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "truncate",
    "ftruncate", "utime", "utimes", "utimensat", "futimesat", "setxattr", "lsetxattr",
    "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "name_to_handle_at",
    "open_by_handle_at",
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid",
    "setfsgid", "setgroups", "capset", "personality", "chroot", "pivot_root", "mount",
    "umount2", "unshare", "setns", "mount_setattr", "open_tree", "move_mount", "fsopen",
    "fsconfig", "fsmount", "fspick",
    "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "init_module", "finit_module",
    "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff",
    "sethostname", "setdomainname", "iopl", "ioperm", "acct", "quotactl", "syslog",
    "settimeofday", "clock_settime", "adjtimex", "clock_adjtime", "fanotify_init",
    "lookup_dcookie", "migrate_pages", "move_pages", "process_madvise", "vhangup",
)
# syscalls whose arguments glibc cannot pass through a filter (a struct): ENOSYS makes
# glibc fall back to the filterable form (clone3 -> clone, openat2 -> openat)
NOT_IMPLEMENTED = ("clone3", "openat2")

# Landlock (linux/landlock.h)
_LL_CREATE, _LL_ADD_RULE, _LL_RESTRICT = 444, 445, 446  # x86_64 and aarch64 share them
_LL_VERSION = 1
_LL_PATH_BENEATH = 1
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_ALL_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1,
                 5: (1 << 16) - 1}
NET_ALL = (1 << 0) | (1 << 1)  # bind and connect TCP, ABI 4
SCOPE_ALL = (1 << 0) | (1 << 1)  # abstract unix sockets, signals, ABI 6


class SandboxError(RuntimeError):
    """The kernel must not run: the sandbox could not be installed (``kind`` "sandbox"),
    or the module imports what a kernel cannot call (``kind`` "host-call")."""

    def __init__(self, message: str, kind: str = "sandbox"):
        super().__init__(message)
        self.kind = kind


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _prctl(option: int, arg: int) -> None:
    if _libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0) != 0:
        e = ctypes.get_errno()
        raise SandboxError(f"prctl({option}) failed: {os.strerror(e)}")


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none."""
    v = _libc.syscall(_LL_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_LL_VERSION))
    return int(v) if v > 0 else 0


def read_roots(extra=()) -> list[str]:
    """Directories a kernel process may read beneath: system libraries, the interpreter
    and its packages, the gate's own runtime, and ``extra`` (the kernel module's folder)."""
    import sysconfig

    roots = {"/lib", "/lib32", "/lib64", "/usr/lib", "/usr/lib32", "/usr/lib64",
             "/usr/local/lib", "/etc/ld.so.cache", "/sys/devices/system/cpu",
             "/usr/share/zoneinfo"}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        roots.add(sysconfig.get_paths()[key])
    roots.update({sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))})
    roots.update(extra)
    return sorted(r for r in roots if r and os.path.exists(r))


def _landlock(read_beneath: list[str]) -> int:
    abi = landlock_abi()
    if abi < 1:
        return 0
    fs_all = FS_ALL_BY_ABI.get(abi, FS_ALL_BY_ABI[5])
    attr = _RulesetAttr(fs_all, NET_ALL if abi >= 4 else 0, SCOPE_ALL if abi >= 6 else 0)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    fd = _libc.syscall(_LL_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        raise SandboxError(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        for path in read_beneath:
            try:
                pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            access = FS_READ_FILE | FS_EXECUTE
            if os.path.isdir(path):
                access |= FS_READ_DIR
            rule = _PathBeneath(access, pfd)
            rc = _libc.syscall(_LL_ADD_RULE, ctypes.c_int(fd), ctypes.c_int(_LL_PATH_BENEATH),
                               ctypes.byref(rule), ctypes.c_uint32(0))
            os.close(pfd)
            if rc != 0:
                raise SandboxError(f"landlock_add_rule({path}): "
                                   f"{os.strerror(ctypes.get_errno())}")
        if _libc.syscall(_LL_RESTRICT, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            raise SandboxError(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)
    return abi


def _seccomp_filter():
    """The filter (built, not loaded: loading it is the last step of :func:`confine`)."""
    try:
        import pyseccomp as sc
    except (ImportError, RuntimeError) as e:  # RuntimeError: libseccomp.so not found
        raise SandboxError(f"no seccomp: {e} (the CPU backend needs libseccomp, "
                           "e.g. the libseccomp2 package)") from None
    kill = sc.KILL_PROCESS
    f = sc.SyscallFilter(sc.ALLOW)

    def deny(action, name, *args) -> None:
        try:
            f.add_rule(action, name, *args)
        except (OSError, RuntimeError, ValueError):  # not a syscall on this architecture
            pass

    for name in DENIED:
        deny(kill, name)
    for name in NOT_IMPLEMENTED:
        deny(sc.ERRNO(errno.ENOSYS), name)
    deny(kill, "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))
    pid = os.getpid()
    deny(kill, "kill", sc.Arg(0, sc.NE, pid))
    deny(kill, "tgkill", sc.Arg(0, sc.NE, pid))
    for flag in O_WRITE_FLAGS:
        deny(kill, "openat", sc.Arg(2, sc.MASKED_EQ, flag, flag))
        deny(kill, "open", sc.Arg(1, sc.MASKED_EQ, flag, flag))
    for req in (TIOCSTI, TIOCLINUX):
        deny(kill, "ioctl", sc.Arg(1, sc.EQ, req))
    return f


def confine(*, keep_fds=(), workdir: str | None = None, read_beneath=(),
            memory_bytes: int | None = None, capture_bytes: int = 1 << 20) -> dict:
    """Make this process a sandbox (see the module docstring); returns what was
    installed: ``{"seccomp": True, "landlock": abi or 0, "memory_bytes", ...}``."""
    seccomp = _seccomp_filter()  # imports libseccomp while files can still be read
    try:
        os.setsid()
    except OSError:  # already a session leader
        pass
    keep = sorted({0, 1, 2, *keep_fds})
    last = 3
    for fd in keep[3:] if len(keep) > 3 else []:
        os.closerange(last, fd)
        last = fd + 1
    os.closerange(last, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    os.environ.clear()
    sys.dont_write_bytecode = True  # a late import must not try to write a .pyc
    if workdir:
        os.chdir(workdir)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (capture_bytes, capture_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    if memory_bytes:
        resource.setrlimit(resource.RLIMIT_DATA, (memory_bytes, memory_bytes))
    _prctl(PR_SET_DUMPABLE, 0)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    abi = _landlock(read_roots(read_beneath))
    seccomp.load()  # libseccomp sets no_new_privs first (its default)
    return {"seccomp": True, "landlock": abi, "memory_bytes": memory_bytes,
            "capture_bytes": capture_bytes}


# what a kernel module may import: the emulator's runtime, the C math library, printf,
# the C++ support functions and what every shared object names
_MATH = ("acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh erf erfc exp "
         "exp2 exp10 expm1 fabs fdim floor fma fmax fmin fmod frexp hypot ilogb ldexp lgamma "
         "llrint llround log log10 log1p log2 logb lrint lround modf nan nearbyint nextafter "
         "pow remainder remquo rint round scalbln scalbn sin sincos sinh sqrt tan tanh "
         "tgamma trunc j0 j1 jn y0 y1 yn").split()
ALLOWED_IMPORTS = frozenset(
    [m + sfx for m in _MATH for sfx in ("", "f", "l")]
    + ["malloc", "free",  # the device heap (bounded by the memory limit)
       "memcpy", "memmove", "memset", "memcmp", "strcmp", "strncmp", "strlen", "snprintf",
       "printf", "vprintf", "puts", "putchar", "abort", "__assert_fail", "__stack_chk_fail",
       "__cxa_finalize", "__cxa_atexit", "__cxa_guard_acquire", "__cxa_guard_release",
       "__cxa_guard_abort", "__cxa_pure_virtual", "__cxa_begin_catch", "__cxa_end_catch",
       "__cxa_rethrow", "__gxx_personality_v0", "_Unwind_Resume", "__gmon_start__",
       "_ITM_registerTMCloneTable", "_ITM_deregisterTMCloneTable", "_Znwm", "_Znam",
       "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm", "_ZnwmSt11align_val_t",
       "_ZdlPvSt11align_val_t", "_ZdlPvmSt11align_val_t", "__dso_handle"]
    # the same functions checked by _FORTIFY_SOURCE (on by default in some distributions'
    # g++, e.g. Ubuntu's): snprintf becomes __snprintf_chk
    + [f"__{n}_chk" for n in ("memcpy", "memmove", "memset", "snprintf", "vsnprintf",
                              "printf", "vprintf", "sprintf", "vsprintf")])


def module_imports(path: str) -> list[str]:
    """The functions and variables a shared object takes from others (``nm -D``)."""
    import subprocess

    try:
        p = subprocess.run(["nm", "-D", "--undefined-only", path], capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SandboxError(f"cannot list the imports of {path}: {e} (nm, from binutils, "
                           "is needed)") from None
    if p.returncode != 0:
        raise SandboxError(f"nm -D {path}: {p.stderr.strip()[:300]}")
    return [ln.split()[-1].split("@")[0] for ln in p.stdout.splitlines() if ln.strip()]


def forbidden_imports(path: str) -> list[str]:
    """What a kernel module imports beyond :data:`ALLOWED_IMPORTS` and the runtime."""
    return sorted({n for n in module_imports(path)
                   if n not in ALLOWED_IMPORTS and not n.startswith("kl_rt_")})
