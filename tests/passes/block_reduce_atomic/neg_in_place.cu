// RUN: kltrans opt -p 'block-reduce-atomic{style=inline,reassoc=true}'
// CHECK-SKIP: in-place: the atomic is guarded
// The naive kernel's guarded atomic of x[i]: there is no variable to reduce in place
// (style=block writes its own value with the guard folded in).
// kltrans: launch reduce_sum_naive grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum_naive(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(out, x[i]);
    }
}
