__global__ void inc(int* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}

void run(int* d_x, int n) {
    inc<<<(n + 127) / 128, 128>>>(d_x, n);
}
