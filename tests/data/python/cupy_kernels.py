"""SAXPY and two element-wise kernels with CuPy's RawKernel / RawModule."""

import cupy as cp

saxpy = cp.RawKernel(r'''
extern "C" __global__
void saxpy(float a, const float* x, const float* y, float* out, unsigned int n) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n) {
        out[tid] = a * x[tid] + y[tid];
    }
}
''', 'saxpy')

loaded_from_source = r'''
extern "C" {
__global__ void test_sum(const float* x1, const float* x2, float* y, unsigned int N) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N) {
        y[tid] = x1[tid] + x2[tid];
    }
}

__global__ void test_multiply(const float* x1, const float* x2, float* y, unsigned int N) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N) {
        y[tid] = x1[tid] * x2[tid];
    }
}
}
'''

module = cp.RawModule(code=loaded_from_source)
ker_sum = module.get_function('test_sum')
ker_times = module.get_function('test_multiply')

if __name__ == "__main__":
    n = 1 << 20
    x = cp.arange(n, dtype=cp.float32)
    y = cp.ones(n, dtype=cp.float32)
    out = cp.empty_like(x)
    saxpy(((n + 255) // 256,), (256,), (cp.float32(2.0), x, y, out, cp.uint32(n)))
