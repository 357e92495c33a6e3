// RUN: kltrans opt -p 'chunk-loop{width=4,lanes=copies}'
// CHECK-SKIP: independent: element
// Each element reads its right neighbour's slot of the array it writes: the chunked
// order would read values another element has already overwritten.
// kltrans: launch shift grid=min(ceil_div(n, 128), 264) block=128
__global__ void shift(float* x, int n)
{
    const int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        x[i] = 0.5f * (x[i] + x[i + 1]);
    }
}
