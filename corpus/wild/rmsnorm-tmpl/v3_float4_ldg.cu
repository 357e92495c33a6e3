// kltrans: launch rmsNorm<float, 256> grid=min(rows, MAX_BLOCKS) block=256 smem=256*4
// RMSNorm, version 3 (expert): 16-byte memory traffic. When cols is a multiple of 4,
// every row starts on a 16-byte boundary, so both sweeps move x, w and y as float4
// (a quarter of the load/store instructions, full 128-byte lines per warp); other widths
// keep the scalar loops of version 2. w, which every block reads once per row, goes
// through __ldg and the read-only data cache. The reduction (unrolled shared-memory
// tree on blockSize, shuffle helper for the last warp) and the capped grid with its
// pointer-advancing row loop are unchanged. The float4 path reinterprets T as float:
// the only instantiation is the one the launch above describes, rmsNorm<float, 256>.

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

    const bool vec4 = (cols & 3) == 0;
    const int cols4 = cols >> 2;
    const float4 *w4 = reinterpret_cast<const float4 *>(w);

    // first row of this block
    x += (size_t)blockIdx.x * cols;
    y += (size_t)blockIdx.x * cols;

    for (int row = blockIdx.x; row < rows; row += gridDim.x) {
        const float4 *x4 = reinterpret_cast<const float4 *>(x);
        float4 *y4 = reinterpret_cast<float4 *>(y);

        T acc = 0;
        if (vec4) {
            for (int i = tid; i < cols4; i += blockSize) {
                float4 v = x4[i];
                acc += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
            }
        } else {
            for (int c = tid; c < cols; c += blockSize) {
                T v = x[c];
                acc += v * v;
            }
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

        // second sweep: the row was just read, so x mostly comes back from cache
        if (vec4) {
            for (int i = tid; i < cols4; i += blockSize) {
                float4 v = x4[i];
                float4 g = __ldg(&w4[i]);
                float4 o;
                o.x = v.x * scale * g.x;
                o.y = v.y * scale * g.y;
                o.z = v.z * scale * g.z;
                o.w = v.w * scale * g.w;
                y4[i] = o;
            }
        } else {
            for (int c = tid; c < cols; c += blockSize) {
                y[c] = x[c] * scale * __ldg(&w[c]);
            }
        }

        x += gridDim.x * cols;
        y += gridDim.x * cols;
    }
}
