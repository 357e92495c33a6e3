// RUN: kltrans opt -p unstage-transpose
// CHECK-SKIP: same-results: does not store the same
// The model reads a staged transpose, but the load's guard drops the matrix's last row
// (`< rows - 1`): the one-element-per-thread kernel would copy it, so the two differ.
// kltrans: launch transpose_naive grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 8)
extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    __shared__ float buf[32][33];
    int bx = blockIdx.x * 32, by = blockIdx.y * 32;
    for (int k = threadIdx.y; k < 32; k += 8) {
        if (by + k < rows - 1 && bx + threadIdx.x < cols)
            buf[k][threadIdx.x] = in[(by + k) * cols + bx + threadIdx.x];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < 32; k += 8) {
        if (bx + k < cols && by + threadIdx.x < rows - 1)
            out[(bx + k) * rows + by + threadIdx.x] = buf[threadIdx.x][k];
    }
}
