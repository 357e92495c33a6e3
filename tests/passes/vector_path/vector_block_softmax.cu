// RUN: kltrans opt -p vector-path --assume 'no_alias(*)' --assume reassoc
// GATE: tests/data/workloads/rowsoftmax
// A block per row, folds through a shared-memory tree. The sum loop (a += folded by the
// block afterwards) and the normalize loop get float4 paths, taken when cols is a multiple
// of four and the row pointers are 16-byte aligned; the max loop carries fmaxf: refused.
// kltrans: launch softmax_tree grid=rows block=128
__global__ void softmax_tree(const float* src, float* dst, int rows, int cols)
{
    __shared__ float buf[128];
    const float* in = src + (size_t)blockIdx.x * cols;
    float* out = dst + (size_t)blockIdx.x * cols;
    float hi = -INFINITY;
    for (int k = threadIdx.x; k < cols; k += blockDim.x)
        hi = fmaxf(hi, in[k]);
    buf[threadIdx.x] = hi;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h)
            buf[threadIdx.x] = fmaxf(buf[threadIdx.x], buf[threadIdx.x + h]);
        __syncthreads();
    }
    hi = buf[0];
    __syncthreads();
    float s = 0.0f;
    for (int k = threadIdx.x; k < cols; k += blockDim.x)
        s += expf(in[k] - hi);
    buf[threadIdx.x] = s;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h)
            buf[threadIdx.x] += buf[threadIdx.x + h];
        __syncthreads();
    }
    const float total = buf[0];
    for (int k = threadIdx.x; k < cols; k += blockDim.x) {
        out[k] = expf(in[k] - hi) / total;
    }
}
