// kltrans: launch reduce_sum_naive grid=ceil_div(n, 256) block=256
// reduce-sum naive: *out += x[0] + ... + x[n-1] (float32). The caller zeroes *out
// before the launch; every thread adds its one element with a global atomicAdd.
// launch: grid = ceil(n/256), block = 256
extern "C" __global__ void reduce_sum_naive(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(out, x[i]);
    }
}
