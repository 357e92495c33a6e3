// RUN: kltrans opt -p drop-shared-cache --assume 'no_alias(*)'
// ROUNDTRIP: none: the first sweep only filled the cache and goes with it: one sweep is left
// Each block maps a tile of 256 elements in two sweeps (n a multiple of 256): the first
// keeps every thread's scaled inputs in a static shared array, the second, a while loop
// with its own variable, reads them back.
#define TILE 256
// kltrans: launch twice grid=n/TILE block=64
__global__ void twice(const float* __restrict__ a, float* __restrict__ out, float k, int n)
{
    __shared__ float keep[TILE];
    const float* at = a + blockIdx.x * TILE;
    float* ot = out + blockIdx.x * TILE;
    for (int i = threadIdx.x; i < TILE; i += blockDim.x)
        keep[i] = at[i] * k;
    int t = threadIdx.x;
    while (t < TILE) {
        ot[t] = keep[t] + 1.0f;
        t += blockDim.x;
    }
}
