// RUN: kltrans opt -p 'smem-reduce'
// Two shuffles in one loop (the (max, sum) merge of corpus/softmax/expert.cu), each in a
// declaration: one scratch array, one exchange per shuffle.
// kltrans: launch row_stats grid=rows block=32
__device__ __forceinline__ void merge(float& m, float& s, float om, float os)
{
    const float nm = fmaxf(m, om);
    s = s * __expf(m - nm) + os * __expf(om - nm);
    m = nm;
}

__device__ __forceinline__ void warp_merge(float& m, float& s)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        __shared__ float warp_slots[1024];
        const unsigned int slot = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        warp_slots[slot] = m;
        __syncwarp();
        const float om = warp_slots[slot ^ off];
        __syncwarp();
        warp_slots[slot] = s;
        __syncwarp();
        const float os = warp_slots[slot ^ off];
        __syncwarp();
        merge(m, s, om, os);
    }
}

extern "C" __global__ void row_stats(const float* x, float* stats, int rows, int cols)
{
    const float* row = x + (size_t)blockIdx.x * cols;
    float m = -INFINITY, s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 32) {
        merge(m, s, row[c], 1.0f);
    }
    warp_merge(m, s);
    if (threadIdx.x == 0) {
        stats[2 * blockIdx.x] = m;
        stats[2 * blockIdx.x + 1] = s;
    }
}
