// RUN: kltrans opt -p share-row --assume reassoc
// CHECK-SKIP: same-results: does not do the same
// The loop stores the running maximum at every column: split among lanes, each lane's
// prefix maximum is another value, so the warp per row stores something else.
// kltrans: launch running grid=ceil_div(rows, 128) block=128
__global__ void running(const float* src, float* dst, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float m = -INFINITY;
    for (int k = 0; k < cols; k += 1) {
        m = fmaxf(m, src[(size_t)r * cols + k]);
        dst[(size_t)r * cols + k] = m;
    }
}
