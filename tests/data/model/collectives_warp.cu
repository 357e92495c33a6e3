// Warp reductions in several authors' spellings. A line that starts a collective is
// marked after "coll:" with scope, kind, operator and technique (and "via NAME" at the
// call of a helper or lambda that holds one), several separated by ";", or with "none"
// and why it is not one. A line with no mark must start no collective.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

#define LANES 32
#define ALL_LANES 0xffffffffu

// style 1: the classic intrinsic loop, offsets halved by a shift
__device__ float warpReduce(float v) {
    for (int o = 16; o > 0; o >>= 1)  // coll: warp reduce sum shuffle-down
        v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}

// style 2: a butterfly for the maximum, warpSize / 2 halved by division
__device__ float butterfly_max(float x) {
    for (int mask = warpSize / 2; mask > 0; mask /= 2) {  // coll: warp reduce max shuffle-xor
        x = fmaxf(x, __shfl_xor_sync(ALL_LANES, x, mask));
    }
    return x;
}

// style 3: cooperative groups, the tile's own size, a temporary
__device__ int tile_min(cg::thread_block_tile<32> tile, int k) {
    for (int d = tile.size() / 2; d >= 1; d = d / 2) {  // coll: warp reduce min shuffle-down
        int other = tile.shfl_down(k, d);
        k = min(k, other);
    }
    return k;
}

// style 4: the width spelled out, the start from a macro, fully unrolled by pragma
__device__ float width_sum(float acc) {
#pragma unroll
    for (int step = LANES / 2; step; step >>= 1)  // coll: warp reduce sum shuffle-down
        acc = acc + __shfl_down_sync(ALL_LANES, acc, step, LANES);
    return acc;
}

struct MaxAbs { __device__ float operator()(float a, float b) const { return fabsf(a) > fabsf(b) ? a : b; } };

// style 5: a combine of the author's own: the operator is custom
__device__ float max_abs(float v) {
    MaxAbs pick;
    for (int o = 16; o > 0; o >>= 1)  // coll: warp reduce custom shuffle-xor
        v = pick(v, __shfl_xor_sync(ALL_LANES, v, o));
    return v;
}

// style 6: the online-softmax pair merge: two values folded together
__device__ void fold_pair(float& m, float& s, float m2, float s2) {
    float mx = fmaxf(m, m2);
    s = s * __expf(m - mx) + s2 * __expf(m2 - mx);
    m = mx;
}

__device__ void pair_reduce(float& m, float& s) {
    for (int o = 16; o > 0; o >>= 1)  // coll: warp reduce merge shuffle-xor
        fold_pair(m, s, __shfl_xor_sync(ALL_LANES, m, o), __shfl_xor_sync(ALL_LANES, s, o));
}

// style 7: written out, five statements
__device__ unsigned bits_or(unsigned b) {
    b |= __shfl_xor_sync(ALL_LANES, b, 16);  // coll: warp reduce or shuffle-xor
    b |= __shfl_xor_sync(ALL_LANES, b, 8);
    b |= __shfl_xor_sync(ALL_LANES, b, 4);
    b |= __shfl_xor_sync(ALL_LANES, b, 2);
    b |= __shfl_xor_sync(ALL_LANES, b, 1);
    return b;
}

// two sums at once, written out
__device__ void two_sums(float& a, float& q) {
    a += __shfl_down_sync(ALL_LANES, a, 4);  // coll: warp reduce sum shuffle-down
    q += __shfl_down_sync(ALL_LANES, q, 4);
    a += __shfl_down_sync(ALL_LANES, a, 2);
    q += __shfl_down_sync(ALL_LANES, q, 2);
    a += __shfl_down_sync(ALL_LANES, a, 1);
    q += __shfl_down_sync(ALL_LANES, q, 1);
}

// the refused cases
__device__ float not_reductions(float v, float* out, int lane) {
    v = __shfl_sync(ALL_LANES, v, 0);  // coll: none: a broadcast from lane 0 folds nothing
    for (int o = 16; o > 0; o >>= 1)  // coll: none: the loop halves but moves values, never folds them
        out[o * 32 + lane] = __shfl_down_sync(ALL_LANES, v, o);
    for (int o = 1; o < 32; o *= 2)  // coll: none: the offset doubles, not a reduction's shape for a down shuffle
        v += __shfl_down_sync(ALL_LANES, v, o);
    v += __shfl_xor_sync(ALL_LANES, v, 1);  // coll: none: one exchange between neighbours, not a whole reduction
    return v;
}

// kernels: a warp per row, every spelling at its call site
__global__ void row_stats(const float* x, float* y, int rows, int cols) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    int row = blockIdx.x * tile.meta_group_size() + tile.meta_group_rank();
    if (row >= rows) return;
    float s = 0.f, m = -INFINITY;
    for (int c = tile.thread_rank(); c < cols; c += 32) {  // coll: thread reduce merge loop
        s += x[row * cols + c];
        m = fmaxf(m, x[row * cols + c]);
    }
    float total = cg::reduce(tile, s, cg::plus<float>());  // coll: warp reduce sum cg-reduce
    float big = cg::reduce(tile, m, cg::greater<float>());  // coll: warp reduce max cg-reduce
    int n = __reduce_add_sync(ALL_LANES, s > 0.f ? 1 : 0);  // coll: warp reduce sum reduce-intrinsic
    auto warpSum = [](float v) {
        for (int o = 16; o > 0; o >>= 1)  // coll: warp reduce sum shuffle-xor
            v += __shfl_xor_sync(ALL_LANES, v, o);
        return v;
    };
    float again = warpSum(s);  // coll: warp reduce sum shuffle-xor via warpSum
    float w = warpReduce(s) + butterfly_max(m);  // coll: warp reduce sum shuffle-down via warpReduce; warp reduce max shuffle-xor via butterfly_max
    pair_reduce(m, s);  // coll: warp reduce merge shuffle-xor via pair_reduce
    if (tile.thread_rank() == 0)
        y[row] = total + big + n + again + w + tile_min(tile, (int)s) + width_sum(s) + max_abs(m) + bits_or(n) + not_reductions(s, y, 0);  // coll: warp reduce min shuffle-down via tile_min; warp reduce sum shuffle-down via width_sum; warp reduce custom shuffle-xor via max_abs; warp reduce or shuffle-xor via bits_or
}
