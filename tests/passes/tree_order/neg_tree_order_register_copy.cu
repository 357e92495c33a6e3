// RUN: kltrans opt -p tree-order --assume reassoc
// CHECK-SKIP: tree-loop: the fold also writes sum
// The thread keeps its own slot in a register as it folds (interleaved here): whatever
// the order, the slot a thread writes must stay its own, so the loop is not re-addressed.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = i < n ? x[i] : 0.0f;
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) {
            sdata[tid] = sum = sum + sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, sum);
}
