// RUN: kltrans opt -p 'tree-order{order=strided-index}'
// GATE: corpus/reduce-sum
// Interleaved to strided index needs no --assume reassoc: both fold slot k + s into k for
// every k a multiple of 2 s, in the same rounds, so a float sum comes out bit for bit the
// same; only which thread folds each pair changes.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        unsigned int index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[index] += sdata[index + s];
        }
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, sdata[0]);
}
