// RUN: kltrans opt -p scalar-path --assume reassoc --assume 'no_alias(*)'
// ROUNDTRIP: model: vector-path writes its own test and views, not the flag and the gathered lanes
// Two versions on one flag after another pass split the vector loads into scalars: the
// first if's float4 now gathers four floats (no vector view left, the lanes still in a
// float4 register), the second still loads through one. Both are the vector version and
// go together; the sum of squares comes out the same whichever runs.
// kltrans: launch sumsq_scale grid=rows block=128 smem=128*4
__global__ void sumsq_scale(const float* x, float* y, int rows, int cols)
{
    extern __shared__ float part[];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    const bool vec4 = (cols & 3) == 0;
    float acc = 0.0f;
    if (vec4) {
        for (int i = threadIdx.x; i < cols / 4; i += blockDim.x) {
            float4 v = make_float4(xr[4 * i], xr[4 * i + 1], xr[4 * i + 2], xr[4 * i + 3]);
            acc += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += blockDim.x) {
            float v = xr[c];
            acc += v * v;
        }
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    float total = 0.0f;
    for (int k = 0; k < blockDim.x; k++)
        total += part[k];
    if (vec4) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        float4* y4 = reinterpret_cast<float4*>(yr);
        for (int i = threadIdx.x; i < cols / 4; i += blockDim.x) {
            float4 v = x4[i];
            y4[i] = make_float4(v.x * total, v.y * total, v.z * total, v.w * total);
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            yr[c] = xr[c] * total;
    }
}
