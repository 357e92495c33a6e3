// kltrans: a CUDA header provided by kl_cuda_runtime.h (included first)
