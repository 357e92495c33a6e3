// kltrans: launch softmax_float4_regs grid=ceil_div(rows, WARPS_PER_BLOCK) block=WARPS_PER_BLOCK*32
// Row softmax, one warp per row, online (max, sum) pairs merged by shuffles as before,
// now with 16-byte float4 loads and stores (reinterpret_cast) whenever cols % 4 == 0
// and both matrices are 16-byte aligned, and a scalar fallback otherwise. Rows of up
// to REG_COLS columns are loaded once into registers (REG_VECS float4 per lane, all
// loads issued before any arithmetic), so x is read once and y written once; longer
// rows fall back to the streaming online pass plus a normalize pass that reads x again.
// The register row costs ~170 registers per thread, so blocks shrink to 4 warps (three
// blocks, 12 warps, per SM).

#include <stdint.h>

#define WARPS_PER_BLOCK 4
#define FULL_MASK 0xffffffffu
#define REG_VECS 32                       // float4 per lane kept in registers
#define REG_COLS (REG_VECS * 4 * 32)      // 4096 columns fit in one warp's registers

// fold the pair (other_max, other_sum) into (m, s); an empty pair has max -inf, sum 0
__device__ __forceinline__ void online_merge(float& m, float& s, float other_max, float other_sum) {
    float new_max = fmaxf(m, other_max);
    float a = (m == -INFINITY) ? 0.0f : s * expf(m - new_max);
    float b = (other_max == -INFINITY) ? 0.0f : other_sum * expf(other_max - new_max);
    m = new_max;
    s = a + b;
}

__device__ void warp_reduce_online(float& m, float& s) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        online_merge(m, s, __shfl_xor_sync(FULL_MASK, m, offset), __shfl_xor_sync(FULL_MASK, s, offset));
}

// add one value to a running (max, sum) pair
__device__ __forceinline__ void online_add(float& m, float& s, float v) {
    if (v > m) {
        s *= expf(m - v);
        m = v;
    }
    s += expf(v - m);
}

__global__ void softmax_float4_regs(const float* x, float* y, int rows, int cols) {
    int warp_id = threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * WARPS_PER_BLOCK + warp_id;
    if (row >= rows) return;  // the whole warp leaves together

    const float* in = x + (size_t)row * cols;
    float* out = y + (size_t)row * cols;
    bool use_vec4 = (cols % 4 == 0) && ((((uintptr_t)x) | ((uintptr_t)y)) % 16 == 0);
    int nvec = cols / 4;

    if (cols <= REG_COLS) {
        // ---- the row lives in registers: lane holds v[0 .. 4 * REG_VECS)
        float v[REG_VECS * 4];
        if (use_vec4) {
            const float4* in4 = reinterpret_cast<const float4*>(in);
#pragma unroll
            for (int i = 0; i < REG_VECS; i++) {
                int idx = lane + i * 32;
                if (idx < nvec) {
                    float4 t = in4[idx];
                    v[4 * i + 0] = t.x;
                    v[4 * i + 1] = t.y;
                    v[4 * i + 2] = t.z;
                    v[4 * i + 3] = t.w;
                } else {
                    v[4 * i + 0] = v[4 * i + 1] = v[4 * i + 2] = v[4 * i + 3] = -INFINITY;
                }
            }
        } else {
#pragma unroll
            for (int k = 0; k < REG_VECS * 4; k++) {
                int c = lane + k * 32;
                v[k] = (c < cols) ? in[c] : -INFINITY;
            }
        }

        float lane_max = -INFINITY;
#pragma unroll
        for (int k = 0; k < REG_VECS * 4; k++)
            lane_max = fmaxf(lane_max, v[k]);
        float lane_sum = 0.0f;
        if (lane_max != -INFINITY) {  // a lane past the row end holds nothing
#pragma unroll
            for (int k = 0; k < REG_VECS * 4; k++) {
                v[k] = expf(v[k] - lane_max);  // padding: exp(-inf) = 0
                lane_sum += v[k];
            }
        }
        float row_max = lane_max;
        float row_sum = lane_sum;
        warp_reduce_online(row_max, row_sum);
        // v holds exp(x - lane_max): rescale to exp(x - row_max) / row_sum
        float scale = (lane_max == -INFINITY) ? 0.0f : expf(lane_max - row_max) / row_sum;

        if (use_vec4) {
            float4* out4 = reinterpret_cast<float4*>(out);
#pragma unroll
            for (int i = 0; i < REG_VECS; i++) {
                int idx = lane + i * 32;
                if (idx < nvec) {
                    float4 t;
                    t.x = v[4 * i + 0] * scale;
                    t.y = v[4 * i + 1] * scale;
                    t.z = v[4 * i + 2] * scale;
                    t.w = v[4 * i + 3] * scale;
                    out4[idx] = t;
                }
            }
        } else {
#pragma unroll
            for (int k = 0; k < REG_VECS * 4; k++) {
                int c = lane + k * 32;
                if (c < cols) out[c] = v[k] * scale;
            }
        }
        return;
    }

    // ---- long rows: streaming online pass, then a normalize pass over x again
    float row_max = -INFINITY;
    float row_sum = 0.0f;
    if (use_vec4) {
        const float4* in4 = reinterpret_cast<const float4*>(in);
        for (int idx = lane; idx < nvec; idx += 32) {
            float4 t = in4[idx];
            online_add(row_max, row_sum, t.x);
            online_add(row_max, row_sum, t.y);
            online_add(row_max, row_sum, t.z);
            online_add(row_max, row_sum, t.w);
        }
    } else {
        for (int c = lane; c < cols; c += 32)
            online_add(row_max, row_sum, in[c]);
    }
    warp_reduce_online(row_max, row_sum);
    float inv_sum = 1.0f / row_sum;

    if (use_vec4) {
        const float4* in4 = reinterpret_cast<const float4*>(in);
        float4* out4 = reinterpret_cast<float4*>(out);
        for (int idx = lane; idx < nvec; idx += 32) {
            float4 t = in4[idx];
            t.x = expf(t.x - row_max) * inv_sum;
            t.y = expf(t.y - row_max) * inv_sum;
            t.z = expf(t.z - row_max) * inv_sum;
            t.w = expf(t.w - row_max) * inv_sum;
            out4[idx] = t;
        }
    } else {
        for (int c = lane; c < cols; c += 32)
            out[c] = expf(in[c] - row_max) * inv_sum;
    }
}
