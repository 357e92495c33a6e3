// kltrans: launch prefixSumShfl grid=ceil_div(n, TILE) block=TILE
// Chained single-pass scan, tiles of TILE elements (one per thread).
// Inside a tile: warp-shuffle scan. Each warp scans its 32 values in registers with
// __shfl_up_sync (warpInclusiveScan, 5 steps, no shared memory, no __syncthreads); the
// last lane of every warp writes the warp total to shared memory; the first warp scans
// those 32 totals with the same helper, and every thread adds the total of the warps
// before its own. Two __syncthreads per tile instead of one per Hillis-Steele step.
// Across tiles: the same chain - tile numbers from the atomic counter in tileState[0];
// lane 31 of the first warp, which holds the tile total after the second warp scan,
// waits for tile t-1's inclusive prefix (tileState[t]) and publishes tile t's
// (tileState[1 + t], value << 32 | flag in one 64-bit word).

typedef unsigned acc_t;

constexpr int TILE = 1024;
constexpr int WARP = 32;
constexpr int WARPS_PER_TILE = TILE / WARP;
constexpr unsigned int FULL_MASK = 0xffffffffu;
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

__global__ void prefixSumShfl(const int* input, int* output, int n,
                              unsigned long long* tileState)
{
    __shared__ acc_t warpSums[WARPS_PER_TILE];
    __shared__ unsigned int tileId;
    __shared__ acc_t carryIn;

    int thid = threadIdx.x;
    int lane = thid % WARP;
    int warp = thid / WARP;
    if (thid == 0)
        tileId = (unsigned int)atomicAdd(tileState, 1ull);
    __syncthreads();
    unsigned int tile = tileId;

    long long gi = (long long)tile * TILE + thid;
    acc_t value = gi < n ? (acc_t)input[gi] : 0u;

    acc_t inclusive = warpInclusiveScan(value, lane);
    if (lane == WARP - 1)
        warpSums[warp] = inclusive;
    __syncthreads();

    if (warp == 0) {
        acc_t total = warpSums[lane];
        acc_t scanned = warpInclusiveScan(total, lane);
        warpSums[lane] = scanned - total;   // exclusive: sum of the warps before

        // chain: lane 31 holds the tile total
        if (lane == WARP - 1) {
            acc_t before = 0;
            if (tile > 0) {
                volatile unsigned long long* prev = tileState + tile;   // status of tile - 1
                unsigned long long word = *prev;
                while ((word & STATUS_PREFIX) == 0)
                    word = *prev;
                before = (acc_t)(word >> 32);
            }
            volatile unsigned long long* mine = tileState + 1 + tile;
            *mine = ((unsigned long long)(before + scanned) << 32) | STATUS_PREFIX;
            carryIn = before;
        }
    }
    __syncthreads();

    if (gi < n)
        output[gi] = (int)(carryIn + warpSums[warp] + inclusive);
}
