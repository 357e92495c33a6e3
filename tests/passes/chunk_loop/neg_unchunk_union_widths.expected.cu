// RUN: kltrans opt -p 'unchunk-loop'
// CHECK-SKIP: same-work: the union Split: its members cut it into lanes of different widths
// A union whose members cut it into lanes of different widths (a float4 and two doubles):
// which float a double's bits hold is not something the model reads, so same-work is not
// established and the loop stays.
// kltrans: launch scale_split grid=min(ceil_div(n, 4 * 128), 264) block=128
union Split
{
    float4 vec;
    double wide[2];
};

extern "C" __global__ void scale_split(const float* x, float* y, float a, float b, int n)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    const int quads = n / 4;
    for (int q = t; q < quads; q += blockDim.x * gridDim.x) {
        Split s;
        s.vec = reinterpret_cast<const float4*>(x)[q];
        s.vec.x = a * s.vec.x + b;
        s.vec.y = a * s.vec.y + b;
        s.vec.z = a * s.vec.z + b;
        s.vec.w = a * s.vec.w + b;
        reinterpret_cast<float4*>(y)[q] = s.vec;
    }
    int rest = 4 * quads + t;
    if (rest < n)
        y[rest] = a * x[rest] + b;
}
