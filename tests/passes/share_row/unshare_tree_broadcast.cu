// RUN: kltrans opt -p unshare-row --assume reassoc
// GATE: tests/data/workloads/rowsoftmax
// ROUNDTRIP: none: share-row folds with butterflies and slots, not a shared-memory tree
// A block per row with a shared-memory tree whose result every thread reads back from
// buf[0] (a barrier before the buffer is reused): one thread per row, a guard added.
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
    for (int k = threadIdx.x; k < cols; k += blockDim.x)
        out[k] = expf(in[k] - hi) / buf[0];
}
