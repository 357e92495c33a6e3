// Scans: Hillis-Steele and Blelloch in shared memory, shuffle-up and cooperative-groups
// warp scans, and a single-pass scan whose blocks look back at their predecessors.
// Marks as in collectives_warp.cu.
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

#define N 512

// Hillis-Steele, through a temporary, two barriers a step
__global__ void scan_hs(const float* in, float* out) {
    __shared__ float s[N];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * N + tid];
    __syncthreads();
    for (int off = 1; off < N; off *= 2) {  // coll: block scan sum hillis-steele
        float t = tid >= off ? s[tid - off] : 0.f;
        __syncthreads();
        s[tid] += t;
        __syncthreads();
    }
    out[blockIdx.x * N + tid] = s[tid];
}

// Blelloch: up-sweep, clear the root, down-sweep (two elements a thread)
__global__ void scan_blelloch(const int* in, int* out) {
    __shared__ int tree[N];
    int th = threadIdx.x;
    tree[2 * th] = in[blockIdx.x * N + 2 * th];
    tree[2 * th + 1] = in[blockIdx.x * N + 2 * th + 1];
    int gap = 1;
    for (int live = N / 2; live > 0; live >>= 1) {
        __syncthreads();
        if (th < live) {
            int lo = gap * (2 * th + 1) - 1, hi = gap * (2 * th + 2) - 1;
            tree[hi] += tree[lo];
        }
        gap <<= 1;
    }
    if (th == 0) tree[N - 1] = 0;
    for (int live = 1; live < N; live <<= 1) {  // coll: block scan sum blelloch
        gap >>= 1;
        __syncthreads();
        if (th < live) {
            int lo = gap * (2 * th + 1) - 1, hi = gap * (2 * th + 2) - 1;
            int keep = tree[lo];
            tree[lo] = tree[hi];
            tree[hi] += keep;
        }
    }
    __syncthreads();
    out[blockIdx.x * N + 2 * th] = tree[2 * th];
    out[blockIdx.x * N + 2 * th + 1] = tree[2 * th + 1];
}

// a warp scan with shuffle-up, the lanes below the offset keeping their value
__device__ unsigned lane_prefix(unsigned x) {
    const int lane = threadIdx.x & 31;
    for (int d = 1; d <= 16; d <<= 1) {  // coll: warp scan sum shuffle-up-scan
        unsigned y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += y;
    }
    return x;
}

// the same, written out
__device__ int lane_prefix_unrolled(int x, int lane) {
    int y = __shfl_up_sync(0xffffffffu, x, 1);  // coll: warp scan sum shuffle-up-scan
    if (lane >= 1) x += y;
    y = __shfl_up_sync(0xffffffffu, x, 2);
    if (lane >= 2) x += y;
    y = __shfl_up_sync(0xffffffffu, x, 4);
    if (lane >= 4) x += y;
    y = __shfl_up_sync(0xffffffffu, x, 8);
    if (lane >= 8) x += y;
    y = __shfl_up_sync(0xffffffffu, x, 16);
    if (lane >= 16) x += y;
    return x;
}

__global__ void scan_tiles(const int* in, int* out) {
    auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int inc = cg::inclusive_scan(tile, in[i]);  // coll: warp scan sum cg-scan
    int exc = cg::exclusive_scan(tile, in[i], cg::bit_or<int>());  // coll: warp scan or cg-scan
    out[i] = inc + exc + (int)lane_prefix((unsigned)in[i]);  // coll: warp scan sum shuffle-up-scan via lane_prefix
    out[i] += lane_prefix_unrolled(in[i], threadIdx.x & 31);  // coll: warp scan sum shuffle-up-scan via lane_prefix_unrolled
}

// single pass: each block scans its tile, then waits for its predecessor's inclusive
// prefix (flag in the top bit), then publishes its own
__global__ void scan_chained(const unsigned* in, unsigned* out, volatile unsigned long long* state) {
    __shared__ unsigned sums[32];
    __shared__ unsigned carry;
    int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    int i = blockIdx.x * blockDim.x + tid;
    unsigned v = lane_prefix(in[i]);  // coll: warp scan sum shuffle-up-scan via lane_prefix
    if (lane == 31) sums[warp] = v;  // coll: block scan sum warp-slots
    __syncthreads();
    if (warp == 0) {
        unsigned w = lane_prefix(lane < blockDim.x / 32 ? sums[lane] : 0u);  // coll: warp scan sum shuffle-up-scan via lane_prefix
        sums[lane] = w;
    }
    __syncthreads();
    unsigned mine = v + (warp > 0 ? sums[warp - 1] : 0u);
    if (tid == blockDim.x - 1) {
        unsigned long long word = 0;
        if (blockIdx.x > 0) {
            do {  // coll: grid scan sum look-back
                word = state[blockIdx.x - 1];
            } while ((word >> 63) == 0);
        }
        unsigned before = (unsigned)word;
        state[blockIdx.x] = (1ull << 63) | (before + mine);
        carry = before;
    }
    __syncthreads();
    out[i] = carry + mine;
}

// a spin-wait with no scan around it: a flag handed from host or another kernel
__global__ void wait_for_go(volatile int* go, float* y) {
    if (threadIdx.x == 0)
        while (*go == 0) {  // coll: none: a spin-wait in a function that scans nothing
        }
    __syncthreads();
    y[threadIdx.x] = 1.f;
}

// one thread per output, the naive way: its own loop (a thread's fold, no collective
// across threads)
__global__ void scan_naive(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int run = 0;
    for (int k = 0; k <= i; ++k)  // coll: thread reduce sum loop
        run += in[k];
    out[i] = run;
}
