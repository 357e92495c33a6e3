// kltrans: launch group_norm_naive grid=ceil_div(N * G, 256) block=256
// group_norm naive: x is N x C x HW float32 (row-major), G groups of C/G channels.
// Per (n, g): mean and biased variance over its (C/G) * HW values (float32, two
// passes), then y[n, c, s] = (x[n, c, s] - mean) / sqrt(var + eps) * weight[c] + bias[c].
// One thread per (n, g), three scalar passes over the group.
extern "C" __global__ void group_norm_naive(const float* x, const float* weight, const float* bias,
                                            float* y, int N, int C, int HW, int G, float eps)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= N * G) {
        return;
    }
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
    float v = 0.0f;
    for (size_t i = 0; i < count; ++i) {
        float d = x[base + i] - mean;
        v += d * d;
    }
    float rstd = 1.0f / sqrtf(v / (float)count + eps);
    for (size_t i = 0; i < count; ++i) {
        int c = g * cpg + (int)(i / HW);
        y[base + i] = (x[base + i] - mean) * rstd * weight[c] + bias[c];
    }
}
