"""Is a kernel naive? The marks of the mechanisms a naive root does not have.

The source's marks are the model's (:func:`kltrans.model.mechanisms.residual_mechanisms`,
re-exported here); this module adds what the compiled code shows.

The walk ends in ``naive`` only when no simplification applies *and* nothing is left,
otherwise in ``stuck``, with the list. ``mechanisms_left`` adds what the compiled code
shows (:mod:`kltrans.gate.ptx`), which no spelling hides.
"""

from __future__ import annotations

from kltrans.model.mechanisms import residual_mechanisms


def mechanisms_left(unit, name_expression: str | None = None,
                    arch: str = "sm_90") -> list[tuple[str, int]]:
    """``residual_mechanisms`` and the mechanisms the kernel's PTX shows (each as
    ``"<mechanism> (in the compiled code)"`` at the line of the first kernel); a kernel
    that does not compile adds nothing here (the gate says why)."""
    from kltrans.gate.ptx import mechanisms

    out = residual_mechanisms(unit)
    ks = unit.kernels()
    line = ks[0].line if ks else 1
    for m in mechanisms(unit.path, name_expression, arch, source=unit.source) or []:
        out.append((f"{m} (in the compiled code)", line))
    return sorted(set(out), key=lambda x: (x[1], x[0]))


__all__ = ["mechanisms_left", "residual_mechanisms"]
