"""Call sites whose CUDA text is computed at run time: none can be rewritten."""

import cupy as cp

BLOCK = 256

fill = cp.RawKernel(f"""
extern "C" __global__ void fill(float* x, float v, int n) {{
    __shared__ float tile[{BLOCK}];
    int i = blockIdx.x * {BLOCK} + threadIdx.x;
    tile[threadIdx.x] = v;
    __syncthreads();
    if (i < n) x[i] = tile[threadIdx.x];
}}
""", "fill")

TEMPLATE = """
extern "C" __global__ void add_{name}({t}* x, {t} v, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += v;
}}
"""
add_f32 = cp.RawKernel(TEMPLATE.format(name="f32", t="float"), "add_f32")

ADD_PCT = 'extern "C" __global__ void add(%s* x, int n) { int i = threadIdx.x; if (i < n) x[i] += 1; }'
add_f64 = cp.RawKernel(ADD_PCT % "double", "add")

SRC = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] = 0.f; }'
SRC = SRC.replace("0.f", "1.f")
reassigned = cp.RawKernel(SRC, "k")

from_bytes = cp.RawModule(code=b'extern "C" __global__ void z(int* x) { x[0] = 0; }')

plain = cp.RawKernel('extern "C" __global__ void one(int* x) { x[threadIdx.x] = 1; }', "one")
