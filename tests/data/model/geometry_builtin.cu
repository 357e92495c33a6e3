// Thread geometry in raw builtins. Each declaration marked "role:" must be read with that
// role (kind, dimension, width, split), or with none, and why, after "role: none:".
#include <cstddef>

#define TID threadIdx.x
#define GTID (blockIdx.x*blockDim.x+threadIdx.x)
#define FLAT(b, t) ((b) * blockDim.x + (t))

__global__ void axpy_styles(const float* x, float* y, float a, int n)
{
    int tid = threadIdx.x;  // role: thread x
    int i = blockIdx.x * blockDim.x + tid;  // role: global x
    int i2 = threadIdx.x + blockDim.x * blockIdx.x;  // role: global x
    int i3 = blockDim.x*blockIdx.x+threadIdx.x;  // role: global x
    size_t i4 = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // role: global x
    long i5 = (long)blockIdx.x * (long)blockDim.x + (int)threadIdx.x;  // role: global x
    unsigned t2 = TID;  // role: thread x
    int g = GTID;  // role: global x
    int g2 = FLAT(blockIdx.x, threadIdx.x);  // role: global x
    int bid = blockIdx.x;  // role: block x
    int bdim = blockDim.x;  // role: block-size x
    int nthreads = gridDim.x * blockDim.x;  // role: grid-size x
    int nthreads2 = blockDim.x * gridDim.x;  // role: grid-size x
    int twice = threadIdx.x * 2;  // role: none: a scaled index is not the index
    int next = tid + 1;  // role: none: an index plus an offset
    float xv = x[i];  // role: none: data loaded per thread
    int sel = (int)x[tid];  // role: none: data loaded per thread, cast to int
    int nb = gridDim.x;  // role: grid-blocks x
    int wrong = blockIdx.x * blockDim.y + threadIdx.x;  // role: none: scaled by the y extent
    if (i < n && i2 == i && i3 == i && i4 == (size_t)i && i5 == i && g == g2 && t2 == tid)
        y[i] = a * xv + y[i] + bid + bdim + nthreads + nthreads2 + twice + next + sel + nb +
               wrong;
}

__global__ void warps_and_lanes(const float* x, float* out)
{
    const unsigned lane = threadIdx.x % 32;  // role: lane x 32 mod 32
    const unsigned lane2 = threadIdx.x & 31;  // role: lane x 32 mod 32
    const unsigned lane3 = threadIdx.x % warpSize;  // role: lane x 32 mod 32
    const unsigned lane4 = threadIdx.x & (warpSize - 1);  // role: lane x 32 mod 32
    const unsigned lane5 = threadIdx.x & 0x1f;  // role: lane x 32 mod 32
    const unsigned warp = threadIdx.x / 32;  // role: warp x 32 div 32
    const unsigned warp2 = threadIdx.x >> 5;  // role: warp x 32 div 32
    const unsigned warp3 = threadIdx.x / warpSize;  // role: warp x 32 div 32
    const unsigned half = threadIdx.x % 16;  // role: thread x mod 16
    const unsigned wid = (blockIdx.x * blockDim.x + threadIdx.x) / 32;  // role: global x div 32
    const unsigned glane = (blockIdx.x * blockDim.x + threadIdx.x) % 32;  // role: global x mod 32
    const unsigned warps = blockDim.x / 32;  // role: block-size x div 32
    const unsigned sub = lane / 4;  // role: none: a lane split again
    const unsigned odd = threadIdx.x & 7u;  // role: thread x mod 8
    const unsigned mask = threadIdx.x & 6u;  // role: none: a mask that is not 2^k - 1
    out[threadIdx.x] = x[lane] + lane2 + lane3 + lane4 + lane5 + warp + warp2 + warp3 + half +
                       wid + glane + warps + sub + odd + mask;
}

__global__ void grid_2d(const float* in, float* out, int rows, int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;  // role: global x
    int row = blockIdx.y * blockDim.y + threadIdx.y;  // role: global y
    int tz = threadIdx.z;  // role: thread z
    int flat = threadIdx.y * blockDim.x + threadIdx.x;  // role: thread linear
    int flat3 = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);  // role: thread linear
    int lane = flat % 32;  // role: lane linear 32 mod 32
    int warp = flat / 32;  // role: warp linear 32 div 32
    int bflat = blockIdx.y * gridDim.x + blockIdx.x;  // role: block linear
    int gflat = bflat * blockDim.x + threadIdx.x;  // role: global linear
    int mixed = blockIdx.y * blockDim.x + threadIdx.y;  // role: none: y index scaled by the x extent
    if (row < rows && col < cols)
        out[row * cols + col] = in[col * rows + row] + tz + flat3 + lane + warp + gflat + mixed;
}

__global__ void split_rows(const float* in, float* out, int total, int ncols)
{
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;  // role: global x
    const int r = gid / ncols;  // role: global x div ncols
    const int c = gid % ncols;  // role: global x mod ncols
    const int quad = gid >> 2;  // role: global x div 4
    const int rr = r % 2;  // role: none: a split of a split
    if (gid < total)
        out[c * (total / ncols) + r] = in[gid] + quad + rr;
}
