// RUN: kltrans opt -p 'vectorize-stream{unroll=UNROLL}' --assume 'no_alias(*)' --site 1
// GATE: corpus/softmax
// One block per row; every thread takes the row's max and sum itself, then the
// normalize loop (block-strided over the row) gets a float4 path with UNROLL vectors in
// flight per thread (the reduction loops are not strided maps).
// kltrans: launch softmax grid=rows block=128
#include <stdint.h>
#define UNROLL 4

extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols)
{
    const int row = blockIdx.x;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    const bool vec_ok = (cols & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15u) == 0;
    float m = -INFINITY;
    for (int c = 0; c < cols; ++c) {
        m = fmaxf(m, xr[c]);
    }
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) {
        s += expf(xr[c] - m);
    }
    const float inv = 1.0f / s;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        yr[c] = expf(xr[c] - m) * inv;
    }
}
