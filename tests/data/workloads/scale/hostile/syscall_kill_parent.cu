// Hostile: a static constructor sends SIGKILL to its parent (the process that decides the
// verdict) with raw x86-64 system calls (getppid, kill) written through a macro.
// The sandbox's seccomp filter kills the process at the kill.
// The gate refuses the file at its compile stage (a host variable); run as a CPU job
// directly, past that check, the sandbox stops it.
// expect: compile: host variable planted
// expect-cpu-job: system call the sandbox forbids
// kltrans: launch scale grid=ceil_div(n, 256) block=256
#define RAW_SYSCALL2(r, nr, a, b) \
  __asm__ volatile("syscall" : "=a"(r) : "a"((long)(nr)), "D"((long)(a)), "S"((long)(b)) \
                   : "rcx", "r11", "memory")
struct Planted {
  Planted() {
    long parent, r;
    RAW_SYSCALL2(parent, 110, 0, 0);
    RAW_SYSCALL2(r, 62, parent, 9);
  }
};
static Planted planted;

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
