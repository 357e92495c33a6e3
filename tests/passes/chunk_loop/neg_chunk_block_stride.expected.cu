// RUN: kltrans opt -p 'chunk-loop{width=4,lanes=copies}'
// CHECK-SKIP: element-loop: not a grid-stride loop
// One block walks a row with a block-stride loop: the chunked form with a tail run by
// the first threads of the grid is written for grid-stride loops only.
// kltrans: launch rows grid=rows block=128
__global__ void rows(const float* x, float* y, int n)
{
    const float* xr = x + blockIdx.x * n;
    float* yr = y + blockIdx.x * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        yr[i] = 2.0f * xr[i];
    }
}
