// RUN: kltrans opt -p 'privatize-atomics'
// CHECK-SKIP: count-type: privatization regroups the additions
// A weighted histogram of floats: regrouping the additions would round differently.
// kltrans: launch weighted_hist grid=ceil_div(n, 256) block=256
extern "C" __global__ void weighted_hist(const unsigned char* data, const float* w, float* hist, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&hist[data[i]], w[i]);
}
