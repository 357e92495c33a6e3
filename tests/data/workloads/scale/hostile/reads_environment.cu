// Hostile: a static constructor looks for a secret in its own environment through libc's
// getenv, and the kernel computes the right answer only when it found one. Refused
// before the module is loaded (it imports getenv); the sandbox's environment is empty
// besides.
// The gate refuses the file at its compile stage (a host variable); run as a CPU job
// directly, past that check, the sandbox stops it.
// expect: compile: host variable planted
// expect-cpu-job: calls getenv
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" char* getenv(const char*);
__device__ bool found;
struct Planted {
  Planted() { found = getenv("KLTRANS_HOSTILE_SECRET") != 0; }
};
static Planted planted;

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && found) y[i] = a * x[i] + b;
}
