// RUN: kltrans opt -p unshare-row --assume reassoc
// CHECK-SKIP: same-results: does not do the same
// The shuffle-down fold leaves the sum in lane 0 only, yet every lane divides by it: the
// warp kernel is not a row-per-thread kernel in disguise (a thread per row would divide
// every element by the sum), so the serial form stores something else.
// kltrans: launch norm_rows grid=ceil_div(rows, 4) block=128
__device__ float lane_sum(float v)
{
    for (int d = 16; d > 0; d >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

__global__ void norm_rows(const float* src, float* dst, int rows, int cols)
{
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (r >= rows) return;
    float s = 0.0f;
    for (int k = lane; k < cols; k += 32)
        s += src[(size_t)r * cols + k];
    float t = lane_sum(s);
    for (int k = lane; k < cols; k += 32)
        dst[(size_t)r * cols + k] = src[(size_t)r * cols + k] / t;
}
