// kltrans: launch rmsNorm<float> grid=rows block=256 smem=256*4
// RMSNorm, version 1: a thread block per row. The block's threads stride across the row
// (thread t takes columns t, t + blockDim.x, ...), so a warp's loads are contiguous.
// Each thread leaves its partial sum of squares in dynamic shared memory, reached through
// the SharedMemory<T> accessor, and the block halves the live range every round
// (s = blockDim.x / 2, ..., 1) with a barrier per round until partial[0] holds the row's
// total. Every thread then reads it and writes its own columns of y.
// blockDim.x must be a power of two; the launch above is rmsNorm<float>.

#define RMS_EPS 1e-6f

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

template <class T>
__global__ void rmsNorm(T *x, T *w, T *y, int rows, int cols)
{
    T *partial = SharedMemory<T>();
    unsigned int tid = threadIdx.x;

    // this block's row
    x += (size_t)blockIdx.x * cols;
    y += (size_t)blockIdx.x * cols;

    T acc = 0;
    for (int c = tid; c < cols; c += blockDim.x) {
        T v = x[c];
        acc += v * v;
    }
    partial[tid] = acc;
    __syncthreads();

    // tree: the lower half adds in the upper half
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            partial[tid] += partial[tid + s];
        }
        __syncthreads();
    }

    T scale = rsqrtf(partial[0] / cols + RMS_EPS);

    for (int c = tid; c < cols; c += blockDim.x) {
        y[c] = x[c] * scale * w[c];
    }
}
