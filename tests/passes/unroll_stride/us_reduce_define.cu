// RUN: kltrans opt -p 'unroll-stride{factor=RS_UNROLL}'
// GATE: corpus/reduce-sum
// A grid-stride sum with a named stride and a 64-bit index: the main loop takes
// RS_UNROLL iterations per step, loads first; the original loop finishes the rest.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 1024), 264) block=256
#define RS_UNROLL 4

extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;
    float acc = 0.0f;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < count; i += nthreads) {
        const float v = x[i];
        acc += v;
    }
    atomicAdd(out, acc);
}
