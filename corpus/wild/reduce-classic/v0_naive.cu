// kltrans: launch reduce0<float> grid=ceil_div(n, 256) block=256
// Version 0 (naive root): no cooperation at all. Each thread owns one input element
// and adds it straight into g_odata[0] (zeroed by the caller) with atomicAdd, so every
// element costs one contended global atomic.

template <class T>
__global__ void reduce0(T *g_idata, T *g_odata, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n)
        atomicAdd(g_odata, g_idata[i]);
}
