// RUN: kltrans opt -p 'vectorize-access{tail=assume}' --assume 'aligned(*,16)' --assume 'n%4==0'
// The output of coarsen/coarsen_axpb_for_vectorize.cu (factor 8, counter r, element e, a
// size_t index, CEIL_DIV in the header): float4 accesses, no tail (n % 4 == 0 from the
// context; no GATE: the scale workload's sizes are ragged).
// kltrans: launch scale grid=CEIL_DIV(CEIL_DIV(CEIL_DIV(n, 256), 8), 4) block=256
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

extern "C" __global__ void scale(const float* x, float* y, float alpha, float beta, int n)
{
    size_t i = blockIdx.x * blockDim.x * 8 + threadIdx.x;
    for (int r = 0; r < 8; ++r) {
        size_t e = i + r * blockDim.x;
        if (4 * e + 3 < n) {
            const float4 x4 = reinterpret_cast<const float4*>(x)[e];
            float4 y4;
            {
                y4.x = fmaf(alpha, x4.x, beta);
            }
            {
                y4.y = fmaf(alpha, x4.y, beta);
            }
            {
                y4.z = fmaf(alpha, x4.z, beta);
            }
            {
                y4.w = fmaf(alpha, x4.w, beta);
            }
            reinterpret_cast<float4*>(y)[e] = y4;
        }
    }
}
