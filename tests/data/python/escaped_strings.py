"""Non-raw single-quoted literals with escapes, some of them concatenated."""

import cupy as cp
from cupy import RawKernel as Kernel

relu = cp.RawKernel(
    'extern "C" __global__\n'
    'void relu(const float* x, float* y, int n) {\n'
    '\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n'
    '\tif (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;  // max(x, 0) — ReLU\n'
    '}\n',
    'relu',
)

debug = Kernel('extern "C" __global__ void debug(const int* x) {\n\tprintf("x[%d] = %d\\n", threadIdx.x, x[threadIdx.x]);\n}\n', "debug")
