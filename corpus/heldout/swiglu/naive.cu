// kltrans: launch swiglu_naive grid=ceil_div(n, 256) block=256
// swiglu naive: out[i] = silu(a[i]) * b[i], silu(v) = v / (1 + exp(-v)) (float32).
// One thread per element, scalar loads and stores.
extern "C" __global__ void swiglu_naive(const float* a, const float* b, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float g = a[i];
        out[i] = g / (1.0f + expf(-g)) * b[i];
    }
}
