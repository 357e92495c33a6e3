// RUN: kltrans opt -p unstage-shared
// GATE: tests/data/workloads/matvec
// ROUNDTRIP: model: stage-shared writes its own copy loop (a blockDim.x stride, its own names)
// A warp per row; the block brings v into shared memory PIECE elements at a time
// (cooperative groups' barrier, a while loop over the pieces) and every warp reads the
// piece from there. Read v from global memory again: the copy, the array and the
// barriers go.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define PIECE 512
// kltrans: launch matvec_pieces grid=ceil_div(n_rows, 4) block=128
__global__ void matvec_pieces(const float* M, const float* v, float* out, int n_rows, int n_cols)
{
    const int lane = threadIdx.x & 31;
    const int r = blockIdx.x * 4 + (threadIdx.x >> 5);
    float sum = 0.0f;
    int start = 0;
    while (start < n_cols) {
        const int width = min(PIECE, n_cols - start);
        if (r < n_rows) {
            for (int c = lane; c < width; c += 32)
                sum += M[(size_t)r * n_cols + start + c] * v[start + c];
        }
        start += PIECE;
    }
    for (int off = 16; off > 0; off >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (r < n_rows && lane == 0)
        out[r] = sum;
}
