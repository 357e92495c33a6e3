// RUN: kltrans opt -p 'block-reduce-atomic'
// CHECK-SKIP: block-reach: the atomic is inside a loop
// A grid-stride loop: threads run the atomic different numbers of times, so a barrier
// at the atomic would deadlock on the ragged last iteration.
// kltrans: launch count_even grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void count_even(const int* x, int* count, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(count, (x[i] & 1) == 0 ? 1 : 0);
    }
}
