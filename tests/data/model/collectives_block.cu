// Block and grid reductions: shared-memory trees, unrolled chains, warp results in
// shared slots, the cross-block atomic. Marks as in collectives_warp.cu.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

template <typename T>
struct DynSmem {
    __device__ operator T*() {
        extern __shared__ unsigned char raw_smem[];
        return reinterpret_cast<T*>(raw_smem);
    }
};

// sequential addressing through an accessor, the block's total by thread 0
__global__ void tree_sequential(const float* in, float* out, int n) {
    float* sdata = DynSmem<float>();
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? in[i] : 0.f;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {  // coll: block reduce sum shared-tree-sequential
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, sdata[0]);  // coll: grid reduce sum atomic
}

// interleaved addressing, the modulo test, a static array
__global__ void tree_modulo(const int* in, int* out) {
    __shared__ int buf[256];
    int t = threadIdx.x;
    buf[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (int stride = 1; stride < 256; stride *= 2) {  // coll: block reduce sum shared-tree-interleaved
        if (t % (2 * stride) == 0)
            buf[t] = buf[t] + buf[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = buf[0];
}

// interleaved, strided index, the maximum, one result per block by atomicMax
__global__ void tree_strided_max(const int* in, int* best) {
    extern __shared__ int vals[];
    int me = threadIdx.x;
    vals[me] = in[blockIdx.x * blockDim.x + me];
    __syncthreads();
    for (int s = 1; s < blockDim.x; s <<= 1) {  // coll: block reduce max shared-tree-interleaved
        int at = 2 * s * me;
        if (at < blockDim.x)
            vals[at] = max(vals[at], vals[at + s]);
        __syncthreads();
    }
    if (me == 0) atomicMax(&best[blockIdx.x / 4], vals[0]);  // coll: grid reduce max atomic
}

// cooperative groups: the block's rank and size, block.sync()
__global__ void tree_cg(const double* in, double* out) {
    cg::thread_block block = cg::this_thread_block();
    __shared__ double part[512];
    unsigned r = block.thread_rank();
    part[r] = in[block.group_index().x * block.size() + r];
    block.sync();
    for (unsigned h = block.size() / 2; h > 0; h /= 2) {  // coll: block reduce sum shared-tree-sequential
        if (r < h) part[r] += part[r + h];
        block.sync();
    }
    if (r == 0) out[block.group_index().x] = part[0];
}

// completely unrolled, the block size a template parameter, then the last warp
// through a volatile pointer
template <unsigned BS>
__global__ void tree_unrolled(const float* in, float* out) {
    __shared__ float s[BS];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * BS + tid];
    __syncthreads();
    if (BS >= 512) {
        if (tid < 256) s[tid] += s[tid + 256];  // coll: block reduce sum shared-tree-unrolled
        __syncthreads();
    }
    if (BS >= 256) {
        if (tid < 128) s[tid] += s[tid + 128];
        __syncthreads();
    }
    if (BS >= 128) {
        if (tid < 64) s[tid] += s[tid + 64];
        __syncthreads();
    }
    if (tid < 32) {
        volatile float* vs = s;
        vs[tid] += vs[tid + 32];  // coll: warp reduce sum shared-tree-unrolled
        vs[tid] += vs[tid + 16];
        vs[tid] += vs[tid + 8];
        vs[tid] += vs[tid + 4];
        vs[tid] += vs[tid + 2];
        vs[tid] += vs[tid + 1];
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
template __global__ void tree_unrolled<256>(const float*, float*);

__device__ __forceinline__ float lane_sum(float v) {
    for (int k = 16; k; k >>= 1)  // coll: warp reduce sum shuffle-down
        v += __shfl_down_sync(0xffffffffu, v, k);
    return v;
}

// a block reduction helper: warp results parked in shared slots, one warp folds them
__device__ float block_sum(float v) {
    __shared__ float slots[32];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = lane_sum(v);  // coll: warp reduce sum shuffle-down via lane_sum
    if (lane == 0) slots[warp] = v;  // coll: block reduce sum warp-slots
    __syncthreads();
    v = threadIdx.x < blockDim.x / 32 ? slots[lane] : 0.f;
    if (warp == 0) v = lane_sum(v);  // coll: warp reduce sum shuffle-down via lane_sum
    return v;
}

// a grid-stride sum: block_sum, then one atomic per block
__global__ void grid_sum(const float* x, float* total, int n) {
    float acc = 0.f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)  // coll: thread reduce sum loop
        acc += x[i];
    acc = block_sum(acc);  // coll: block reduce sum warp-slots via block_sum
    if (threadIdx.x == 0) atomicAdd(total, acc);  // coll: grid reduce sum atomic
}

// the refused cases, and atomics in shared memory
__global__ void not_trees(const float* x, const int* keys, float* hist, float* out, int* ticket, int n) {
    __shared__ float buf[256];
    __shared__ float s_total;
    __shared__ int my_ticket;
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    buf[t] = x[i];
    if (t == 0) s_total = 0.f;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {  // coll: none: the slots are moved down, never folded
        if (t < s) buf[t] = buf[t + s];
        __syncthreads();
    }
    atomicAdd(&s_total, buf[t]);  // coll: block reduce sum atomic
    if (i < n) atomicAdd(out, x[i]);  // coll: none: every thread adds its own element: an atomic accumulation, not a cross-block step
    if (i < n) atomicAdd(&hist[keys[i]], x[i]);  // coll: none: a per-thread address: a histogram
    if (t == 0) my_ticket = atomicAdd(ticket, 1);  // coll: none: a constant increment is a counter
    __syncthreads();
    if (t == 0) out[1 + my_ticket] = s_total;
}
