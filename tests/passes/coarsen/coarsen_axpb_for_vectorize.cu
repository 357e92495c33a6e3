// RUN: kltrans opt -p 'coarsen{factor=8,counter=r,elem=e}'
// GATE: tests/data/workloads/scale
// An axpb with a 64-bit index (blockDim.x * blockIdx.x + threadIdx.x, CEIL_DIV in the
// header), coarsened by 8; vectorize_access/vec_axpb_after_coarsen.cu continues from
// this output.
// kltrans: launch scale grid=CEIL_DIV(n, 256) block=256
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

extern "C" __global__ void scale(const float* x, float* y, float alpha, float beta, int n)
{
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = fmaf(alpha, x[i], beta);
    }
}
