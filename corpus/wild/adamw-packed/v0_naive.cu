// kltrans: launch adamwUpdate grid=ceil_div(n, kThreads) block=kThreads
// One AdamW step in place over n parameters (decoupled weight decay, no amsgrad); the
// host passes the step's bias corrections 1 - beta1^t and 1 - beta2^t.
// Naive: one thread per parameter, every buffer read and written with scalar accesses.

typedef float scalar_t;

constexpr int kThreads = 256;

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

    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n)
        return;

    scalar_t p = param[idx];
    scalar_t m = exp_avg[idx];
    scalar_t v = exp_avg_sq[idx];
    adamw(p, grad[idx], m, v);
    param[idx] = p;
    exp_avg[idx] = m;
    exp_avg_sq[idx] = v;
}
