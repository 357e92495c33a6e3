// Hostile: a static constructor makes a raw x86-64 system call (mkdir) through a macro,
// so no asm statement is visible in the parsed source and no libc function is imported.
// The sandbox's seccomp filter kills the process at the system call.
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
    long r;
    RAW_SYSCALL2(r, 83, "/tmp/kltrans-hostile-mkdir", 0755);
  }
};
static Planted planted;

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
