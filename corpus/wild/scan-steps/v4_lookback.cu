// kltrans: launch prefixSumLookback grid=ceil_div(n, TILE_ITEMS) block=BLOCK_THREADS
// Single-pass scan with decoupled look-back (Merrill & Garland 2016), 32 consecutive
// elements per thread, tiles of 8192 elements.
// Loading: each warp reads its 1024 elements with coalesced, streaming 16-byte loads
// (__ldcs), stages them in shared memory (XOR-swizzled so that neither the striped
// writes nor the per-thread reads have bank conflicts) and reads back 8 consecutive
// int4 per thread, so every thread owns 32 consecutive elements in registers.
// Scanning: a sequential scan of the 32 items in registers, a warp scan of the thread
// totals (warpInclusiveScan, __shfl_up_sync) and a scan of the 8 warp totals by the
// first warp, as in the shuffle version.
// Look-back: tile numbers still come from the atomic counter in tileState[0], so every
// tile waited on is held by a block that is already running. As soon as the tile total
// is known the first warp publishes it with an AGGREGATE flag, then inspects the 32
// tiles before it at once (one status word per lane): it waits until all 32 are
// published, adds the values up to and including the nearest one that carries an
// inclusive PREFIX (one warp reduction), and moves the window 32 tiles back when none
// does. It then publishes its own inclusive PREFIX. Tiles no longer wait in a chain
// for their neighbour's full prefix, only for the neighbours' totals.
// Status word: value << 32 | flag, read and written as one 64-bit volatile word, so a
// value is never seen without its flag. Storing: the results go back through the same
// shared staging buffer and leave with coalesced streaming 16-byte stores (__stcs).
// The last (partial) tile, and buffers that are not 16-byte aligned, load and store
// each thread's 32 elements directly with bounds checks.
#include <stdint.h>

typedef unsigned acc_t;

constexpr int WARP = 32;
constexpr int BLOCK_THREADS = 256;
constexpr int WARPS = BLOCK_THREADS / WARP;
constexpr int VECS_PER_THREAD = 8;                        // int4 per thread
constexpr int ITEMS_PER_THREAD = 4 * VECS_PER_THREAD;     // 32
constexpr int WARP_ITEMS = WARP * ITEMS_PER_THREAD;       // 1024
constexpr int TILE_ITEMS = BLOCK_THREADS * ITEMS_PER_THREAD;  // 8192
constexpr unsigned int FULL_MASK = 0xffffffffu;
constexpr unsigned long long STATUS_MASK = 3ull;
constexpr unsigned long long STATUS_AGGREGATE = 1ull;
constexpr unsigned long long STATUS_PREFIX = 2ull;

// inclusive scan of v across the 32 lanes of a warp
__device__ __forceinline__ acc_t warpInclusiveScan(acc_t v, int lane)
{
#pragma unroll
    for (int delta = 1; delta < WARP; delta *= 2) {
        acc_t neighbour = __shfl_up_sync(FULL_MASK, v, delta);
        if (lane >= delta)
            v += neighbour;
    }
    return v;
}

// sum of v over the 32 lanes, in every lane
__device__ __forceinline__ acc_t warpSum(acc_t v)
{
#pragma unroll
    for (int mask = WARP / 2; mask > 0; mask /= 2)
        v += __shfl_xor_sync(FULL_MASK, v, mask);
    return v;
}

// position of int4 number i (0..255) of a warp's staging area: the low three bits are
// XORed with bits 3..5, so 8 consecutive lanes hit 8 different bank quads both when
// lane l writes vector k * 32 + l and when it reads vector l * 8 + k
__device__ __forceinline__ int swizzle(int i)
{
    return i ^ ((i >> 3) & 7);
}

__device__ __forceinline__ void publish(unsigned long long* slot, unsigned long long flag,
                                        acc_t value)
{
    *(volatile unsigned long long*)slot = ((unsigned long long)value << 32) | flag;
}

