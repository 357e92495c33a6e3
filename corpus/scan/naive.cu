// kltrans: launch scan_naive grid=ceil_div(n, 256) block=256
// scan naive: inclusive prefix sum of int32, out[i] = in[0] + ... + in[i].
// One thread per output element, each summing its whole prefix (O(n^2) work).
// Overflow wraps like the reference int32 addition.
// launch: grid = ceil(n/256), block = 256
// scratch (the expert's look-back tile state) is unused here; it is a parameter
// so that both kernels share one signature.
extern "C" __global__ void scan_naive(const int* in, int* out, int n,
                                   unsigned long long* scratch)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int acc = 0u;   // unsigned so that wrap-around is well defined
        for (int j = 0; j <= i; ++j) {
            acc += (unsigned int)in[j];
        }
        out[i] = (int)acc;
    }
}
