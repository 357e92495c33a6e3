"""Execution backends for the gate's correct and profile stages.

A backend loads a kernel, owns device memory, copies bytes both ways and launches. The
correct stage (:mod:`kltrans.gate.correct`) is written once against this interface:

``cuda``  cuda.bindings driver API on a real GPU (cubin from the NVRTC compile stage).
``cpu``   the CPU emulator (:mod:`kltrans.gate.cpu`): host memory, fibers per thread.

Both run inside a worker subprocess (:mod:`kltrans.gate.worker`), so a fault, a hang or
a broken CUDA context ends only that worker.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

CTYPES = {
    "float32": ctypes.c_float, "float64": ctypes.c_double, "int8": ctypes.c_int8,
    "uint8": ctypes.c_uint8, "int16": ctypes.c_int16, "uint16": ctypes.c_uint16,
    "int32": ctypes.c_int32, "uint32": ctypes.c_uint32, "int64": ctypes.c_int64,
    "uint64": ctypes.c_uint64, "float16": ctypes.c_uint16, "bfloat16": ctypes.c_uint16,
}


class BackendError(RuntimeError):
    """A failure while running a kernel; ``kind`` says what (fault, launch, timeout...)."""

    def __init__(self, kind: str, message: str, line: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.line = line


@dataclass
class Buffer:
    handle: object  # device pointer (int) or host numpy array
    nbytes: int


def gpu_available() -> bool:
    try:
        from cuda.bindings import driver as cu

        (err,) = cu.cuInit(0)
        if err != cu.CUresult.CUDA_SUCCESS:
            return False
        err, n = cu.cuDeviceGetCount()
        return err == cu.CUresult.CUDA_SUCCESS and n > 0
    except Exception:
        return False


def resolve_backend(name: str) -> str:
    if name == "auto":
        return "cuda" if gpu_available() else "cpu"
    if name not in ("cuda", "cpu"):
        raise ValueError(f"unknown backend {name!r} (cuda, cpu or auto)")
    return name


# ------------------------------------------------------------------------------ cuda
class CudaBackend:
    name = "cuda"

    def __init__(self, device: int = 0):
        from cuda.bindings import driver as cu

        self.cu = cu
        self._check(cu.cuInit(0))
        self.dev = self._check(cu.cuDeviceGet(device))
        self.ctx = self._check(cu.cuDevicePrimaryCtxRetain(self.dev))
        self._check(cu.cuCtxSetCurrent(self.ctx))
        self.stream = self._check(cu.cuStreamCreate(0))
        self.modules = []
        name = self._check(cu.cuDeviceGetName(256, self.dev))
        self.device_name = name.split(b"\0")[0].decode() if isinstance(name, bytes) else str(name)
        major = self._check(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.dev))
        minor = self._check(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.dev))
        self.arch = f"sm_{major}{minor}"
        self.l2_bytes = self._check(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, self.dev))
        bus = self._check(cu.cuDeviceGetPCIBusId(64, self.dev))
        self.pci_bus_id = (bus.split(b"\0")[0].decode() if isinstance(bus, bytes)
                           else str(bus)).strip() or f"ordinal-{device}"

    def _check(self, result):
        cu = self.cu
        if isinstance(result, tuple):
            err, rest = result[0], result[1:]
        else:
            err, rest = result, ()
        if err != cu.CUresult.CUDA_SUCCESS:
            _, name = cu.cuGetErrorName(err)
            name = name.decode() if isinstance(name, bytes) else str(name)
            kind = "fault" if name in ("CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_MISALIGNED_ADDRESS",
                                       "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_HARDWARE_STACK_ERROR",
                                       "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ASSERT") else "cuda"
            raise BackendError(kind, name)
        if not rest:
            return None
        return rest[0] if len(rest) == 1 else rest

    def load(self, cubin: bytes, symbol: str):
        cu = self.cu
        mod = self._check(cu.cuModuleLoadData(cubin))
        self.modules.append(mod)
        return self._check(cu.cuModuleGetFunction(mod, symbol.encode()))

    def alloc(self, nbytes: int) -> Buffer:
        return Buffer(self._check(self.cu.cuMemAlloc(max(nbytes, 1))), nbytes)

    def free(self, buf: Buffer) -> None:
        self._check(self.cu.cuMemFree(buf.handle))

    def ptr(self, buf: Buffer, offset: int) -> int:
        return int(buf.handle) + offset

    def upload(self, buf: Buffer, data: np.ndarray, offset: int = 0) -> None:
        data = np.ascontiguousarray(data)
        self._check(self.cu.cuMemcpyHtoD(int(buf.handle) + offset, data.ctypes.data, data.nbytes))

    def download(self, buf: Buffer) -> np.ndarray:
        out = np.empty(buf.nbytes, dtype=np.uint8)
        self._check(self.cu.cuMemcpyDtoH(out.ctypes.data, buf.handle, buf.nbytes))
        return out

    def memset(self, buf: Buffer, value: int) -> None:
        self._check(self.cu.cuMemsetD8Async(buf.handle, value, buf.nbytes, self.stream))

    def launch(self, fn, grid, block, smem: int, args: list) -> None:
        """``args``: (dtype or "ptr", value) pairs in kernel parameter order."""
        cu = self.cu
        if smem > 48 * 1024:
            self._check(cu.cuFuncSetAttribute(
                fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem))
        vals, types = [], []
        for kind, v in args:
            if kind == "ptr":
                vals.append(int(v))
                types.append(ctypes.c_void_p)
            else:
                vals.append(v)
                types.append(CTYPES[kind])
        self._check(cu.cuLaunchKernel(fn, *grid, *block, smem, self.stream,
                                      (tuple(vals), tuple(types)), 0))

    def synchronize(self) -> None:
        self._check(self.cu.cuStreamSynchronize(self.stream))

    # ---- timing
    def event(self):
        return self._check(self.cu.cuEventCreate(0))

    def record(self, ev) -> None:
        self._check(self.cu.cuEventRecord(ev, self.stream))

    def elapsed_ms(self, a, b) -> float:
        self._check(self.cu.cuEventSynchronize(b))
        return float(self._check(self.cu.cuEventElapsedTime(a, b)))

    def copy_bandwidth(self, nbytes: int = 1 << 30, reps: int = 20) -> float:
        """Device-to-device copy bandwidth in bytes/s, counting bytes read plus written."""
        src, dst = self.alloc(nbytes), self.alloc(nbytes)
        self.memset(src, 1)
        a, b = self.event(), self.event()
        times = []
        for _ in range(reps + 3):
            self.record(a)
            self._check(self.cu.cuMemcpyDtoDAsync(dst.handle, src.handle, nbytes, self.stream))
            self.record(b)
            times.append(self.elapsed_ms(a, b))
        self.free(src)
        self.free(dst)
        times = sorted(times[3:])
        return 2 * nbytes / (times[len(times) // 2] / 1e3)


# ------------------------------------------------------------------------------- cpu
class CpuBackend:
    """Host memory and the CPU emulator; "device pointers" are numpy arrays."""

    name = "cpu"
    device_name = "cpu-emulator"
    arch = None

    def __init__(self, seed: int = 0, timeout_s: float = 60.0):
        self.seed = seed
        self.timeout_s = timeout_s

    def load_unit(self, unit, kernel: str, name_expression: str | None):
        from kltrans.gate.cpu import EmulationError, build

        try:
            return build(unit, kernel, name_expression)
        except EmulationError as e:
            raise BackendError(e.kind, e.message, e.line) from None

    def alloc(self, nbytes: int) -> Buffer:
        return Buffer(np.zeros(max(nbytes, 1) + 64, dtype=np.uint8), nbytes)

    def _view(self, buf: Buffer) -> np.ndarray:
        arr = buf.handle
        off = (-arr.ctypes.data) % 64  # 64-byte aligned base, like cudaMalloc's 256
        return arr[off:off + buf.nbytes]

    def free(self, buf: Buffer) -> None:
        pass

    def ptr(self, buf: Buffer, offset: int):
        return self._view(buf)[offset:]

    def upload(self, buf: Buffer, data: np.ndarray, offset: int = 0) -> None:
        raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        self._view(buf)[offset:offset + raw.nbytes] = raw

    def download(self, buf: Buffer) -> np.ndarray:
        return self._view(buf).copy()

    def memset(self, buf: Buffer, value: int) -> None:
        self._view(buf)[:] = value

    def launch(self, module, grid, block, smem: int, args: list) -> None:
        from kltrans.gate.cpu import EmulationError

        vals = []
        for kind, v in args:
            if kind == "ptr":
                vals.append(v)
            else:
                vals.append(np.array(v, dtype=_np_scalar(kind))[()] if kind not in ("float16", "bfloat16") else v)
        try:
            module.launch(tuple(grid), tuple(block), smem, vals, seed=self.seed,
                          timeout_s=self.timeout_s)
        except EmulationError as e:
            err = BackendError(e.kind, e.message, e.line)
            err.pc_offset = getattr(e, "pc_offset", None)  # the line, for the caller to find
            raise err from None

    def synchronize(self) -> None:
        pass


def _np_scalar(dtype: str):
    return {"float32": np.float32, "float64": np.float64, "int8": np.int8, "uint8": np.uint8,
            "int16": np.int16, "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32,
            "int64": np.int64, "uint64": np.uint64}[dtype]
