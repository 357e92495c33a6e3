// RUN: kltrans opt -p unstage-transpose --assume 'no_alias(*)'
// GATE: corpus/transpose
// ROUNDTRIP: model: the pass writes the staged or direct copy in its own spelling
// A staged transpose spelled its own way: a padded tile, the loops counting rows of the
// tile from threadIdx.y, pointers advanced to the tile's corner, and the block ids
// swapped for the store through locals. The kernel model reads the copy and its tile;
// the grid machine checks the one-element-per-thread kernel against it.
// kltrans: launch transpose_naive grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 8)
extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    __shared__ float buf[32][33];
    int bx = blockIdx.x * 32, by = blockIdx.y * 32;
    for (int k = threadIdx.y; k < 32; k += 8) {
        if (by + k < rows && bx + threadIdx.x < cols)
            buf[k][threadIdx.x] = in[(by + k) * cols + bx + threadIdx.x];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < 32; k += 8) {
        if (bx + k < cols && by + threadIdx.x < rows)
            out[(bx + k) * rows + by + threadIdx.x] = buf[threadIdx.x][k];
    }
}
