"""Compile translated kernels (and the runtime library) with g++, with an on-disk cache.

Layout under ``<cache root>/cpu`` (the root is ``$KLTRANS_CACHE_DIR``, else
``$XDG_CACHE_HOME/kltrans``, else ``~/.cache/kltrans``; read on every call):

``rt/<key>/libklrt.so``
    the runtime (``runtime/kl_runtime.cpp`` + the context switch), keyed by the sha256 of
    the runtime sources, the flags and the compiler version;
``pch/<key>/kl_cuda_runtime.h.gch``
    the runtime header precompiled for the module flags (keyed by them, the runtime
    sources and the compiler version), put first on a module's include path: it halves
    the compile of a small kernel; g++ reads the header as text where it does not fit;
``mod/<key[:2]>/<key>.so`` and ``<key>.json``
    one kernel module and its record (ok, the error for a failed compile, the compile
    time, the module's sha256). The key is the sha256 of the translated source, the
    translated local headers, the flags, the runtime header contents, the runtime key and
    the compiler version. Failed compiles are cached too.

Writes are atomic: g++ writes into a private temporary directory under the cache root,
the result is moved into place with :func:`os.replace`, and the record (written the
same way, after the module) names the module's sha256, so a reader sees a complete
entry or a miss, never a partial one, and concurrent processes compiling the same key
both produce valid entries (the last rename wins).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass

from kltrans.gate.cpu.translate import EmulationError, Translation
from kltrans import cachedir
from kltrans.syntax.files import atomic_write

KEY_SCHEME = 1
RUNTIME_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime")
RUNTIME_HEADER = "kl_cuda_runtime.h"
RUNTIME_SOURCES = ("kl_runtime.cpp", "kl_switch_x86_64.S")
RUNTIME_FILES = (RUNTIME_HEADER, "kl_empty.h") + RUNTIME_SOURCES

# -O2: the emulator spends its time in kernel code and barriers; -O1 compiles ~15% faster
# but runs slower. The -f flags keep C++ close to what CUDA code expects: no strict
# aliasing (kernels reinterpret shared memory freely), wrapping signed overflow, loops
# that spin on memory are not assumed to terminate, no FMA contraction, no errno from
# math; large frames probe their stack so an overflow hits the guard page; -g1 gives line
# tables so a crash or a timeout is mapped back to a CUDA line with addr2line.
DEFAULT_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden", "-fno-strict-aliasing",
                 "-fwrapv", "-fno-finite-loops", "-fno-math-errno", "-ffp-contract=off",
                 "-fstack-clash-protection", "-g1", "-fdiagnostics-plain-output",
                 "-fmax-errors=20")
RUNTIME_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden", "-pthread", "-g1")


def compiler() -> str:
    return os.environ.get("KLTRANS_CXX") or "g++"


@functools.lru_cache(maxsize=8)
def compiler_version(cxx: str | None = None) -> str:
    cxx = cxx or compiler()
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=60)
        machine = subprocess.run([cxx, "-dumpmachine"], capture_output=True, text=True,
                                 timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise EmulationError("compile", f"cannot run the C++ compiler {cxx!r}: {e}") from None
    first = out.stdout.splitlines()[0] if out.stdout else cxx
    return f"{first} [{machine.stdout.strip()}]"


def cache_root() -> str:
    """The CPU backend's folder of the cache (:func:`kltrans.cachedir.cache_root`)."""
    return os.path.join(cachedir.cache_root(), "cpu")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_sha(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _workdir(root: str) -> str:
    d = os.path.join(root, "tmp")
    os.makedirs(d, exist_ok=True)
    return tempfile.mkdtemp(dir=d, prefix="build-")


@functools.lru_cache(maxsize=4)
def _runtime_contents() -> tuple[tuple[str, bytes], ...]:
    out = []
    for name in RUNTIME_FILES:
        with open(os.path.join(RUNTIME_DIR, name), "rb") as f:
            out.append((name, f.read()))
    return tuple(out)


def runtime_flags() -> tuple[str, ...]:
    """Flags for libklrt.so; swapcontext replaces the assembly switch off x86-64 (or with
    ``KLTRANS_CPU_UCONTEXT=1``, to exercise that path)."""
    return RUNTIME_FLAGS + (() if _use_asm() else ("-DKL_FORCE_UCONTEXT",))


def runtime_key() -> str:
    h = hashlib.sha256()
    h.update(f"kltrans-cpu-runtime:{KEY_SCHEME}\n".encode())
    h.update(compiler_version().encode() + b"\n")
    h.update(" ".join(runtime_flags()).encode() + b"\n")
    for name, data in _runtime_contents():
        h.update(name.encode() + b"\0" + _sha(data).encode() + b"\n")
    return h.hexdigest()


def build_runtime() -> str:
    """Path of libklrt.so for this runtime version (compiled on first use, cached)."""
    root = cache_root()
    key = runtime_key()
    final = os.path.join(root, "rt", key, "libklrt.so")
    if os.path.isfile(final):
        return final
    work = _workdir(root)
    try:
        out = os.path.join(work, "libklrt.so")
        sources = [os.path.join(RUNTIME_DIR, s) for s in RUNTIME_SOURCES
                   if s.endswith(".cpp") or _use_asm()]
        cmd = [compiler(), *runtime_flags(), "-shared", "-I", RUNTIME_DIR, *sources,
               "-o", out, "-lpthread"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise EmulationError("compile", "building the emulator runtime failed:\n" +
                                 proc.stderr[-4000:], log=proc.stderr)
        os.makedirs(os.path.dirname(final), exist_ok=True)
        os.replace(out, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final


def build_pch(flags: tuple[str, ...]) -> str | None:
    """A folder holding the runtime header precompiled for ``flags`` (built on first use,
    cached), to put before the runtime folder on the include path: parsing the header is
    about half of compiling a small kernel. None when it cannot be built, or with
    ``KLTRANS_CPU_PCH=0``: g++ then reads the header as text, as it also does whenever the
    precompiled one does not fit the flags -- the module is the same either way."""
    if os.environ.get("KLTRANS_CPU_PCH") == "0":
        return None
    root = cache_root()
    h = hashlib.sha256()
    h.update(f"kltrans-cpu-pch:{KEY_SCHEME}\n{compiler_version()}\n{' '.join(flags)}\n".encode())
    for name, data in _runtime_contents():
        h.update(name.encode() + b"\0" + _sha(data).encode() + b"\n")
    final = os.path.join(root, "pch", h.hexdigest())
    if os.path.isfile(os.path.join(final, RUNTIME_HEADER + ".gch")):
        return final
    work = _workdir(root)
    try:
        shutil.copy(os.path.join(RUNTIME_DIR, RUNTIME_HEADER), work)
        proc = subprocess.run([compiler(), *flags, "-I", RUNTIME_DIR, "-x", "c++-header",
                               os.path.join(work, RUNTIME_HEADER), "-o",
                               os.path.join(work, RUNTIME_HEADER + ".gch")],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return None
        os.makedirs(os.path.dirname(final), exist_ok=True)
        try:
            os.rename(work, final)  # atomic: a whole folder or none
        except OSError:  # another process made it first
            pass
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final if os.path.isfile(os.path.join(final, RUNTIME_HEADER + ".gch")) else None


def _use_asm() -> bool:
    if os.environ.get("KLTRANS_CPU_UCONTEXT") == "1":
        return False
    machine = compiler_version()
    return "x86_64" in machine or "amd64" in machine


# ------------------------------------------------------------------------ modules
@dataclass
class Built:
    key: str
    path: str | None  # the .so (None when the compile failed)
    record: dict
    cached: bool


def module_key(t: Translation, flags: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    payload = {
        "scheme": KEY_SCHEME,
        "source": _sha(t.source.encode("utf-8")),
        "headers": sorted((k, _sha(v.encode("utf-8"))) for k, v in t.headers.items()),
        "flags": list(flags),
        "runtime_header": _sha(dict(_runtime_contents())[RUNTIME_HEADER]),
        "runtime": runtime_key(),
        "compiler": compiler_version(),
    }
    h.update(json.dumps(payload, sort_keys=True).encode())
    return h.hexdigest()


def _entry_paths(key: str) -> tuple[str, str]:
    d = os.path.join(cache_root(), "mod", key[:2])
    return os.path.join(d, key + ".json"), os.path.join(d, key + ".so")


def _load_record(key: str) -> dict | None:
    jpath, spath = _entry_paths(key)
    try:
        with open(jpath, "rb") as f:
            rec = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(rec, dict) or rec.get("key") != key or rec.get("scheme") != KEY_SCHEME:
        return None
    if rec.get("ok"):
        try:
            if os.path.getsize(spath) != rec.get("size") or _file_sha(spath) != rec.get("sha256"):
                return None
        except OSError:
            return None
    return rec


_DIAG = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?:(?P<col>\d+):)? "
                   r"(?P<sev>error|fatal error|warning|note): (?P<msg>.*)$")


def map_errors(stderr: str, user_paths: list[str]) -> tuple[str, int | None, str | None]:
    """(message, line, path) of the first error, pointing into the CUDA sources."""
    entries = []
    for raw in stderr.splitlines():
        m = _DIAG.match(raw)
        if m:
            entries.append((m.group("file"), int(m.group("line")), m.group("sev"),
                            m.group("msg"), raw))
        elif "required from" in raw or "In instantiation" in raw:
            mm = re.match(r"^(.*?):(\d+):(?:\d+:)?\s+(.*)$", raw)
            if mm:
                entries.append((mm.group(1), int(mm.group(2)), "note", mm.group(3), raw))
    users = set(user_paths)
    first = next((i for i, e in enumerate(entries) if e[2] in ("error", "fatal error")), None)
    if first is None:
        tail = stderr.strip().splitlines()
        return (tail[-1] if tail else "compile failed"), None, None
    f, line, _sev, msg, _raw = entries[first]
    if f in users:
        return msg, line, f
    # an error inside the runtime header: point at the user's code that led there (the
    # outermost macro expansion, else the first user location in the notes that follow)
    nxt = next((i for i in range(first + 1, len(entries))
                if entries[i][2] in ("error", "fatal error")), len(entries))
    notes = entries[first + 1:nxt]
    macro = [e for e in notes if e[0] in users and "in expansion of macro" in e[3]]
    if macro:
        e = macro[-1]
        return f"{msg} (in {os.path.basename(f)}:{line})", e[1], e[0]
    for e in notes + entries[:first][::-1]:
        if e[0] in users:
            return f"{msg} (in {os.path.basename(f)}:{line})", e[1], e[0]
    return msg, None, None


def compile_translation(t: Translation, extra_flags=()) -> Built:
    flags = tuple(DEFAULT_FLAGS) + tuple(extra_flags)
    key = module_key(t, flags)
    rec = _load_record(key)
    jpath, spath = _entry_paths(key)
    if rec is not None:
        return Built(key, spath if rec.get("ok") else None, rec, True)
    root = cache_root()
    work = _workdir(root)
    t0 = time.perf_counter()
    try:
        src = os.path.join(work, "kernel.cpp")
        with open(src, "w", encoding="utf-8") as f:
            f.write(t.source)
        for name, text in t.headers.items():
            with open(os.path.join(work, name), "w", encoding="utf-8") as f:
                f.write(text)
        out = os.path.join(work, "kernel.so")
        # -fdebug-prefix-map: the module's bytes do not depend on the temporary directory
        pch = build_pch(flags)
        cmd = [compiler(), *flags, f"-fdebug-prefix-map={work}=.", "-shared",
               *(("-I", pch) if pch else ()), "-I", RUNTIME_DIR, "-I", work, src, "-o", out,
               "-lm"]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=work)
        seconds = time.perf_counter() - t0
        log = proc.stderr.replace(work + os.sep, "")
        if proc.returncode != 0:
            msg, line, path = map_errors(log, t.paths)
            rec = {"scheme": KEY_SCHEME, "key": key, "ok": False, "message": msg, "line": line,
                   "path": path, "log": log[-20000:], "seconds": seconds}
        else:
            os.makedirs(os.path.dirname(spath), exist_ok=True)
            size = os.path.getsize(out)
            digest = _file_sha(out)
            os.replace(out, spath)
            rec = {"scheme": KEY_SCHEME, "key": key, "ok": True, "size": size, "sha256": digest,
                   "log": log[-20000:], "seconds": seconds, "kernel": t.kernel,
                   "name_expression": t.name_expression}
        atomic_write(jpath, json.dumps(rec, indent=1).encode("utf-8"), durable=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    cachedir.maybe_prune()
    return Built(key, spath if rec["ok"] else None, rec, False)


@dataclass
class ModuleBuild:
    """A compiled kernel module not loaded yet (:meth:`load` runs its constructors)."""

    path: str
    translation: Translation
    built: Built
    runtime: str

    def load(self):
        from kltrans.gate.cpu.emulator import CpuModule

        rec = self.built.record
        return CpuModule(self.path, self.translation, self.built.key, self.built.cached,
                         float(rec.get("seconds", 0.0)), self.runtime)


def build_module(unit, kernel: str, name_expression: str | None = None, extra_flags=(),
                 include_dirs=()) -> ModuleBuild:
    """Translate ``unit`` and compile it for ``kernel`` (cached), without loading it;
    raises :class:`EmulationError` (``compile`` with g++'s first error mapped to the
    CUDA line, or ``unsupported`` at translation time)."""
    from kltrans.gate.cpu.translate import translate

    t = translate(unit, kernel, name_expression, include_dirs=include_dirs)
    rt = build_runtime()
    built = compile_translation(t, tuple(extra_flags))
    if built.path is None and len(t.entries) > 1:
        # the module also names the file's other kernels: make sure an error in one of
        # them is not blamed on this one
        t = translate(unit, kernel, name_expression, include_dirs=include_dirs,
                      all_kernels=False)
        built = compile_translation(t, tuple(extra_flags))
    rec = built.record
    if built.path is None:
        raise EmulationError("compile", rec.get("message") or "compile failed",
                             line=rec.get("line"), path=rec.get("path"), log=rec.get("log"))
    return ModuleBuild(built.path, t, built, rt)


def build(unit, kernel: str, name_expression: str | None = None, extra_flags=(),
          include_dirs=()):
    """:func:`build_module`, loaded in this process: a
    :class:`~kltrans.gate.cpu.emulator.CpuModule` (``module.cached`` says whether the
    module came from the cache). Only for trusted code: the gate loads candidates in a
    sandboxed process (:mod:`kltrans.gate.kernel_process`)."""
    return build_module(unit, kernel, name_expression, extra_flags, include_dirs).load()
