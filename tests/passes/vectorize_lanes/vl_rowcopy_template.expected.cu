// RUN: kltrans opt -p 'vectorize-lanes{flag=can_vec,temp=r4,const=false}' --assume 'no_alias(*)'
// A template kernel over int rows (CHUNKS chunks of 4 per thread kept in registers,
// a block-strided chunk index); the lanes of both loops are vectorized as int4.
// kltrans: launch rowshift grid=rows block=64
#include <stdint.h>

template <int CHUNKS>
__global__ void rowshift(const int* __restrict__ in, int* __restrict__ out, int rows, int cols, int k)
{
    const size_t off = (size_t)blockIdx.x * cols;
    const int* src = in + off;
    int* dst = out + off;
    const bool can_vec = (cols & 3) == 0 &&
                         (((uintptr_t)in | (uintptr_t)out) & 15) == 0;
    int regs[CHUNKS][4];
    for (int i = 0; i < CHUNKS; ++i) {
        const int c0 = (threadIdx.x + i * blockDim.x) << 2;
        if (can_vec) {
            if (c0 < cols) {
                int4 r4 = *reinterpret_cast<const int4*>(src + c0);
                regs[i][0] = r4.x;
                regs[i][1] = r4.y;
                regs[i][2] = r4.z;
                regs[i][3] = r4.w;
            } else {
                regs[i][0] = regs[i][1] = regs[i][2] = regs[i][3] = 0;
            }
        } else {
            for (int j = 0; j < 4; j += 1) {
                regs[i][j] = c0 + j < cols ? src[c0 + j] : 0;
            }
        }
    }
    for (int i = 0; i < CHUNKS; ++i) {
        const int c0 = (threadIdx.x + i * blockDim.x) << 2;
        if (can_vec) {
            if (cols > c0) {
                int4 r4;
                r4.x = regs[i][0] + k;
                r4.y = regs[i][1] + k;
                r4.z = regs[i][2] + k;
                r4.w = regs[i][3] + k;
                *reinterpret_cast<int4*>(dst + c0) = r4;
            }
        } else {
            for (int j = 0; j < 4; ++j)
                if (cols > c0 + j) dst[c0 + j] = regs[i][j] + k;
        }
    }
}

template __global__ void rowshift<4>(const int*, int*, int, int, int);
