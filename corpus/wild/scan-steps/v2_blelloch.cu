// kltrans: launch prefixSumBlelloch grid=ceil_div(n, TILE) block=HALF
// Chained single-pass scan, tiles of TILE elements, two elements per thread.
// Inside a tile: work-efficient Blelloch scan in shared memory: an up-sweep builds a
// reduction tree in place (the root ends up holding the tile total), the root is
// cleared, and a down-sweep pushes the prefixes back down, giving the exclusive scan in
// O(TILE) additions instead of Hillis-Steele's O(TILE log TILE); each element's own
// value is added back to make it inclusive.
// Across tiles: the same chain as before - tile numbers from the atomic counter in
// tileState[0], one thread waits for tile t-1's inclusive prefix (tileState[t]) and
// publishes tile t's (tileState[1 + t], value << 32 | flag in one 64-bit word).

typedef unsigned acc_t;

constexpr int TILE = 1024;
constexpr int HALF = TILE / 2;
constexpr unsigned long long STATUS_PREFIX = 2ull;

__global__ void prefixSumBlelloch(const int* input, int* output, int n,
                                  unsigned long long* tileState)
{
    __shared__ acc_t temp[TILE];
    __shared__ unsigned int tileId;
    __shared__ acc_t tileSum;
    __shared__ acc_t carryIn;

    int thid = threadIdx.x;
    if (thid == 0)
        tileId = (unsigned int)atomicAdd(tileState, 1ull);
    __syncthreads();
    unsigned int tile = tileId;

    // element thid and element thid + HALF of the tile (coalesced)
    long long ga = (long long)tile * TILE + thid;
    long long gb = ga + HALF;
    acc_t a = ga < n ? (acc_t)input[ga] : 0u;
    acc_t b = gb < n ? (acc_t)input[gb] : 0u;
    temp[thid] = a;
    temp[thid + HALF] = b;

    // up-sweep (reduce)
    int offset = 1;
    for (int d = HALF; d > 0; d >>= 1) {
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            temp[bi] += temp[ai];
        }
        offset *= 2;
    }

    if (thid == 0) {
        tileSum = temp[TILE - 1];
        temp[TILE - 1] = 0;
    }

    // down-sweep
    for (int d = 1; d < TILE; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            acc_t t = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += t;
        }
    }
    __syncthreads();

    // chain
    if (thid == 0) {
        acc_t before = 0;
        if (tile > 0) {
            volatile unsigned long long* prev = tileState + tile;   // status of tile - 1
            unsigned long long word = *prev;
            while ((word & STATUS_PREFIX) == 0)
                word = *prev;
            before = (acc_t)(word >> 32);
        }
        volatile unsigned long long* mine = tileState + 1 + tile;
        *mine = ((unsigned long long)(before + tileSum) << 32) | STATUS_PREFIX;
        carryIn = before;
    }
    __syncthreads();

    if (ga < n)
        output[ga] = (int)(carryIn + temp[thid] + a);
    if (gb < n)
        output[gb] = (int)(carryIn + temp[thid + HALF] + b);
}
