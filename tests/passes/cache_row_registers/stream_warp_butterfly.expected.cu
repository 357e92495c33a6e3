// RUN: kltrans opt -p 'cache-row-registers{vec=2,v=regs,f=scale}' --assume reassoc
// GATE: corpus/softmax
// One warp per row from a named tid, a butterfly merge, an exit without braces; two
// literal chunks per thread, renamed register array and factor.
// kltrans: launch softmax grid=ceil_div(rows, 8) block=256
// One warp per row; the lanes merge their (max, sum) pairs with a butterfly.
#define WARP 32

__device__ __forceinline__ void fold1(float& m, float& s, float v)
{
    if (v > m) {
        s = s == 0.0f ? 0.0f : s * expf(m - v);
        m = v;
    }
    s += expf(v - m);
}

__device__ void merge2(float& m, float& s, float om, float os)
{
    const float nm = fmaxf(m, om);
    const float a = s == 0.0f ? 0.0f : s * expf(m - nm);
    const float b = os == 0.0f ? 0.0f : os * expf(om - nm);
    m = nm;
    s = a + b;
}

extern "C" __global__ void softmax(const float* __restrict__ x, float* __restrict__ y,
                                   int rows, int cols)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int row = tid / WARP;
    int lane = tid % WARP;
    bool ok = row < rows;
    const float* xr = x + (size_t)(ok ? row : 0) * cols;
    float* yr = y + (size_t)(ok ? row : 0) * cols;
    if (cols <= WARP * 2 * 4) {
        // ---------------------------------------------- the row lives in registers
        float regs[2][4];
        for (int k = 0; k < 2; ++k) {
            const int base = 4 * (lane + k * WARP);
            for (int j = 0; j < 4; ++j) {
                regs[k][j] = ok && base + j < cols ? xr[base + j] : -INFINITY;
            }
        }
        float m = -INFINITY;
        for (int k = 0; k < 2; ++k) {
            for (int j = 0; j < 4; ++j) {
                m = fmaxf(m, regs[k][j]);
            }
        }
        float s = 0.0f;
        if (m != -INFINITY) {
            for (int k = 0; k < 2; ++k) {
                for (int j = 0; j < 4; ++j) {
                    regs[k][j] = expf(regs[k][j] - m);  // exp(-inf) = 0 past the row end
                    s += regs[k][j];
                }
            }
        }
        const float my_m = m;
        const float my_s = s;
        for (int o = 16; o > 0; o >>= 1) {
            merge2(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
        }
        // y = exp(v - m_thread) * exp(m_thread - m_row) / s_row
        const float scale = my_s == 0.0f ? 0.0f : expf(my_m - m) / s;
        for (int k = 0; k < 2; ++k) {
            const int base = 4 * (lane + k * WARP);
            for (int j = 0; j < 4; ++j) {
                if (ok && base + j < cols) {
                    yr[base + j] = regs[k][j] * scale;
                }
            }
        }
        return;
    }

    float m = -INFINITY;
    float s = 0.0f;
    if (ok) {
        for (int c = lane; c < cols; c += WARP) {
            fold1(m, s, xr[c]);
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        merge2(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
    }
    if (!ok) return;
    const float inv = 1.0f / s;
    for (int c = lane; c < cols; c += WARP) {
        yr[c] = expf(xr[c] - m) * inv;
    }
}
