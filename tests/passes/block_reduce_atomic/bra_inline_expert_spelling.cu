// RUN: kltrans opt -p 'block-reduce-atomic{style=inline,reassoc=true,partials=warp_sums,slots=RS_THREADS/32,value2=s,nwarps=nwarps,nwarps_form=shift-ceil,pragmas=true}'
// GATE: corpus/reduce-sum
// A grid-stride sum that ends in one atomicAdd per thread: the per-thread value is
// reduced in place (warp shuffles, per-warp partials declared at the kernel's top,
// warp 0 with a named warp count), written the way the reduce-sum expert writes it.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 1056) block=RS_THREADS
#define RS_THREADS 256

extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    float acc = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        acc += x[i];
    }
    atomicAdd(out, acc);
}
