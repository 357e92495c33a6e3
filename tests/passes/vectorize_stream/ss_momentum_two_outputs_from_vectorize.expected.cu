// RUN: kltrans opt -p 'scalarize-stream'
// GATE: tests/data/workloads/vectorize_stream_momentum
// Two outputs, a flag written by hand (use_vec4, kept): the shape vectorize-stream writes
// for vs_momentum_two_outputs_gid.cu; scalarize-stream keeps the fallback loop.
// kltrans: launch momentum grid=min(ceil_div(n, 256), 2048) block=256
#include <stdint.h>

extern "C" __global__ void momentum(const float* __restrict__ p, const float* __restrict__ m,
                                    const float* __restrict__ g, float* __restrict__ p_out,
                                    float* __restrict__ m_out, float lr, float beta, int n)
{
    const int gid = threadIdx.x + blockDim.x * blockIdx.x;
    const bool use_vec4 = n % 4 == 0 &&
        reinterpret_cast<uintptr_t>(p) % 16 == 0 && reinterpret_cast<uintptr_t>(m) % 16 == 0 &&
        reinterpret_cast<uintptr_t>(g) % 16 == 0 && reinterpret_cast<uintptr_t>(p_out) % 16 == 0 &&
        reinterpret_cast<uintptr_t>(m_out) % 16 == 0;
    for (int i = gid; i < n; i += blockDim.x * gridDim.x) {
        float pi = p[i], mi = m[i];
        mi = beta * mi + g[i];
        m_out[i] = mi;
        p_out[i] = pi - lr * mi;
    }
}
