// RUN: kltrans opt -p 'share-row{group=warp}' --assume reassoc
// ROUNDTRIP: model: the seed comes back as the fold's identity, the loop from 0
// The maximum starts from the row's first element and an if keeps the larger: a warp
// per row starts it from -INFINITY and every lane from its own column.
// kltrans: launch rowrange grid=ceil_div(rows * 32, 128) block=128
__global__ void rowrange(const float* x, float* y, int rows, int cols)
{
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (r < rows) {
        float m = -INFINITY;
        for (int c = (threadIdx.x & 31); c < cols; c += 32) {
            if (x[(size_t)r * cols + c] > m) {
                m = x[(size_t)r * cols + c];
            }
        }
        for (int offset = 16; offset > 0; offset >>= 1)
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
        y[r] = m;
    }
}
