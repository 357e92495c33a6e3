// RUN: kltrans opt -p 'cp-async' --arch sm_80
// Eight-byte elements: a tiled matrix-vector product in double precision; the vector
// chunk shared by the block is fetched with 8-byte cp.async copies (.ca), unguarded.
// kltrans: launch dgemv_tiled grid=ceil_div(rows, 128) block=128
#define CHUNK 128

extern "C" __global__ void dgemv_tiled(const double* __restrict__ A, const double* __restrict__ x,
                                       double* __restrict__ y, int rows, int cols)
{
    __shared__ double xs[CHUNK];
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    double acc = 0.0;
    for (int c0 = 0; c0 < cols; c0 += CHUNK) {
        #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(__KLTRANS_CPU_EMULATION__)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(&xs[threadIdx.x]))), "l"(&x[min(c0 + threadIdx.x, cols - 1)]) : "memory");
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        asm volatile("cp.async.wait_group 0;\n" ::: "memory");
        #else
        xs[threadIdx.x] = x[min(c0 + threadIdx.x, cols - 1)];
        #endif
        __syncthreads();
        for (int j = 0; j < CHUNK && c0 + j < cols; ++j)
            if (r < rows) acc += A[(size_t)r * cols + c0 + j] * xs[j];
        __syncthreads();
    }
    if (r < rows) y[r] = acc;
}
