// Plain subscripts, dereferences and the address operands of intrinsics and atomics, in a
// textbook style (macros, 2-D shared tiles). The marks after "acc:" are read by
// tests/model/test_accesses.py (its docstring gives the format).
#define N_COLS 64
#define IDX2(r, c) ((r) * N_COLS + (c))
#define TILE_DIM 32

__global__ void axpy(const float* x, float* y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i];  // acc: write global y idx bx*bdx + tx; read global x idx bx*bdx + tx
        y[i] += *(x + i + 1);  // acc: readwrite global y idx bx*bdx + tx; read global x idx tx + bx*bdx + 1
        y[i]++;  // acc: readwrite global y idx bx*bdx + tx
    }
}

__global__ void rowwise(const double* m, double* out, int n)
{
    int row = blockIdx.y;
    int col = threadIdx.x;
    out[row * n + col] = m[IDX2(row, col)];  // acc: write global out t=double idx by*n + tx; read global m t=double idx 64*by + tx
    for (int j = col; j < n; j += blockDim.x)
        out[row * n + j] -= *(m + j);  // acc: readwrite global out idx by*n + j; read global m idx j
}

__global__ void cached(const float* __restrict__ src, float* __restrict__ dst, int* counter)
{
    unsigned t = threadIdx.x + blockIdx.x * blockDim.x;
    float v = __ldg(&src[t]) + __ldg(src + t + 32);  // acc: read global src hint=ldg op=load.cached idx tx + bx*bdx; read global src hint=ldg idx tx + bx*bdx + 32
    __stcs(&dst[2 * t], v);  // acc: write global dst hint=stcs op=store.cached idx 2*tx + 2*bx*bdx
    __stcs(dst + 2 * t + 1, __ldcs(src + t));  // acc: write global dst hint=stcs idx 2*tx + 2*bx*bdx + 1; read global src hint=ldcs idx tx + bx*bdx
    atomicAdd(counter + blockIdx.x, 1);  // acc: atomic global counter op=atomic.add idx bx
    atomicMax(&counter[gridDim.x], (int)t);  // acc: atomic global counter op=atomic.max idx gridDim.x
    atomicExch(counter, 0);  // acc: atomic global counter op=atomic.exch idx 0
}

__global__ void transpose_tile(const float* in, float* out, int width, int height)
{
    __shared__ float stage[TILE_DIM][TILE_DIM + 1];
    int c = TILE_DIM * blockIdx.x + threadIdx.x, r = TILE_DIM * blockIdx.y + threadIdx.y;
    stage[threadIdx.y][threadIdx.x] = in[r * width + c];  // acc: write shared stage idx 33*ty + tx; read global in idx (32*by + ty)*width + 32*bx + tx
    __syncthreads();
    c = TILE_DIM * blockIdx.y + threadIdx.x;
    r = TILE_DIM * blockIdx.x + threadIdx.y;
    out[r * height + c] = stage[threadIdx.x][threadIdx.y];  // acc: write global out idx (32*bx + ty)*height + 32*by + tx; read shared stage idx 33*tx + ty
    float* corner = &out[r * height];  // acc: none: an address is taken, nothing is moved
    corner[0] = *&stage[0][TILE_DIM];  // acc: write global out idx (32*bx + ty)*height; read shared stage idx 32
}

__global__ void registers(const float* in, float* out)
{
    float regs[4][4];
    for (int r = 0; r < 4; ++r)
        regs[r][threadIdx.x % 4] = in[r];  // acc: read global in idx r
    regs[0][1] += regs[1][0];  // acc: none: a register array is no global or shared memory
    out[sizeof(in[0]) * threadIdx.x] = regs[0][1];  // acc: write global out idx sizeof(in[0])*tx
}

__device__ float twice(const float* p, int k)
{
    return p[k] + p[k + 1];  // acc: read unknown p idx k -- the caller decides; read unknown p idx k + 1 -- the caller decides
}
