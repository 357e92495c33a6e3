// RUN: kltrans opt -p 'vectorize-stream{flag=use_vec4}'
// GATE: tests/data/workloads/vectorize_stream_momentum
// The optimizer-step style: a named gid, the parameters read into locals declared together,
// the moment updated in place in its local, then both outputs stored.
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
