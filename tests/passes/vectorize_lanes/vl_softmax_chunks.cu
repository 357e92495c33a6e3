// RUN: kltrans opt -p 'vectorize-lanes' --assume 'no_alias(*)'
// GATE: corpus/softmax
// One thread per row; the row is read in chunks of four registers, each lane
// bounds-checked. The lane loads get a float4 path behind the kernel's vec_ok flag.
// kltrans: launch softmax grid=ceil_div(rows, 128) block=128
#include <stdint.h>

extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    const bool vec_ok = (cols & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15) == 0;

    float m = -INFINITY;
    for (int q = 0; 4 * q < cols; ++q) {
        const int base = 4 * q;
        float v[4];
        for (int j = 0; j < 4; ++j) {
            v[j] = base + j < cols ? xr[base + j] : -INFINITY;
        }
        m = fmaxf(fmaxf(m, fmaxf(v[0], v[1])), fmaxf(v[2], v[3]));
    }
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) {
        s += expf(xr[c] - m);
    }
    for (int c = 0; c < cols; ++c) {
        yr[c] = expf(xr[c] - m) / s;
    }
}