__global__ void __launch_bounds__(BLOCK_THREADS)
prefixSumLookback(const int* input, int* output, int n, unsigned long long* tileState)
{
    __shared__ int4 staging[WARPS][WARP * VECS_PER_THREAD];   // 32 KiB
    __shared__ acc_t warpSums[WARPS];
    __shared__ unsigned int tileId;
    __shared__ acc_t carryIn;

    int thid = threadIdx.x;
    int lane = thid % WARP;
    int warp = thid / WARP;
    if (thid == 0)
        tileId = (unsigned int)atomicAdd(tileState, 1ull);
    __syncthreads();
    unsigned int tile = tileId;
    unsigned long long* status = tileState + 1;

    long long tileStart = (long long)tile * TILE_ITEMS;
    long long warpStart = tileStart + warp * WARP_ITEMS;
    long long myStart = warpStart + lane * ITEMS_PER_THREAD;
    bool wholeTile = tileStart + TILE_ITEMS <= n &&
                     (((uintptr_t)input | (uintptr_t)output) & 15) == 0;
    int4* stage = staging[warp];

    acc_t item[ITEMS_PER_THREAD];
    if (wholeTile) {
        const int4* src = reinterpret_cast<const int4*>(input + warpStart);
        int4 raw[VECS_PER_THREAD];   // all eight loads in flight before the first use
#pragma unroll
        for (int k = 0; k < VECS_PER_THREAD; k++)
            raw[k] = __ldcs(src + k * WARP + lane);
#pragma unroll
        for (int k = 0; k < VECS_PER_THREAD; k++)
            stage[swizzle(k * WARP + lane)] = raw[k];
        __syncwarp();
#pragma unroll
        for (int k = 0; k < VECS_PER_THREAD; k++) {
            int4 q = stage[swizzle(lane * VECS_PER_THREAD + k)];
            item[4 * k + 0] = (acc_t)q.x;
            item[4 * k + 1] = (acc_t)q.y;
            item[4 * k + 2] = (acc_t)q.z;
            item[4 * k + 3] = (acc_t)q.w;
        }
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS_PER_THREAD; k++)
            item[k] = myStart + k < n ? (acc_t)input[myStart + k] : 0u;
    }

    // thread, warp, then block level
#pragma unroll
    for (int k = 1; k < ITEMS_PER_THREAD; k++)
        item[k] += item[k - 1];
    acc_t threadTotal = item[ITEMS_PER_THREAD - 1];
    acc_t threadInclusive = warpInclusiveScan(threadTotal, lane);
    acc_t threadBefore = threadInclusive - threadTotal;
    if (lane == WARP - 1)
        warpSums[warp] = threadInclusive;
    __syncthreads();

    if (warp == 0) {
        acc_t total = lane < WARPS ? warpSums[lane] : 0u;
        acc_t scanned = warpInclusiveScan(total, lane);
        if (lane < WARPS)
            warpSums[lane] = scanned - total;   // exclusive: sum of the warps before
        acc_t aggregate = __shfl_sync(FULL_MASK, scanned, WARPS - 1);

        acc_t before = 0;
        if (tile == 0) {
            if (lane == 0)
                publish(status, STATUS_PREFIX, aggregate);
        } else {
            if (lane == 0)
                publish(status + tile, STATUS_AGGREGATE, aggregate);
            // lane l looks at tile (tile - 1 - l), then 32 tiles further back
            long long probe = (long long)tile - 1 - lane;
            while (true) {
                unsigned long long word;
                do {
                    word = STATUS_PREFIX;   // before tile 0: an empty prefix
                    if (probe >= 0)
                        word = *(volatile unsigned long long*)(status + probe);
                } while (__any_sync(FULL_MASK, (word & STATUS_MASK) == 0));
                unsigned int prefixLanes = __ballot_sync(FULL_MASK, (word & STATUS_MASK) == STATUS_PREFIX);
                int nearest = prefixLanes ? __ffs(prefixLanes) - 1 : WARP - 1;
                before += warpSum(lane <= nearest ? (acc_t)(word >> 32) : 0u);
                if (prefixLanes)
                    break;
                probe -= WARP;
            }
            if (lane == 0)
                publish(status + tile, STATUS_PREFIX, before + aggregate);
        }
        if (lane == 0)
            carryIn = before;
    }
    __syncthreads();

    acc_t offset = carryIn + warpSums[warp] + threadBefore;
    if (wholeTile) {
#pragma unroll
        for (int k = 0; k < VECS_PER_THREAD; k++)
            stage[swizzle(lane * VECS_PER_THREAD + k)] =
                make_int4((int)(offset + item[4 * k + 0]), (int)(offset + item[4 * k + 1]),
                          (int)(offset + item[4 * k + 2]), (int)(offset + item[4 * k + 3]));
        __syncwarp();
        int4* dst = reinterpret_cast<int4*>(output + warpStart);
#pragma unroll
        for (int k = 0; k < VECS_PER_THREAD; k++)
            __stcs(dst + k * WARP + lane, stage[swizzle(k * WARP + lane)]);
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS_PER_THREAD; k++)
            if (myStart + k < n)
                output[myStart + k] = (int)(offset + item[k]);
    }
}
