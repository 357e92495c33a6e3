// RUN: kltrans opt -p 'vectorize-split{reassoc=true}'
// CHECK-SKIP: thread-cover: not the global thread index
// A block-stride loop (one block walks the array): threads of other blocks do not exist
// to take the head and tail elements the way the split hands them out.
// kltrans: launch reduce_sum grid=1 block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    float acc = 0.0f;
    for (size_t i = threadIdx.x; i < count; i += blockDim.x) {
        acc += x[i];
    }
    atomicAdd(out, acc);
}
