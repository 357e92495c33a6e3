"""Vector add compiled with cuda.core's Program (NVRTC)."""

import cupy as cp
from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, launch

code = """
template<typename T>
__global__ void vector_add(const T* A, const T* B, T* C, size_t N) {
    const unsigned int tid = threadIdx.x + blockIdx.x * blockDim.x;
    for (size_t i = tid; i < N; i += gridDim.x * blockDim.x) {
        C[i] = A[i] + B[i];
    }
}
"""

PTX = ".version 8.0\n.target sm_90\n.address_size 64\n"

dev = Device()
dev.set_current()
stream = dev.create_stream()

program_options = ProgramOptions(std="c++17", arch=f"sm_{dev.arch}")
prog = Program(code, code_type="c++", options=program_options)
mod = prog.compile("cubin", name_expressions=("vector_add<float>",))
ker = mod.get_kernel("vector_add<float>")

# PTX is not CUDA C++: reported as skipped.
ptx_prog = Program(PTX, "ptx")

size = 50000
a = cp.random.random(size, dtype=cp.float32)
b = cp.random.random(size, dtype=cp.float32)
c = cp.empty_like(a)
block = 256
grid = (size + block - 1) // block
config = LaunchConfig(grid=grid, block=block)
launch(stream, config, ker, a.data.ptr, b.data.ptr, c.data.ptr, cp.uint64(size))
stream.sync()
