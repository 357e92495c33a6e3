// RUN: kltrans opt -p 'cache-row-registers{vec=REG_CHUNKS}' --assume reassoc
// GATE: corpus/softmax
// Other names, __restrict__ pointers, a shuffle + shared-memory merge written inline
// (it holds a barrier: the register path's test reads cols and GS only, so a whole
// block takes the same branch), 4 chunks per thread from a macro.
// kltrans: launch softmax grid=ceil_div(rows, max(1, 4 / ceil_div(cols, 1024))) block=128
// Rows of up to 1024 columns get one warp, longer rows 2 or 4 warps that merge their
// (max, sum) pairs through shared memory.
#include <stdint.h>

#define THREADS 128
#define REG_CHUNKS 4

__device__ __forceinline__ void pair_merge(float& m, float& s, float om, float os)
{
    const float nm = fmaxf(m, om);
    const float a = s == 0.0f ? 0.0f : s * expf(m - nm);
    const float b = os == 0.0f ? 0.0f : os * expf(om - nm);
    m = nm;
    s = a + b;
}

__device__ __forceinline__ void add_one(float& m, float& s, float v)
{
    if (v > m) {
        s = s == 0.0f ? 0.0f : s * expf(m - v);
        m = v;
    }
    s += expf(v - m);
}

extern "C" __global__ void softmax(const float* __restrict__ x, float* __restrict__ y,
                                   int rows, int cols)
{
    __shared__ float red_m[THREADS / 32];
    __shared__ float red_s[THREADS / 32];
    const int q = (cols + 1023) / 1024;
    const int rpb = q >= 1 && q <= 4 ? 4 / q : 1;
    const int GS = THREADS / rpb;
    const int lane_in_row = threadIdx.x % GS;
    const int row = blockIdx.x * rpb + threadIdx.x / GS;
    const bool live = row < rows;
    const float* xrow = x + (live ? (size_t)row * cols : 0);
    float* yrow = y + (live ? (size_t)row * cols : 0);

    if (cols <= GS * REG_CHUNKS * 4) {
        // ---------------------------------------------- the row lives in registers
        float v[REG_CHUNKS][4];
        for (int k = 0; k < REG_CHUNKS; ++k) {
            const int base = 4 * (lane_in_row + k * GS);
            for (int j = 0; j < 4; ++j) {
                v[k][j] = live && base + j < cols ? xrow[base + j] : -INFINITY;
            }
        }
        float mx = -INFINITY;
        for (int k = 0; k < REG_CHUNKS; ++k) {
            for (int j = 0; j < 4; ++j) {
                mx = fmaxf(mx, v[k][j]);
            }
        }
        float sum = 0.0f;
        if (mx != -INFINITY) {
            for (int k = 0; k < REG_CHUNKS; ++k) {
                for (int j = 0; j < 4; ++j) {
                    v[k][j] = expf(v[k][j] - mx);  // exp(-inf) = 0 past the row end
                    sum += v[k][j];
                }
            }
        }
        const float my_m = mx;
        const float my_s = sum;
        for (int o = 16; o > 0; o >>= 1) {
            const float om = __shfl_xor_sync(0xffffffffu, mx, o);
            const float os = __shfl_xor_sync(0xffffffffu, sum, o);
            pair_merge(mx, sum, om, os);
        }
        if (GS > 32) {
            const int warp = threadIdx.x >> 5;
            if ((threadIdx.x & 31) == 0) {
                red_m[warp] = mx;
                red_s[warp] = sum;
            }
            __syncthreads();
            const int first = warp / (GS >> 5) * (GS >> 5);
            mx = red_m[first];
            sum = red_s[first];
            for (int w = 1; w < (GS >> 5); ++w) {
                pair_merge(mx, sum, red_m[first + w], red_s[first + w]);
            }
        }
        // y = exp(v - m_thread) * exp(m_thread - m_row) / s_row
        const float f = my_s == 0.0f ? 0.0f : expf(my_m - mx) / sum;
        for (int k = 0; k < REG_CHUNKS; ++k) {
            const int base = 4 * (lane_in_row + k * GS);
            for (int j = 0; j < 4; ++j) {
                if (live && base + j < cols) {
                    yrow[base + j] = v[k][j] * f;
                }
            }
        }
        return;
    }

    float mx = -INFINITY;
    float sum = 0.0f;
    if (live) {
        for (int i = lane_in_row; i < cols; i += GS) {
            add_one(mx, sum, xrow[i]);
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        const float om = __shfl_xor_sync(0xffffffffu, mx, o);
        const float os = __shfl_xor_sync(0xffffffffu, sum, o);
        pair_merge(mx, sum, om, os);
    }
    if (GS > 32) {
        const int warp = threadIdx.x >> 5;
        if ((threadIdx.x & 31) == 0) {
            red_m[warp] = mx;
            red_s[warp] = sum;
        }
        __syncthreads();
        const int first = warp / (GS >> 5) * (GS >> 5);
        mx = red_m[first];
        sum = red_s[first];
        for (int w = 1; w < (GS >> 5); ++w) {
            pair_merge(mx, sum, red_m[first + w], red_s[first + w]);
        }
    }
    if (!live) {
        return;
    }
    const float r = 1.0f / sum;
    for (int i = lane_in_row; i < cols; i += GS) {
        yrow[i] = expf(xrow[i] - mx) * r;
    }
}
