// RUN: kltrans opt -p 'vectorize-split{reassoc=true}'
// CHECK-SKIP: element-type: points to double
// A double array: 8-byte elements are not what the 4-byte-element split handles.
// kltrans: launch dsum grid=min(ceil_div(n, 256), 264) block=256
__global__ void dsum(const double* x, double* out, size_t n)
{
    double acc = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        acc += x[i];
    }
    atomicAdd(out, acc);
}
