// kltrans: launch adamwUpdate grid=min(ceil_div(n, 4 * kThreads * kTrips), kMaxBlocks) block=kThreads
// One AdamW step in place over n parameters (decoupled weight decay, no amsgrad); the
// host passes the step's bias corrections 1 - beta1^t and 1 - beta2^t.
// Packed version: the while loop now walks groups of four parameters. Each group of each
// buffer moves as one 16-byte Pack4 (a union of a float4, for the 128-bit load/store,
// and four scalars, for the math), loaded with __ldcs and stored with __stcs: every byte
// is touched exactly once, so it streams past L2 instead of settling there. Buffers come
// from cudaMalloc (16-byte aligned); the last n % 4 parameters are updated one per
// thread by the first n % 4 threads.

typedef float scalar_t;

constexpr int kThreads = 256;
constexpr int kTrips = 4;
constexpr int kMaxBlocks = 528;

union alignas(16) Pack4
{
    float4 raw;
    scalar_t v[4];
};

__device__ __forceinline__ Pack4 loadPack(const scalar_t* base, int group)
{
    Pack4 pk;
    pk.raw = __ldcs(reinterpret_cast<const float4*>(base) + group);
    return pk;
}

__device__ __forceinline__ void storePack(scalar_t* base, int group, const Pack4& pk)
{
    __stcs(reinterpret_cast<float4*>(base) + group, pk.raw);
}

__global__ void adamwUpdate(scalar_t* param, const scalar_t* grad, scalar_t* exp_avg,
                            scalar_t* exp_avg_sq, scalar_t lr, scalar_t beta1, scalar_t beta2,
                            scalar_t eps, scalar_t weight_decay, scalar_t bias_correction1,
                            scalar_t bias_correction2, int n)
{
    const scalar_t step_size = lr / bias_correction1;
    const scalar_t bc2_sqrt = sqrtf(bias_correction2);
    const scalar_t decay = 1.0f - lr * weight_decay;

    auto adamw = [&](scalar_t& p, scalar_t g, scalar_t& m, scalar_t& v)
    {
        m = beta1 * m + (1.0f - beta1) * g;
        v = beta2 * v + (1.0f - beta2) * g * g;
        p = p * decay - step_size * m / (sqrtf(v) / bc2_sqrt + eps);
    };

    const int stride = blockDim.x * gridDim.x;
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int groups = n / 4;

    int grp = tid;
    while (grp < groups)
    {
        Pack4 p = loadPack(param, grp);
        Pack4 g = loadPack(grad, grp);
        Pack4 m = loadPack(exp_avg, grp);
        Pack4 v = loadPack(exp_avg_sq, grp);
#pragma unroll
        for (int k = 0; k < 4; ++k)
            adamw(p.v[k], g.v[k], m.v[k], v.v[k]);
        storePack(param, grp, p);
        storePack(exp_avg, grp, m);
        storePack(exp_avg_sq, grp, v);
        grp += stride;
    }

    // scalar tail: parameters 4 * groups .. n - 1
    const int idx = 4 * groups + tid;
    if (idx < n)
    {
        scalar_t p = param[idx];
        scalar_t m = exp_avg[idx];
        scalar_t v = exp_avg_sq[idx];
        adamw(p, grad[idx], m, v);
        param[idx] = p;
        exp_avg[idx] = m;
        exp_avg_sq[idx] = v;
    }
}
