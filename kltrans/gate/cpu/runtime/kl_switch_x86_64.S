/* kl_switch_x86_64.S - user-space context switch for kltrans' CPU emulator fibers.
 *
 * void kl_ctx_switch(void** save_sp, void* new_sp)
 *   Pushes the System V callee-saved registers (rbp, rbx, r12-r15) on the current stack,
 *   stores the stack pointer in *save_sp, loads new_sp and pops the same registers
 *   from there. Caller-saved registers are the compiler's business (this is an ordinary
 *   call), the signal mask is not touched (no syscall, unlike swapcontext), and MXCSR /
 *   the x87 control word are not saved: kernel code never changes them.
 *
 * kl_ctx_trampoline
 *   Where a new fiber "returns" to on its first switch: the initial frame built by
 *   kl_runtime.cpp holds the Fiber* in the r12 slot and the entry function in r13;
 *   call entry(fiber), which
 *   never returns.
 */
    .text
    .globl  kl_ctx_switch
    .hidden kl_ctx_switch
    .type   kl_ctx_switch, @function
    .p2align 4
kl_ctx_switch:
    pushq   %rbp
    pushq   %rbx
    pushq   %r12
    pushq   %r13
    pushq   %r14
    pushq   %r15
    movq    %rsp, (%rdi)
    movq    %rsi, %rsp
    popq    %r15
    popq    %r14
    popq    %r13
    popq    %r12
    popq    %rbx
    popq    %rbp
    ret
    .size   kl_ctx_switch, .-kl_ctx_switch

    .globl  kl_ctx_trampoline
    .hidden kl_ctx_trampoline
    .type   kl_ctx_trampoline, @function
    .p2align 4
kl_ctx_trampoline:
    movq    %r12, %rdi
    xorl    %ebp, %ebp
    call    *%r13
    ud2
    .size   kl_ctx_trampoline, .-kl_ctx_trampoline

    .section .note.GNU-stack,"",@progbits
