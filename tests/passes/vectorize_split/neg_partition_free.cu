// RUN: kltrans opt -p 'vectorize-split{reassoc=true}'
// CHECK-SKIP: partition-free: only a single atomicAdd
// Each thread writes its own partial sum: which elements a thread folds is visible in
// the output, so the split's new partition would change it.
// kltrans: launch partials grid=min(ceil_div(n, 256), 264) block=256
__global__ void partials(const float* x, float* part, size_t n)
{
    const size_t gid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (size_t i = gid; i < n; i += (size_t)blockDim.x * gridDim.x) {
        acc += x[i];
    }
    part[gid] = acc;
}
