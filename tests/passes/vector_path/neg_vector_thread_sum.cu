// RUN: kltrans opt -p vector-path --assume 'no_alias(*)' --assume reassoc
// CHECK-SKIP: same-results: the stores of the grid differ
// Each thread adds its own elements and then uses that partial sum for the same
// elements: with float4 chunks a thread owns other elements, so its partial differs.
// kltrans: launch center grid=rows block=128
__global__ void center(const float* x, float* y, int rows, int cols)
{
    const float* in = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    float part = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        part += in[c];
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        out[c] = in[c] - part;
}
