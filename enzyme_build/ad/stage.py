"""The AD stage of the whole-program link: the one entry point the link step calls.

Order (ARCHITECTURE §1): collect registrations -> pre-AD optimization (O2 without
unrolling/vectorization) -> synthesize derivatives for every __enzyme_* call -> return the
module; the link step then runs the post-AD pipeline (O3) and codegen.
With ENZYME_BUILD_AD_BEFORE_OPT=1 the AD runs on the unoptimized module instead.
"""
from __future__ import annotations

ENZYME_CALL_MARKERS = ("__enzyme_autodiff", "__enzyme_fwddiff", "__enzyme_augmentfwd",
                       "__enzyme_reverse", "__enzyme_batch", "__enzyme_augmentsize")


def module_needs_ad(function_names) -> bool:
    """True when any function called like an __enzyme_* entry point is present."""
    return any(marker in name for name in function_names for marker in ENZYME_CALL_MARKERS)
