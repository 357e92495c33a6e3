// RUN: kltrans opt -p tree-order --assume reassoc
// GATE: corpus/reduce-sum
// Harris's second reduction: the threads whose index is a multiple of 2 * s fold the slot
// s above theirs. Sequential addressing folds the upper half of the live slots onto the
// lower half: contiguous threads, contiguous words.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, sdata[0]);
}
