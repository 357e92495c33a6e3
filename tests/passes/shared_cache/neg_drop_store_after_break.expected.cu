// RUN: kltrans opt -p drop-shared-cache --assume 'no_alias(*)'
// CHECK-SKIP: same-results: on the block machine: the grid cannot be run: a break statement
// The first sweep stops at the first negative value, so the elements after it never
// reach the cache and the second sweep reads what shared memory held. The facts do not
// see the break; the block machine cannot run it, so the check fails closed and the
// pass refuses.
// kltrans: launch until_negative grid=rows block=128 smem=4*cols
__global__ void until_negative(const float* x, float* y, int rows, int cols)
{
    extern __shared__ float cache[];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        if (xr[c] < 0.0f)
            break;
        cache[c] = xr[c];
    }
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = cache[c];
}
