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
    if (use_vec4) {
        const float4* p_vec = reinterpret_cast<const float4*>(p);
        const float4* m_vec = reinterpret_cast<const float4*>(m);
        const float4* g_vec = reinterpret_cast<const float4*>(g);
        float4* m_out_vec = reinterpret_cast<float4*>(m_out);
        float4* p_out_vec = reinterpret_cast<float4*>(p_out);
        const int nv = n >> 2;
        int i = gid;
        for (; i < nv; i += (blockDim.x * gridDim.x)) {
            const float4 p4 = p_vec[i];
            const float4 m4 = m_vec[i];
            const float4 g4 = g_vec[i];
            float4 m_out4;
            float4 p_out4;
            {
                float pi = p4.x, mi = m4.x;
                mi = beta * mi + g4.x;
                m_out4.x = mi;
                p_out4.x = pi - lr * mi;
            }
            {
                float pi = p4.y, mi = m4.y;
                mi = beta * mi + g4.y;
                m_out4.y = mi;
                p_out4.y = pi - lr * mi;
            }
            {
                float pi = p4.z, mi = m4.z;
                mi = beta * mi + g4.z;
                m_out4.z = mi;
                p_out4.z = pi - lr * mi;
            }
            {
                float pi = p4.w, mi = m4.w;
                mi = beta * mi + g4.w;
                m_out4.w = mi;
                p_out4.w = pi - lr * mi;
            }
            m_out_vec[i] = m_out4;
            p_out_vec[i] = p_out4;
        }
    } else {
        for (int i = gid; i < n; i += blockDim.x * gridDim.x) {
            float pi = p[i], mi = m[i];
            mi = beta * mi + g[i];
            m_out[i] = mi;
            p_out[i] = pi - lr * mi;
        }
    }
}
