// kltrans: launch prefixSumNaive grid=ceil_div(n, THREADS) block=THREADS
// Naive inclusive prefix sum: thread i adds up input[0..i] on its own and writes
// output[i]. O(n^2) work and no sharing between threads. Sums are kept unsigned so that
// overflow wraps like int32 addition. tileState is not used by this version.

typedef unsigned acc_t;

constexpr int THREADS = 256;

__global__ void prefixSumNaive(const int* input, int* output, int n,
                               unsigned long long* tileState)
{
    int i = blockIdx.x * THREADS + threadIdx.x;
    if (i >= n)
        return;

    acc_t running = 0;
    for (int k = 0; k <= i; k++)
        running += (acc_t)input[k];
    output[i] = (int)running;
}
