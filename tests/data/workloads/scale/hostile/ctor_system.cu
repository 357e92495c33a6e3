// Hostile: a static constructor in host code runs a shell command when the module is
// loaded; the kernel itself is correct. Refused before the module is loaded: the module
// imports system(), which no CUDA kernel can call.
// The gate refuses the file at its compile stage (a host variable); run as a CPU job
// directly, past that check, the sandbox stops it.
// expect: compile: host variable planted
// expect-cpu-job: calls system
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" int system(const char*);
static int planted = system("touch /tmp/kltrans-hostile-system");

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
