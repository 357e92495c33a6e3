// RUN: kltrans opt -p 'chunk-loop{width=4,lanes=vector}'
// CHECK-SKIP: lane-form: the value does not read exactly one array
// Vector lanes load one array into a float4; this body reads two (x and z). The copies
// lane form takes it.
// kltrans: launch add grid=min(ceil_div(n, 128), 264) block=128
__global__ void add(const float* x, const float* z, float* y, int n)
{
    const int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = x[i] + z[i];
    }
}
