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
    if (cols % 4 == 0 && ((size_t)in) % 16 == 0) {
        for (int k = threadIdx.x; k < cols / 4; k += blockDim.x) {
            const float4 in4 = reinterpret_cast<const float4 *>(in)[k];
            hi = fmaxf(hi, in4.x);
            hi = fmaxf(hi, in4.y);
            hi = fmaxf(hi, in4.z);
            hi = fmaxf(hi, in4.w);
        }
    } else {
        for (int k = threadIdx.x; k < cols; k += blockDim.x)
            hi = fmaxf(hi, in[k]);
    }
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
    if (cols % 4 == 0 && ((size_t)in) % 16 == 0) {
        for (int k = threadIdx.x; k < cols / 4; k += blockDim.x) {
            const float4 in4 = reinterpret_cast<const float4 *>(in)[k];
            s += expf(in4.x - hi);
            s += expf(in4.y - hi);
            s += expf(in4.z - hi);
            s += expf(in4.w - hi);
        }
    } else {
        for (int k = threadIdx.x; k < cols; k += blockDim.x)
            s += expf(in[k] - hi);
    }
    buf[threadIdx.x] = s;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h)
            buf[threadIdx.x] += buf[threadIdx.x + h];
        __syncthreads();
    }
    const float total = buf[0];
    if (cols % 4 == 0 && ((size_t)in | (size_t)out) % 16 == 0) {
        for (int k = threadIdx.x; k < cols / 4; k += blockDim.x) {
            float4 out4;
            const float4 in4 = reinterpret_cast<const float4 *>(in)[k];
            out4.x = expf(in4.x - hi) / total;
            out4.y = expf(in4.y - hi) / total;
            out4.z = expf(in4.z - hi) / total;
            out4.w = expf(in4.w - hi) / total;
            reinterpret_cast<float4 *>(out)[k] = out4;
        }
    } else {
        for (int k = threadIdx.x; k < cols; k += blockDim.x) {
            out[k] = expf(in[k] - hi) / total;
        }
    }
}
