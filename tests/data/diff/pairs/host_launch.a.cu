__global__ void inc(int* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}

void run(int* d_x, int n) {
    inc<<<(n + 255) / 256, 256>>>(d_x, n);
}
