// RUN: kltrans opt -p 'vectorize-bytes'
// CHECK-SKIP: byte-type: data points to char: the pass splits 16-byte units into unsigned bytes
// Signed chars: the helpers would read them as unsigned bytes.
// kltrans: launch histogram grid=min(ceil_div(n, 4096), 264) block=256
#include <stdint.h>

extern "C" __global__ void histogram(const char* data, unsigned int* bins, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;
    size_t i = tid;
    for (; i < count; i += nthreads) {
        atomicAdd(bins + (unsigned int)data[i], 1u);
    }
}
