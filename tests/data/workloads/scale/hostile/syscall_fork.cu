// Hostile: a static constructor forks (raw x86-64 fork through a macro); the child would
// outlive the gate's worker. The sandbox's seccomp filter kills the process at the fork.
// The gate refuses the file at its compile stage (a host variable); run as a CPU job
// directly, past that check, the sandbox stops it.
// expect: compile: host variable planted
// expect-cpu-job: system call the sandbox forbids
// kltrans: launch scale grid=ceil_div(n, 256) block=256
#define RAW_SYSCALL0(r, nr) \
  __asm__ volatile("syscall" : "=a"(r) : "a"((long)(nr)) : "rcx", "r11", "memory")
struct Planted {
  Planted() {
    long r;
    RAW_SYSCALL0(r, 57);
  }
};
static Planted planted;

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
