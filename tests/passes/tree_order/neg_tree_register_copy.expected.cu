// RUN: kltrans opt -p interleave-tree --assume reassoc
// CHECK-SKIP: tree-loop: the fold also writes sum
// The CUDA samples' spelling keeps the thread's own slot in a register as it folds: with
// interleaved pairs the slot a thread writes would no longer be its own.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = i < n ? x[i] : 0.0f;
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] = sum = sum + sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, sum);
}
