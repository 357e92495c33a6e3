// Shared memory in its spellings: static arrays and scalars, extern buffers re-typed and
// split into sub-arrays, an accessor struct, an accessor function, an asynchronous copy.
// The marks after "acc:" are read by tests/model/test_accesses.py (its docstring gives
// the format).
#include <cuda_pipeline.h>

template <class T>
struct SharedMemory {
    __device__ inline operator T*() { extern __shared__ int __smem[]; return (T*)__smem; }
    __device__ inline operator const T*() const { extern __shared__ int __smem[]; return (T*)__smem; }
};

template <>
struct SharedMemory<double> {
    __device__ inline operator double*() { extern __shared__ double __smem_d[]; return (double*)__smem_d; }
};

template <class T, unsigned int blockSize>
__global__ void reduce_block(const T* g_in, T* g_out, unsigned int n)
{
    T* sdata = SharedMemory<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    T sum = (i < n) ? g_in[i] : 0;  // acc: read global g_in t=float idx 2*blockSize*bx + tx
    if (i + blockSize < n)
        sum += g_in[i + blockSize];  // acc: read global g_in idx 2*blockSize*bx + tx + blockSize
    sdata[tid] = sum;  // acc: write shared __smem t=int idx tx
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] = sum = sum + sdata[tid + s];  // acc: write shared __smem idx tx; read shared __smem idx tx + s
        __syncthreads();
    }
    if (tid < 32) {
        volatile T* vs = sdata;
        vs[tid] += vs[tid + 16];  // acc: readwrite shared __smem idx tx; read shared __smem idx tx + 16
    }
    if (tid == 0)
        g_out[blockIdx.x] = sdata[0];  // acc: write global g_out idx bx; read shared __smem idx 0
}
template __global__ void reduce_block<float, 256>(const float*, float*, unsigned int);

template <class T>
__global__ void reduce_any(const T* in, T* out)
{
    T* buf = SharedMemory<T>();  // never instantiated here: the buffer is measured in T
    buf[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];  // acc: write shared __smem t=T idx tx; read global in t=T idx bx*bdx + tx
    __syncthreads();
    out[blockIdx.x] = buf[blockDim.x - 1];  // acc: write global out idx bx; read shared __smem t=T idx bdx - 1
}

__global__ void reduce_double(const double* in, double* out)
{
    double* sd = SharedMemory<double>();
    sd[threadIdx.x] = in[threadIdx.x];  // acc: write shared __smem_d t=double idx tx; read global in idx tx
    out[0] = sd[1];  // acc: write global out idx 0; read shared __smem_d idx 1
}

__global__ void two_buffers(const float* a, const float* b, float* out, int tile)
{
    extern __shared__ char smem[];
    float* sa = (float*)smem;
    float* sb = sa + tile;
    int* flags = reinterpret_cast<int*>(smem + 8 * tile);
    sa[threadIdx.x] = a[blockIdx.x * tile + threadIdx.x];  // acc: write shared smem t=char w4 idx 4*tx; read global a idx bx*tile + tx
    sb[threadIdx.x] = b[blockIdx.x * tile + threadIdx.x];  // acc: write shared smem w4 idx 4*tile + 4*tx; read global b idx bx*tile + tx
    flags[threadIdx.x] = 0;  // acc: write shared smem w4 idx 8*tile + 4*tx
    __syncthreads();
    out[blockIdx.x * tile + threadIdx.x] = sa[threadIdx.x] * sb[tile - 1 - threadIdx.x];  // acc: write global out idx bx*tile + tx; read shared smem w4 idx 4*tx; read shared smem w4 idx 8*tile - 4 - 4*tx
}

__global__ void stage_row(const float* x, float* y, int n)
{
    extern __shared__ float row[];
    __shared__ int count;
    if (threadIdx.x == 0)
        count = 0;  // acc: write shared count idx 0
    for (int j = threadIdx.x; j < n; j += blockDim.x)
        row[j] = x[blockIdx.x * n + j];  // acc: write shared row idx j; read global x idx bx*n + j
    __syncthreads();
    atomicAdd(&count, 1);  // acc: atomic shared count idx 0
    y[blockIdx.x * n + threadIdx.x] = row[n - 1 - threadIdx.x] + count;  // acc: write global y idx bx*n + tx; read shared row idx n - 1 - tx; read shared count idx 0
}

__device__ float* scratch() { extern __shared__ float dyn[]; return dyn; }

__global__ void via_accessor(float* y)
{
    float* s = scratch();
    float* upper = s + blockDim.x;
    s[threadIdx.x] = 1.f;  // acc: write shared dyn idx tx
    upper[threadIdx.x] = s[threadIdx.x];  // acc: write shared dyn idx bdx + tx; read shared dyn idx tx
    y[threadIdx.x] = upper[0];  // acc: write global y idx tx; read shared dyn idx bdx
}

__global__ void async_stage(const float4* src, float* dst)
{
    __shared__ float4 buf[128];
    __pipeline_memcpy_async(&buf[threadIdx.x], &src[blockIdx.x * 128 + threadIdx.x], sizeof(float4));  // acc: read global src op=copy.async idx 128*bx + tx; write shared buf op=copy.async idx tx
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    dst[blockIdx.x * 128 + threadIdx.x] = buf[threadIdx.x].y;  // acc: write global dst idx 128*bx + tx; read shared buf t=float4 idx tx
}
