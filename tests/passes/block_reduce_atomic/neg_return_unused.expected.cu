// RUN: kltrans opt -p 'block-reduce-atomic'
// CHECK-SKIP: return-unused: the value returned by atomicAdd is used
// A ticket counter: each thread needs the old value, so the atomic cannot be merged.
// kltrans: launch take_ticket grid=ceil_div(n, 256) block=256
extern "C" __global__ void take_ticket(unsigned int* counter, unsigned int* tickets, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int t = atomicAdd(counter, 1u);
    if (i < n) tickets[i] = t;
}
