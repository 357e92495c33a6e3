// RUN: kltrans opt -p unstage-transpose
// CHECK-SKIP: tiled-form: not a square tile
// A block stages 32 rows by 64 columns of the input: the staged form the pair writes
// has square tiles only, so there is no stage-transpose to give this kernel back.
// kltrans: launch transpose_naive grid=(ceil_div(cols, 64), ceil_div(rows, 32)) block=(32, 8)
extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    __shared__ float buf[32][65];
    int bx = blockIdx.x * 64, by = blockIdx.y * 32;
    for (int k = threadIdx.y; k < 32; k += 8)
        for (int h = threadIdx.x; h < 64; h += 32)
            if (by + k < rows && bx + h < cols)
                buf[k][h] = in[(by + k) * cols + bx + h];
    __syncthreads();
    for (int k = threadIdx.y; k < 64; k += 8)
        for (int h = threadIdx.x; h < 32; h += 32)
            if (bx + k < cols && by + h < rows)
                out[(bx + k) * rows + by + h] = buf[h][k];
}
