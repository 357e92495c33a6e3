// kltrans: launch adamw_step_naive grid=ceil_div(n, 256) block=256
// adamw_step naive: one AdamW step (torch.optim.AdamW, amsgrad off) in float32,
// updating param, exp_avg and exp_avg_sq in place; step is 1-based.
// One thread per parameter, scalar loads and stores.
extern "C" __global__ void adamw_step_naive(float* param, const float* grad, float* exp_avg,
                                            float* exp_avg_sq, float lr, float beta1,
                                            float beta2, float eps, float weight_decay,
                                            int step, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float g = grad[i];
        float p = param[i] * (1.0f - lr * weight_decay);
        float m = beta1 * exp_avg[i] + (1.0f - beta1) * g;
        float v = beta2 * exp_avg_sq[i] + (1.0f - beta2) * g * g;
        float bc1 = 1.0f - powf(beta1, (float)step);
        float bc2 = 1.0f - powf(beta2, (float)step);
        float denom = sqrtf(v) / sqrtf(bc2) + eps;
        param[i] = p - (lr / bc1) * m / denom;
        exp_avg[i] = m;
        exp_avg_sq[i] = v;
    }
}
