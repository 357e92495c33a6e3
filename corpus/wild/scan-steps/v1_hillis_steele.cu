// kltrans: launch prefixSumHillisSteele grid=ceil_div(n, TILE) block=TILE
// Chained single-pass scan, tiles of TILE elements (one per thread).
// Inside a tile: Hillis-Steele scan in shared memory (log2(TILE) steps, each thread adds
// the value `offset` places to its left), double-buffered so a step never reads what it
// overwrites, with __syncthreads between steps.
// Across tiles: a block takes the next tile number from an atomic counter
// (tileState[0]), so the tile it waits for is held by a block that started before it
// and can always finish. The last thread spins until tile t-1 has published its
// inclusive prefix (tileState[t]), publishes its own in tileState[1 + t], and hands
// the prefix of the earlier tiles to the whole block. Status word: value << 32 | flag,
// written and read as one 64-bit word.

typedef unsigned acc_t;

constexpr int TILE = 1024;
constexpr unsigned long long STATUS_PREFIX = 2ull;

__global__ void prefixSumHillisSteele(const int* input, int* output, int n,
                                      unsigned long long* tileState)
{
    __shared__ acc_t buffer[2 * TILE];
    __shared__ unsigned int tileId;
    __shared__ acc_t carryIn;

    int thid = threadIdx.x;
    if (thid == 0)
        tileId = (unsigned int)atomicAdd(tileState, 1ull);
    __syncthreads();
    unsigned int tile = tileId;

    long long gi = (long long)tile * TILE + thid;
    int pout = 0, pin = 1;
    buffer[thid] = gi < n ? (acc_t)input[gi] : 0u;
    __syncthreads();

    for (int offset = 1; offset < TILE; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        acc_t v = buffer[pin * TILE + thid];
        if (thid >= offset)
            v += buffer[pin * TILE + thid - offset];
        buffer[pout * TILE + thid] = v;
        __syncthreads();
    }
    acc_t inclusive = buffer[pout * TILE + thid];

    // chain: the last thread holds the tile total
    if (thid == TILE - 1) {
        acc_t before = 0;
        if (tile > 0) {
            volatile unsigned long long* prev = tileState + tile;   // status of tile - 1
            unsigned long long word = *prev;
            while ((word & STATUS_PREFIX) == 0)
                word = *prev;
            before = (acc_t)(word >> 32);
        }
        volatile unsigned long long* mine = tileState + 1 + tile;
        *mine = ((unsigned long long)(before + inclusive) << 32) | STATUS_PREFIX;
        carryIn = before;
    }
    __syncthreads();

    if (gi < n)
        output[gi] = (int)(carryIn + inclusive);
}
