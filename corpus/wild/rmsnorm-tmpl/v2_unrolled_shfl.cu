// kltrans: launch rmsNorm<float, 256> grid=min(rows, MAX_BLOCKS) block=256 smem=256*4
// RMSNorm, version 2: the block size becomes a template parameter. With blockSize known
// at compile time the shared-memory tree is written out round by round, each round
// behind an `if (blockSize >= ...)` that the compiler keeps or drops, and the column
// stride is a constant. Once 64 partials are left, warp 0 adds the upper 32 and finishes
// in registers with a shuffle helper, without further barriers. The grid is capped at
// one resident wave; each block handles rows blockIdx.x, blockIdx.x + gridDim.x, ...,
// moving its x and y pointers forward by gridDim.x rows after each one.
// The launch above is the rmsNorm<float, 256> instantiation.

#define RMS_EPS 1e-6f

// one wave of 256-thread blocks on an H200: 132 SMs, 8 blocks each
#define MAX_BLOCKS 1056

// Typed view of the dynamic shared memory. extern __shared__ arrays of different types
// would clash between template instantiations, so the storage is declared once, as int,
// and cast on the way out.
template <class T>
struct SharedMemory {
    __device__ inline operator T *()
    {
        extern __shared__ int _dyn_smem[];
        return (T *)_dyn_smem;
    }
};

// Sum of val across the 32 lanes of the calling warp; lane 0 gets the total.
template <class T>
__device__ __forceinline__ T warpSum(T val)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        val += __shfl_down_sync(0xffffffff, val, offset);
    return val;
}

template <class T, unsigned int blockSize>
__global__ void rmsNorm(T *x, T *w, T *y, int rows, int cols)
{
    T *partial = SharedMemory<T>();
    __shared__ T scale_sh;
    unsigned int tid = threadIdx.x;

    // first row of this block
    x += (size_t)blockIdx.x * cols;
    y += (size_t)blockIdx.x * cols;

    for (int row = blockIdx.x; row < rows; row += gridDim.x) {
        T acc = 0;
        for (int c = tid; c < cols; c += blockSize) {
            T v = x[c];
            acc += v * v;
        }
        partial[tid] = acc;
        __syncthreads();

        // the tree, one round per power of two; acc keeps the running value so a
        // thread never re-reads its own slot
        if (blockSize >= 1024) {
            if (tid < 512) {
                partial[tid] = acc = acc + partial[tid + 512];
            }
            __syncthreads();
        }
        if (blockSize >= 512) {
            if (tid < 256) {
                partial[tid] = acc = acc + partial[tid + 256];
            }
            __syncthreads();
        }
        if (blockSize >= 256) {
            if (tid < 128) {
                partial[tid] = acc = acc + partial[tid + 128];
            }
            __syncthreads();
        }
        if (blockSize >= 128) {
            if (tid < 64) {
                partial[tid] = acc = acc + partial[tid + 64];
            }
            __syncthreads();
        }

        // the last 64 (or fewer) partials: warp 0 alone, in registers
        if (tid < 32) {
            if (blockSize >= 64) {
                acc += partial[tid + 32];
            }
            acc = warpSum<T>(acc);
            if (tid == 0) {
                scale_sh = rsqrtf(acc / cols + RMS_EPS);
            }
        }
        __syncthreads();

        // scale_sh lives outside the partial[] slots, so the next row's partial[tid]
        // stores cannot disturb a thread still reading it; thread 0 only rewrites it
        // after the next row's first barrier, which every thread must have reached
        T scale = scale_sh;

        for (int c = tid; c < cols; c += blockSize) {
            y[c] = x[c] * scale * w[c];
        }

        x += gridDim.x * cols;
        y += gridDim.x * cols;
    }
}
