// saxpy.cu - single-precision y = a*x + y.
//
// The classic first CUDA kernel: one thread per element, flat 1D indexing.

#include <cuda_runtime.h>
#include <cstdio>

/* Kept for reference only; superseded by saxpy below, which takes restrict
   pointers so the compiler can use the read-only data path for x.
__global__ void old_saxpy(int n, float a, float* x, float* y) { }
*/
// __global__ void old_kernel(float* x) {}

__global__ void saxpy(int n, float a, const float* __restrict__ x,
                      float* __restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];  // one FMA per element
    }
}

// Host-side launcher: y = a*x + y on device pointers.
cudaError_t launch_saxpy(int n, float a, const float* d_x, float* d_y)
{
    const int block = 256;
    const int grid = (n + block - 1) / block;   // round up
    saxpy<<<grid, block>>>(n, a, d_x, d_y);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        std::fprintf(stderr, "saxpy launch failed: %s\n", cudaGetErrorString(err));
    }
    return err;
}
