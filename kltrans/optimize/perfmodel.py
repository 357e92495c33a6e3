"""What a launch does to the device, modelled without a GPU.

Without a GPU, ``kltrans optimize`` cannot time a candidate; accepting every correct one
lets rewrites through that are plainly harmful at the workload's real size (a coarsening
that leaves one block for 32,768 rows; a block so heavy in registers that few fit on a
multiprocessor). This module models two such harms from what is known without running:

- **fill**: the share of the device's thread slots a launch occupies at the bench size.
  The grid and block come from the launch contract evaluated at the workload's
  ``bench_size``; how many blocks fit on a multiprocessor comes from the block's threads,
  NVRTC's register count and the block's shared memory (static from NVRTC, dynamic from
  the contract), by the occupancy rules of the target architecture (:data:`DEVICES`);
  fill = launched threads / (multiprocessors x resident threads per multiprocessor),
  at most 1.
- **spills**: bytes of registers spilled to local memory (NVRTC's ``ptxas -v``).

:func:`judge` refuses a candidate whose fill drops below :data:`FILL_KEPT` of the current
kernel's, or that spills more. Everything else is left to the gate and, on a GPU, to the
paired timing: the model decides only what it can decide with confidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kltrans.syntax.contract import ContractError, contracts

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.syntax.unit import Unit

FILL_KEPT = 0.9  # a candidate may lose at most a tenth of the current kernel's fill


@dataclass(frozen=True)
class Device:
    """The occupancy limits of one architecture (CUDA C++ Programming Guide, compute
    capabilities table), on its largest part."""

    name: str
    sms: int
    threads_per_sm: int
    blocks_per_sm: int
    regs_per_sm: int
    smem_per_sm: int  # bytes a multiprocessor's blocks may share
    smem_reserved: int = 1024  # per block, by the system
    reg_unit: int = 256  # registers are given to a warp in units of this many


DEVICES = {
    "sm_90": Device("H100/H200 (sm_90, 132 SMs)", 132, 2048, 32, 65536, 228 * 1024),
    "sm_80": Device("A100 (sm_80, 108 SMs)", 108, 2048, 32, 65536, 164 * 1024),
    "sm_86": Device("RTX A6000 (sm_86, 84 SMs)", 84, 1536, 16, 65536, 100 * 1024),
    "sm_89": Device("L40S (sm_89, 142 SMs)", 142, 1536, 24, 65536, 100 * 1024),
}


def device(arch: str | None) -> Device:
    return DEVICES.get(arch or "sm_90", DEVICES["sm_90"])


def resident_blocks(dev: Device, threads: int, registers: int, smem: int) -> int:
    """Blocks of ``threads`` threads, ``registers`` registers each and ``smem`` bytes of
    shared memory that fit on one multiprocessor at once."""
    if threads <= 0 or threads > 1024:
        return 0
    warps = -(-threads // 32)
    fits = [dev.blocks_per_sm, dev.threads_per_sm // (warps * 32)]
    if registers > 0:
        per_warp = -(-registers * 32 // dev.reg_unit) * dev.reg_unit
        fits.append((dev.regs_per_sm // per_warp) // warps)
    block_smem = smem + dev.smem_reserved
    fits.append(dev.smem_per_sm // block_smem if smem > 0 else dev.blocks_per_sm)
    return max(0, min(fits))


@dataclass(frozen=True)
class Fill:
    """A launch at the bench size against the device."""

    blocks: int
    threads: int  # per block
    resident: int  # blocks per multiprocessor
    fraction: float  # of the device's thread slots, at most 1
    spills: int  # bytes stored to local memory per thread
    device: str

    def describe(self) -> str:
        return (f"{self.blocks} block(s) of {self.threads} thread(s), {self.resident} "
                f"resident per SM: {100 * self.fraction:.3g}% of the {self.device}'s "
                f"thread slots")


def fill(unit: "Unit", kernel: str, wl, resources: dict | None,
         arch: str | None = None) -> tuple[Fill | None, str]:
    """The :class:`Fill` of ``kernel`` of ``unit`` at ``wl``'s bench size, or None and why
    it cannot be modelled (no contract, a size it cannot evaluate, no resource report)."""
    if not resources:
        return None, "no resource report from NVRTC"
    c = contracts(unit).get(kernel)
    if c is None:
        return None, f"no launch contract for {kernel}"
    try:
        grid, block, smem = c.evaluate(wl.env(dict(wl.bench_size)))
    except (ContractError, KeyError, ValueError) as e:
        return None, f"the launch at the bench size cannot be evaluated ({e})"
    dev = device(arch)
    threads = block[0] * block[1] * block[2]
    blocks = grid[0] * grid[1] * grid[2]
    rb = resident_blocks(dev, threads, int(resources.get("registers") or 0),
                         int(resources.get("smem_static") or 0) + int(smem))
    slots = dev.sms * rb * threads
    frac = 0.0 if slots == 0 else min(1.0, blocks * threads / slots)
    return Fill(blocks, threads, rb, frac, int(resources.get("spill_stores") or 0),
                dev.name), ""


def judge(before: Fill, after: Fill) -> tuple[bool, str]:
    """Whether the model lets ``after`` replace ``before``, and why (modelled)."""
    if after.resident == 0 and before.resident > 0:
        return False, f"no block fits on a multiprocessor: {after.describe()}"
    if after.fraction < FILL_KEPT * before.fraction:
        return False, (f"leaves the device emptier at the bench size: {before.describe()} "
                       f"-> {after.describe()}")
    if after.spills > before.spills:
        return False, (f"spills registers: {before.spills} -> {after.spills} bytes stored to "
                       f"local memory per thread")
    return True, (f"keeps the device as full at the bench size ({100 * after.fraction:.3g}% "
                  f"of its thread slots) and spills no more")
