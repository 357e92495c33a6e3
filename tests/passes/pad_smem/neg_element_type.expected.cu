// RUN: kltrans opt -p 'pad-smem'
// CHECK-SKIP: element-type: narrower elements share a bank word
// A 16-bit tile: two elements share one 4-byte bank word, so a pad of one element is half a
// word and the bank arithmetic of the pass does not apply.
// kltrans: launch transpose_u16 grid=(ceil_div(cols, 64), ceil_div(rows, 64)) block=(64, 16)
extern "C" __global__ void transpose_u16(const unsigned short* in, unsigned short* out, int rows,
                                         int cols)
{
    __shared__ unsigned short tile[64][64];
    const int c = blockIdx.x * 64 + threadIdx.x;
    for (int j = threadIdx.y; j < 64; j += 16) {
        const int r = blockIdx.y * 64 + j;
        if (r < rows && c < cols) tile[j][threadIdx.x] = in[r * cols + c];
    }
    __syncthreads();
    const int oc = blockIdx.y * 64 + threadIdx.x;
    for (int j = threadIdx.y; j < 64; j += 16) {
        const int orow = blockIdx.x * 64 + j;
        if (orow < cols && oc < rows) out[orow * rows + oc] = tile[threadIdx.x][j];
    }
}
