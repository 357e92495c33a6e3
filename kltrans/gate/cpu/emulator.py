"""Run compiled kernels in this process through ctypes.

:class:`CpuModule` wraps one kernel module (a shared object built by
:mod:`kltrans.gate.cpu.build`). :meth:`CpuModule.launch` packs the arguments by the
kernel's parameter types (read from the module itself, so template instantiations are
exact), runs the whole grid in the runtime (``libklrt.so``, loaded once per process with
``RTLD_GLOBAL``) and returns statistics, or raises :class:`EmulationError`.

The call releases the GIL. A hang ends: the runtime's watchdog (the calling thread)
aborts the launch after ``timeout_s`` (raising ``EmulationError("timeout")`` with the
line the kernel was executing when it can be found) by signalling the worker threads,
which jump out of kernel code. A fault in kernel code (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
a fiber stack overflow) is caught the same way and becomes ``EmulationError("crash")``.
After a timeout or a crash the interrupted kernel code may have left libc locks or
memory in a bad state: run launches in a disposable worker process (the gate does).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import threading

import numpy as np

from kltrans.gate.cpu.translate import EmulationError, Translation

KINDS = {1: "deadlock", 2: "divergent-warp", 3: "timeout", 4: "crash", 5: "unsupported",
         6: "invalid"}


class LaunchCfg(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("smem", ctypes.c_ulonglong), ("seed", ctypes.c_ulonglong),
                ("threads", ctypes.c_int), ("reserved", ctypes.c_int),
                ("timeout_s", ctypes.c_double)]


class LaunchResult(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("line", ctypes.c_int), ("file", ctypes.c_char * 512),
                ("message", ctypes.c_char * 1024), ("blocks", ctypes.c_ulonglong),
                ("fibers", ctypes.c_ulonglong), ("switches", ctypes.c_ulonglong),
                ("barriers", ctypes.c_ulonglong), ("seconds", ctypes.c_double),
                ("threads", ctypes.c_int), ("reserved", ctypes.c_int),
                ("pc_offset", ctypes.c_ulonglong), ("module", ctypes.c_char * 512),
                ("warp_ops", ctypes.c_ulonglong)]


_rt_lock = threading.Lock()
_rt_libs: dict[str, ctypes.CDLL] = {}


def load_runtime(path: str | None = None) -> ctypes.CDLL:
    """Load libklrt.so (building it if needed) with RTLD_GLOBAL; once per process."""
    from kltrans.gate.cpu.build import build_runtime

    path = path or build_runtime()
    with _rt_lock:
        lib = _rt_libs.get(path)
        if lib is None:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            lib.kl_rt_switch_benchmark.restype = ctypes.c_double
            lib.kl_rt_switch_benchmark.argtypes = [ctypes.c_long]
            lib.kl_rt_struct_sizes.restype = ctypes.c_ulonglong
            sizes = int(lib.kl_rt_struct_sizes())
            if (sizes >> 32, sizes & 0xFFFFFFFF) != (ctypes.sizeof(LaunchCfg),
                                                      ctypes.sizeof(LaunchResult)):
                raise EmulationError("compile", f"{path}: the runtime's launch structures do "
                                     "not match emulator.py (a stale runtime?)")
            _rt_libs[path] = lib
        return lib


def switch_cost_ns(iterations: int = 2_000_000) -> float:
    """Nanoseconds per fiber context switch (one direction), measured by the runtime."""
    return float(load_runtime().kl_rt_switch_benchmark(int(iterations)))


def _dim3(v, what: str) -> tuple[int, int, int]:
    if isinstance(v, (int, np.integer)):
        t = (int(v), 1, 1)
    else:
        t = tuple(int(x) for x in v)
        if not 1 <= len(t) <= 3:
            raise EmulationError("invalid", f"{what} must have 1 to 3 dimensions, got {v!r}")
        t = t + (1,) * (3 - len(t))
    if any(x < 1 or x > 0xFFFFFFFF for x in t):
        raise EmulationError("invalid", f"{what} dimensions must be positive, got {v!r}")
    return t  # type: ignore[return-value]


def _bf16_bits(x: float) -> int:
    f = np.array([x], dtype=np.float32).view(np.uint32)[0]
    u = int(f)
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return 0x7FFF
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


_INT_DTYPES = {("i", 1): np.int8, ("i", 2): np.int16, ("i", 4): np.int32, ("i", 8): np.int64,
               ("u", 1): np.uint8, ("u", 2): np.uint16, ("u", 4): np.uint32, ("u", 8): np.uint64}


def _pack(code: str, value, index: int, pname: str) -> bytes:
    """The bytes of one argument for a parameter of type ``code`` (see kl_param_desc)."""
    where = f"argument {index} ({pname})"
    kind = code[0]
    if kind == "p":
        if value is None:
            addr = 0
        elif isinstance(value, np.ndarray):
            if not (value.flags["C_CONTIGUOUS"] or value.flags["F_CONTIGUOUS"]):
                raise EmulationError("invalid", f"{where}: a pointer argument needs a contiguous "
                                     "array")
            addr = value.ctypes.data
        elif isinstance(value, (int, np.integer)):
            addr = int(value)
        elif isinstance(value, ctypes._SimpleCData) or isinstance(value, ctypes.Array) or \
                isinstance(value, ctypes.Structure):
            addr = ctypes.addressof(value)
        elif hasattr(value, "__array_interface__"):
            addr = int(value.__array_interface__["data"][0])
        else:
            raise EmulationError("invalid", f"{where}: expected a numpy array (or an address, "
                                 f"or None) for a pointer parameter, got {type(value).__name__}")
        return int(addr).to_bytes(8, "little", signed=False)
    if kind == "b":
        return bytes([1 if bool(value) else 0])
    if kind == "f":
        size = int(code[1:])
        dt = np.float32 if size == 4 else np.float64
        return np.array([value], dtype=dt).tobytes()
    if kind == "h":
        if isinstance(value, (bytes, bytearray)) and len(value) == 2:
            return bytes(value)
        return np.array([value], dtype=np.float16).tobytes()
    if kind == "e":
        if isinstance(value, (bytes, bytearray)) and len(value) == 2:
            return bytes(value)
        return _bf16_bits(float(value)).to_bytes(2, "little")
    if kind in "iu":
        size = int(code[1:])
        dt = _INT_DTYPES[(kind, size)]
        if isinstance(value, (bool, np.bool_)):
            value = int(value)
        if isinstance(value, (float, np.floating)):
            if float(value) != int(value):
                raise EmulationError("invalid", f"{where}: {value!r} is not an integer")
            value = int(value)
        info = np.iinfo(dt)
        iv = int(value)
        if not info.min <= iv <= info.max:
            raise EmulationError("invalid", f"{where}: {iv} does not fit {np.dtype(dt).name}")
        return np.array([iv], dtype=dt).tobytes()
    if kind == "s":
        size = int(code[1:].split(":")[0])
        if isinstance(value, (ctypes.Structure, ctypes.Union, ctypes.Array)):
            data = bytes(memoryview(value).cast("B"))
        elif isinstance(value, np.ndarray) or isinstance(value, np.void):
            data = np.ascontiguousarray(value).tobytes() if isinstance(value, np.ndarray) \
                else value.tobytes()
        elif isinstance(value, (bytes, bytearray, memoryview)):
            data = bytes(value)
        else:
            raise EmulationError("invalid", f"{where}: a struct parameter of {size} bytes takes "
                                 f"bytes, a numpy array/record or a ctypes structure")
        if len(data) != size:
            raise EmulationError("invalid", f"{where}: the struct parameter is {size} bytes, "
                                 f"got {len(data)}")
        return data
    raise EmulationError("invalid", f"{where}: unknown parameter type code {code!r}")


def _align_of(code: str) -> int:
    if code[0] == "s":
        return max(1, int(code.split(":")[1]))
    if code[0] == "p":
        return 8
    try:
        return max(1, int(code[1:]))
    except ValueError:
        return 8


class CpuModule:
    """One kernel compiled for the CPU emulator; see :meth:`launch`."""

    def __init__(self, path: str, translation: Translation, key: str, cached: bool,
                 compile_seconds: float, runtime_path: str):
        self.path = path
        self.translation = translation
        self.key = key
        self.cached = cached
        self.compile_seconds = compile_seconds
        self.kernel = translation.kernel
        self.lookup_lines = True  # False in a sandbox (addr2line is a process)
        self.name_expression = translation.name_expression
        self._runtime = load_runtime(runtime_path)
        self._lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        self._entry = int(translation.entry_index)
        self._launch = self._lib.kl_launch
        self._launch.restype = ctypes.c_int
        self._launch.argtypes = [ctypes.c_int, ctypes.POINTER(LaunchCfg), ctypes.c_void_p,
                                 ctypes.POINTER(LaunchResult)]
        self._lib.kl_param_desc.restype = ctypes.c_char_p
        self._lib.kl_param_desc.argtypes = [ctypes.c_int]
        desc = (self._lib.kl_param_desc(self._entry) or b"").decode()
        self.params: list[str] = [c for c in desc.split(",") if c] if desc else []
        self._lib.kl_symbol.restype = ctypes.c_void_p
        self._lib.kl_symbol.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_ulonglong)]
        self._lib.kl_symbol_names.restype = ctypes.c_char_p
        names = self._lib.kl_symbol_names().decode()
        self.symbols: list[str] = [n for n in names.split("\n") if n]
        fn = translation.kernel_function
        self.param_names = [p.name or f"arg{i}" for i, p in enumerate(fn.params)] if fn else []
        if len(self.param_names) != len(self.params):
            self.param_names = [f"arg{i}" for i in range(len(self.params))]

    @property
    def source(self) -> str:
        """The translated C++ program."""
        return self.translation.source

    # ------------------------------------------------------------------ symbols
    def symbol(self, name: str) -> memoryview:
        """Writable bytes of a ``__constant__`` / ``__device__`` variable (cudaMemcpyToSymbol)."""
        size = ctypes.c_ulonglong(0)
        addr = self._lib.kl_symbol(name.encode(), ctypes.byref(size))
        if not addr:
            raise KeyError(f"no __constant__/__device__ variable {name!r} "
                           f"(have: {', '.join(self.symbols) or 'none'})")
        buf = (ctypes.c_char * size.value).from_address(addr)
        return memoryview(buf).cast("B")

    def set_symbol(self, name: str, data) -> None:
        view = self.symbol(name)
        raw = np.ascontiguousarray(data).tobytes() if isinstance(data, np.ndarray) else bytes(data)
        if len(raw) > len(view):
            raise ValueError(f"{name} is {len(view)} bytes, got {len(raw)}")
        view[:len(raw)] = raw

    # ------------------------------------------------------------------ launch
    def launch(self, grid, block, smem: int, args: list, *, seed: int = 0,
               threads: int | None = None, timeout_s: float = 60.0) -> dict:
        """Run the whole grid; return ``{"blocks", "fibers", "switches", "barriers",
        "warp_ops", "seconds", "seed", "threads"}`` or raise :class:`EmulationError`.

        ``args`` are in kernel parameter order: numpy arrays (their data pointer is
        passed; the caller owns the memory and any guard zones), ints (addresses) or None
        for pointer parameters; Python/numpy scalars for value parameters (converted to
        the parameter's C type: ints are range-checked, ``__half`` takes a float or
        ``np.float16``, ``__nv_bfloat16`` a float rounded to nearest even); ``bytes``, a
        numpy record or a ctypes structure of the right size for a struct by value.
        """
        g = _dim3(grid, "grid")
        b = _dim3(block, "block")
        if len(args) != len(self.params):
            raise EmulationError("invalid", f"{self.kernel} takes {len(self.params)} arguments "
                                 f"({', '.join(self.param_names)}), got {len(args)}")
        blobs = [_pack(code, a, i, self.param_names[i])
                 for i, (code, a) in enumerate(zip(self.params, args))]
        offsets = []
        pos = 0
        for code, blob in zip(self.params, blobs):
            al = max(16, _align_of(code))
            pos = (pos + al - 1) // al * al
            offsets.append(pos)
            pos += max(1, len(blob))
        store = ctypes.create_string_buffer(pos + 64)
        base = (ctypes.addressof(store) + 63) // 64 * 64
        ptrs = (ctypes.c_void_p * max(1, len(blobs)))()
        for i, (off, blob) in enumerate(zip(offsets, blobs)):
            ctypes.memmove(base + off, blob, len(blob))
            ptrs[i] = base + off
        cfg = LaunchCfg()
        cfg.grid[:] = list(g)
        cfg.block[:] = list(b)
        cfg.smem = int(smem or 0)
        cfg.seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        cfg.threads = int(threads or 0)
        cfg.timeout_s = float(timeout_s)
        res = LaunchResult()
        keep = (args, store)  # keep the arrays and the argument block alive
        rc = self._launch(self._entry, ctypes.byref(cfg), ctypes.cast(ptrs, ctypes.c_void_p),
                          ctypes.byref(res))
        del keep
        stats = {"blocks": int(res.blocks), "fibers": int(res.fibers),
                 "switches": int(res.switches), "barriers": int(res.barriers),
                 "warp_ops": int(res.warp_ops), "seconds": float(res.seconds),
                 "seed": int(seed), "threads": int(res.threads)}
        if rc != 0:
            raise self._error(res, stats)
        return stats

    def _error(self, res: LaunchResult, stats: dict) -> EmulationError:
        kind = KINDS.get(int(res.code), "crash")
        msg = res.message.decode("utf-8", "replace")
        line = int(res.line) or None
        path = res.file.decode("utf-8", "replace") or None
        module = res.module.decode("utf-8", "replace")
        pc = None
        if kind in ("timeout", "crash") and line is None and module and \
                os.path.realpath(module) == os.path.realpath(self.path):
            pc = int(res.pc_offset)
            loc = addr2line(self.path, self.translation.paths, pc) if self.lookup_lines \
                else None
            if loc is not None:
                path, line = loc
        if path is None and line is not None:
            path = self.translation.kernel_path or None
        err = EmulationError(kind, msg, line=line, path=path, stats=stats)
        err.pc_offset = pc if line is None else None  # for a caller that looks it up
        return err

    def __repr__(self) -> str:
        return f"CpuModule({self.name_expression!r}, {os.path.basename(self.path)})"


def addr2line(module: str, user_paths, offset: int) -> tuple[str, int] | None:
    """The CUDA file and line of ``offset`` in ``module`` (``addr2line``, a process of its
    own: a sandboxed kernel process cannot start one, its caller looks the line up)."""
    tool = shutil.which("addr2line")
    if tool is None:
        return None
    try:
        out = subprocess.run([tool, "-e", module, "-i", hex(offset)], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    users = set(user_paths)
    frames = []
    for raw in out.splitlines():
        raw = raw.split(" (discriminator")[0].strip()
        f, _, ln = raw.rpartition(":")
        if ln.isdigit() and int(ln) > 0:
            frames.append((f, int(ln)))
    for f, ln in frames:
        for u in users:
            # relative #line paths come back under the (temporary) build directory
            if f == u or (not os.path.isabs(u) and f.endswith(os.sep + u)):
                return u, ln
    return None
