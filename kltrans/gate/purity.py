"""Purity: a candidate computes its result itself, with CUDA's own headers only.

Rejected, with a reason: including a header outside CUDA's own (the runtime, the math and
fp16/bf16 headers, cooperative groups, ``mma.h``, CCCL's ``cuda/``, ``cub/``, ``thrust/``)
and the kernel's own folder; calling cuBLAS, cuDNN, cuFFT, cuSPARSE, cuRAND, CUTLASS or
CuTe; and launching work on another stream from the kernel's file (the gate launches
device code only).
"""

from __future__ import annotations

import os
import re

ALLOWED_SYSTEM = re.compile(
    r"^(cuda[\w/.]*|cuda/.*|cub/.*|thrust/.*|nv/.*|cooperative_groups(/.*)?\.h|"
    r"cooperative_groups|mma\.h|crt/.*|sm_\d+_.*\.h|vector_types\.h|device_functions\.h|"
    r"math_constants\.h|math_functions\.h|stdint\.h|cstdint|cmath|math\.h|cfloat|float\.h|"
    r"climits|limits\.h|limits|type_traits|utility|cstddef|stddef\.h|cassert|assert\.h|"
    r"cstdio|stdio\.h|algorithm|array|tuple|functional)$")
LIBRARIES = re.compile(r"\b(cublas\w*|cudnn\w*|cufft\w*|cusparse\w*|curand\w*|cusolver\w*|"
                       r"cutlass|cute)\b", re.IGNORECASE)


def check_purity(unit, folder: str | None = None) -> list[str]:
    """Reasons the unit is not pure (empty when it is)."""
    reasons = []
    for n in unit.nodes_of_type("preproc_include"):
        p = n.child_by_field_name("path")
        if p is None:
            continue
        text = unit.text(p)
        line = unit.line_col(n.start_byte)[0]
        name = text.strip("<>\"")
        if LIBRARIES.search(name):
            reasons.append(f"line {line}: includes {text}: a library may not do the work")
        elif text.startswith("<"):
            if not ALLOWED_SYSTEM.match(name):
                reasons.append(f"line {line}: includes {text}, which is not one of CUDA's own headers")
        else:
            base = folder or os.path.dirname(os.path.abspath(unit.origin.path))
            target = os.path.normpath(os.path.join(base, name))
            if not target.startswith(os.path.normpath(base) + os.sep):
                reasons.append(f"line {line}: includes {text} from outside the kernel's folder")
    for n in unit.nodes_of_type("call_expression"):
        fn = n.child_by_field_name("function")
        if fn is not None and LIBRARIES.search(unit.text(fn)):
            line = unit.line_col(n.start_byte)[0]
            reasons.append(f"line {line}: calls {unit.text(fn)}: delegating to a library")
    for n in unit.nodes_of_type("qualified_identifier"):
        if re.match(r"^(cutlass|cute|cublas)\b", unit.text(n)):
            line = unit.line_col(n.start_byte)[0]
            reasons.append(f"line {line}: uses {unit.text(n)}: delegating to a library")
            break
    return reasons
