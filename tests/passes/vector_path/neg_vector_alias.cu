// RUN: kltrans opt -p vector-path
// CHECK-SKIP: no-alias: may overlap
// Nothing says y and x are apart: if y were x shifted by one element, a lane's store would
// land on an element the next chunk still has to load.
// kltrans: launch axpy grid=min(ceil_div(n, 256), 512) block=256
__global__ void axpy(const float* x, float* y, float a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
