// RUN: kltrans opt -p shared-cache --assume 'no_alias(*)'
// CHECK-SKIP: same-results: on the block machine: the grid cannot be run: a break statement
// The first sweep stops at the first negative value: the elements after it would never
// reach the cache, yet the second sweep reads every element. The block machine cannot
// run a loop that breaks, so the check fails closed and the pass refuses.
// kltrans: launch until_negative grid=rows block=128
__global__ void until_negative(const float* x, float* y, int rows, int cols)
{
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        if (xr[c] < 0.0f)
            break;
        s += xr[c];
    }
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = xr[c] + s;
}
