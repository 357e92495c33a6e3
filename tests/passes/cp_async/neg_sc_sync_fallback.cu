// RUN: kltrans opt -p 'sync-copy'
// CHECK-SKIP: sync-fallback: its #else branch stores nothing
// An sm_80-only copy helper behind an arch switch has no synchronous fallback: removing
// the cp.async would leave the tile unwritten.
// kltrans: launch stage_copy grid=ceil_div(n, 128) block=128
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
#define USE_CP_ASYNC 1
#else
#define USE_CP_ASYNC 0
#endif

__device__ __forceinline__ void copy4(float* dst, const float* src)
{
#if USE_CP_ASYNC
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src) : "memory");
#endif
}

__device__ __forceinline__ void wait_all()
{
#if USE_CP_ASYNC
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

extern "C" __global__ void stage_copy(const float* x, float* y, int n)
{
    __shared__ float tile[128];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    copy4(&tile[threadIdx.x], &x[i < n ? i : 0]);
    wait_all();
    __syncthreads();
    if (i < n) y[i] = tile[127 - threadIdx.x];
}
