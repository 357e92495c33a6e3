// RUN: kltrans opt -p 'template-block-size'
// GATE: corpus/reduce-sum
// A block tree reduction templated on its element type: the block size joins the
// template, so the tree's loop has a constant trip count and the grid index a constant
// stride.
// kltrans: launch block_sum<float, 256> grid=ceil_div(n, 256) block=256
template <class T, unsigned int blockSize>
__global__ void block_sum(const T* x, T* out, int n)
{
    __shared__ T partial[256];
    unsigned int tid = threadIdx.x;
    int i = blockIdx.x * blockSize + threadIdx.x;
    partial[tid] = i < n ? x[i] : (T)0;
    __syncthreads();
    for (unsigned int s = blockSize / 2; s > 0; s >>= 1) {
        if (tid < s)
            partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        atomicAdd(out, partial[0]);
}
