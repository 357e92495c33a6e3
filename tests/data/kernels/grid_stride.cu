// grid_stride.cu - grid-stride elementwise kernels with C linkage, so they
// can be looked up by name through the driver API (cuModuleGetFunction).
#include <cuda_runtime.h>
#include <cstddef>

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

__host__ __device__ inline float relu(float x) { return x > 0.0f ? x : 0.0f; }

extern "C" __global__ void scale_relu(float* __restrict__ data, float alpha, size_t n)
{
    // grid-stride loop: correct for any grid size, including a capped one
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)blockDim.x * gridDim.x) {
        data[i] = relu(alpha * data[i]);
    }
}

extern "C"
__global__ void fill(float* out, float value, size_t n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    #pragma unroll 4
    for (; i < n; i += stride) {
        out[i] = value;
    }
}

extern "C" void launch_scale_relu(float* data, float alpha, size_t n,
                                  cudaStream_t stream)
{
    const int block = 256;
    size_t blocks = CEIL_DIV(n, (size_t)block);
    int grid = blocks > 65535 ? 65535 : (int)blocks;   /* the loop covers the rest */
    if (grid == 0) return;
    scale_relu<<<grid, block, 0, stream>>>(data, alpha, n);
}

extern "C" void launch_fill(float* out, float value, size_t n)
{
    int grid = (int)CEIL_DIV(n, (size_t)1024);
    if (grid == 0) return;
    fill<<<grid > 4096 ? 4096 : grid, 256>>>(out, value, n);
}
