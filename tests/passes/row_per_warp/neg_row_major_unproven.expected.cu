// RUN: kltrans opt -p 'row-per-warp' --assume reassoc
// CHECK-SKIP: row-major: line 24: `y[base + i] = x[base + i] - mean;` writes `y[base + i]` at an offset that is not affine
// group_norm's naive form: thread t owns (n, g) = (t / G, t % G) and writes
// y[base + i] with base = (n * C + g * cpg) * HW. That is t * count + i when C == G * cpg,
// but the offset is not affine in t, so the analysis can neither prove nor refute
// row-major rows: the precondition is unknown (the optimizer may still offer it as a
// near miss, for the gate to decide), never "holds".
// kltrans: launch group_mean grid=ceil_div(N * G, 256) block=256
extern "C" __global__ void group_mean(const float* x, float* y, int N, int C, int HW, int G)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= N * G) return;
    int n = t / G;
    int g = t % G;
    int cpg = C / G;
    size_t count = (size_t)cpg * HW;
    size_t base = ((size_t)n * C + (size_t)g * cpg) * HW;
    float s = 0.0f;
    for (size_t i = 0; i < count; ++i) {
        s += x[base + i];
    }
    float mean = s / (float)count;
    for (size_t i = 0; i < count; ++i) {
        y[base + i] = x[base + i] - mean;
    }
}
