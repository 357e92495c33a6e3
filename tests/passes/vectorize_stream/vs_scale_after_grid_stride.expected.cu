// RUN: kltrans opt -p 'vectorize-stream{unroll=2}'
// GATE: tests/data/workloads/scale
// The output of grid_stride/gs_scale_block_macro.cu: the folded loop
// for (int gid = ...; gid < n; gid += blockDim.x * gridDim.x) with an unbraced body and
// a BLOCK macro; the pass declares the flag and puts a float4 path, two vectors in
// flight per thread, in front of the loop.
// kltrans: launch scale grid=min(CEIL_DIV(n, BLOCK), 528) block=BLOCK
#define BLOCK 256
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const bool vec_ok = n % 4 == 0 && reinterpret_cast<size_t>(x) % 16 == 0 && reinterpret_cast<size_t>(y) % 16 == 0;
    if (vec_ok) {
        const float4* xv = reinterpret_cast<const float4*>(x);
        float4* yv = reinterpret_cast<float4*>(y);
        const int nv = n >> 2;
        int gid = blockIdx.x * blockDim.x + threadIdx.x;
        for (; gid + (2 - 1) * (blockDim.x * gridDim.x) < nv; gid += 2 * (blockDim.x * gridDim.x)) {
            float4 t[2];
            for (int u = 0; u < 2; ++u) {
                t[u] = xv[gid + u * (blockDim.x * gridDim.x)];
            }
            for (int u = 0; u < 2; ++u) {
                float4 o;
                o.x = a * t[u].x + b;
                o.y = a * t[u].y + b;
                o.z = a * t[u].z + b;
                o.w = a * t[u].w + b;
                yv[gid + u * (blockDim.x * gridDim.x)] = o;
            }
        }
        for (; gid < nv; gid += (blockDim.x * gridDim.x)) {
            const float4 t = xv[gid];
            float4 o;
            o.x = a * t.x + b;
            o.y = a * t.y + b;
            o.z = a * t.z + b;
            o.w = a * t.w + b;
            yv[gid] = o;
        }
    } else {
        for (int gid = blockIdx.x * blockDim.x + threadIdx.x; gid < n; gid += blockDim.x * gridDim.x)
            y[gid] = a * x[gid] + b;
    }
}
