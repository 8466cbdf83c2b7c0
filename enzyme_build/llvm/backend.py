"""The back end of the whole-program link: the post-AD pipeline and code generation.

Measured (docs/build-performance.md): llvmlite's LLVM is built with assertions, and on the
large modules the AD stage produces its `default<O3>` pipeline takes 1.3-1.4x the CPU time
of Debian's release `opt-22` on the same bitcode and its code generation 1.8x that of
`llc-22`; code generation also runs on one core and holds the whole module in this process.
So when the matching release tools are installed, the module leaves this process as
bitcode once: `opt` runs the same per-module default pipeline, `llvm-split` cuts the result
into partitions by function (locals that cross partitions become hidden globals), one `llc`
per partition runs in parallel (``ENZYME_BUILD_JOBS``, default: the CPUs we may use), a
relocatable link joins the objects and `llvm-objcopy` gives back local binding to every
symbol that was local in the module. Without the tools, the same work runs in-process
through llvmlite, serially.

Every file lives in a private directory under the caller's work directory, removed on
success and on failure; a failing tool is one EnzymeBuildError naming it and its first
message line.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from ..errors import EnzymeBuildError, InternalError
from . import vecmath

JOBS_VAR = "ENZYME_BUILD_JOBS"
MAX_JOBS = 8
# Below this much optimized bitcode, splitting costs more (processes, a relocatable link)
# than a second core saves: a 10k-instruction program's optimized module is ~0.3 MB.
SPLIT_MIN_BYTES = 512 << 10

_TOOL_NAMES = ("opt", "llc", "llvm-split", "llvm-nm")
_tools: dict[str, str | None] = {}


def find_tool(name: str) -> str | None:
    """A release LLVM tool of our major version, or None: `$ENZYME_BUILD_LLVM_BIN/<name>[-N]`
    when that is set, else `<name>-N` on PATH, else /usr/lib/llvm-N/bin/<name> (the
    discovery order of ARCHITECTURE §2; `toolchain.find_optional`, which remembers it)."""
    if name not in _tools:
        from .. import toolchain
        tool = toolchain.find_optional(name)
        _tools[name] = tool.path if tool is not None else None
    return _tools[name]


def external_tools_enabled() -> bool:
    """opt and llc of our LLVM are installed (and not switched off for an A/B comparison
    with ENZYME_BUILD_IN_PROCESS=1)."""
    if os.environ.get("ENZYME_BUILD_IN_PROCESS") == "1":
        return False
    return find_tool("opt") is not None and find_tool("llc") is not None


def codegen_jobs() -> int:
    """Parallel code generation processes: $ENZYME_BUILD_JOBS, else the CPUs this process
    may run on, at most MAX_JOBS."""
    raw = os.environ.get(JOBS_VAR)
    if raw is not None and raw.strip():
        try:
            jobs = int(raw)
        except ValueError:
            jobs = 0
        if jobs < 1:
            raise EnzymeBuildError(f"{JOBS_VAR}={raw!r} is not a positive number of jobs",
                                   hint=f"set {JOBS_VAR} to 1, 2, …, or unset it to use every CPU")
        return jobs
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_JOBS))


# The loop vectorizer of LLVM 22's default<O2/O3> function pipeline, run a second time after
# it with the clean-up a newly vectorized loop needs. In the default pipeline loop-load-elim
# and loop-unroll (which peels) run after loop-vectorize; on an adjoint loop that zeroes a
# shadow cell and reads it back in the next reverse iteration (the adjoint of an in-place
# update that reads a neighbour, `u[i] += c*(u[i+1] - u[i])`) the vectorizer first sees a
# store-to-load forwarding dependence and gives up, and only those later passes turn the
# loop into a recurrence it can vectorize. Loops vectorized the first time carry
# llvm.loop.isvectorized and are skipped. Only the vectorizer and its clean-up: the whole
# tail (load elimination, SLP, unrolling again) cost a quarter more `opt` time on the 50k
# build_scaling program (4.0 -> 5.0 s), this one 3-4% (4.0 -> 4.2 s), for the same
# vectorized loops.
_SIMPLIFYCFG_LATE = ("simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;"
                     "switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;"
                     "hoist-loads-stores-with-cond-faulting;no-sink-common-insts;speculate-blocks;"
                     "simplify-cond-branch;speculate-unpredictables>")
LATE_VECTORIZE = ("function<eager-inv>("
                  "loop-vectorize<no-interleave-forced-only;no-vectorize-forced-only;>,infer-alignment,"
                  "instcombine<max-iterations=1;no-verify-fixpoint>,"
                  f"{_SIMPLIFYCFG_LATE},loop-mssa(licm<allowspeculation>))")


# The SLP vectorizer's profitability threshold after AD: a tree is vectorized when its
# modelled cost is below -SLP_THRESHOLD (LLVM's default 0 takes any tree with a gain of 1).
# Derivative code pairs every primal operation with its tangent or adjoint, isomorphic
# chains the vectorizer packs into two lanes; trees of modelled gain 1 among them pay more
# in lane packing and extraction than they save. Measured on the 25 benchmark kernels, the
# same code built side by side with 0 and 1: the four BA variants' tangents 1.73-2.10x ->
# 1.69-1.72x their primal, every other ratio within run-to-run noise, the primal functions'
# machine code unchanged but for GMM's objective (661 -> 657 instructions); at 2 the GMM
# tangents lost 7% and nbody_soa's 8%, with the SLP vectorizer off BA's gradient gained 11%
# but the n-body tangents lost 15%.
SLP_THRESHOLD = 1


def pipeline_text(level: int, size_level: int = 0) -> str:
    """The `-passes=` text of the pipeline we run after AD: the per-module default
    pipeline (what llvmlite's PassBuilder.buildPerModuleDefaultPipeline builds for the
    same levels) and, at -O2 and -O3, its loop vectorizer once more (LATE_VECTORIZE)."""
    if size_level >= 2:
        return "default<Oz>"
    if size_level == 1:
        return "default<Os>"
    if level >= 2:
        return f"default<O{level}>," + LATE_VECTORIZE
    return f"default<O{level}>"


def _run(argv: list[str], what: str, location: str) -> None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, errors="replace")
    except OSError as err:
        raise EnzymeBuildError(f"{what} failed: cannot run {argv[0]}: {err}", location=location)
    if proc.returncode != 0:
        raise EnzymeBuildError(f"{what} failed: {os.path.basename(argv[0])}: "
                               f"{_first_line(proc.stderr, argv[0], proc.returncode)}", location=location)


def _first_line(stderr: str, tool: str, status: int) -> str:
    """The first line of a tool's message, without the tool's own path in front."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return f"exit status {status}"
    first = lines[0]
    for prefix in (tool + ": ", os.path.basename(tool) + ": "):
        if first.startswith(prefix):
            first = first[len(prefix):]
    return first


class Workdir:
    """A private directory for one back-end run, removed when the run ends."""

    def __init__(self, parent: str | None):
        self.path = tempfile.mkdtemp(prefix="backend-", dir=parent)

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)


def optimize_to_bitcode(module, path: str, level: int, *, size_level: int = 0, pic: bool = True,
                        workdir: str | None = None, vector_library: str | None = None,
                        keep_names: bool = False) -> None:
    """Run the per-module default pipeline on ``module`` and write the result to ``path``
    (bitcode). The module is consumed: it is closed once its bitcode is out of this process,
    so its memory is not held while the tools run.

    ``vector_library`` (opt's -vector-library name, e.g. "LIBMVEC") lets the loop and SLP
    vectorizers call that library's vector variants of math functions that do not set
    errno (llvm.exp.f64, or a libm call marked memory(none)), as clang's -fveclib does.
    In-process, llvmlite's pass builder cannot be given one; for libmvec the 128-bit vector
    math intrinsics its vectorizer leaves are renamed to their SSE2 variants instead
    (vecmath.SSE_INTRINSICS).

    opt discards the names of local values (clang's default too) unless ``keep_names``:
    nothing after this point reads them, and keeping them costs opt and llc time and memory
    (the 100k-instruction build_scaling program: opt 11.8 -> 10.8 s, 298 -> 236 MB; llc
    242 -> 209 MB; the object file byte-identical)."""
    from . import optimize, rename_declarations, triple, verify
    codegen_jobs()   # a bad ENZYME_BUILD_JOBS fails now, not after the pipeline
    if level <= 0 and size_level <= 0:
        verify(module, generated=True)
        _write(path, module.bitcode())
        module.close()
        return
    if not external_tools_enabled():
        optimize(module, level, size_level=size_level, pic=pic)
        if vector_library == vecmath.LIBMVEC and vecmath.is_x86_64_glibc(triple(module)):
            rename_declarations(module, vecmath.SSE_INTRINSICS)
        verify(module, generated=True)
        _write(path, module.bitcode())
        module.close()
        return
    with Workdir(workdir) as work:
        source = work.file("input.bc")
        _write(source, module.bitcode())
        name = module.name
        module.close()
        out = work.file("optimized.bc")
        # only opt gets the library, not llc: LLVM 22's code generation (ReplaceWithVeclib)
        # would also turn a 256-bit llvm.exp.v4f64 that AD or the user's vector code wrote
        # into a call of the AVX2 variant in a function compiled for baseline x86-64, which
        # passes that vector in memory while _ZGVdN4v_exp reads ymm0 (wrong results)
        _run([find_tool("opt"), f"-passes={pipeline_text(level, size_level)}",
              f"--relocation-model={'pic' if pic else 'static'}", f"--slp-threshold={SLP_THRESHOLD}",
              *([f"--vector-library={vector_library}"] if vector_library else []),
              *([] if keep_names else ["--discard-value-names"]),
              source, "-o", out],
             "optimization", name)
        os.replace(out, path)


def call_intrinsics_instead(bitcode: str, names: dict[str, str], name: str = "module") -> None:
    """Rewrite the bitcode file so that every call of a function in ``names`` calls the
    intrinsic it maps to (`call <4 x double> @_ZGVdN4v_exp(…)` -> `@llvm.exp.v4f64(…)`,
    which code generation computes with narrower calls). The declarations stay (LLVM
    keeps the vector library's in llvm.compiler.used); unused, they reference nothing."""
    import re
    from . import parse_assembly, read_bitcode_file, verify
    module = read_bitcode_file(bitcode, name)
    text = module.text()
    module.close()
    for old, new in names.items():
        call = re.compile(r"^(\s+(?:%\S+ = )?(?:(?:tail|musttail|notail) )?call\b[^\n]*?)@"
                          + re.escape(old) + r"\(", re.MULTILINE)
        text = call.sub(lambda m: f"{m.group(1)}@{new}(", text)
    try:
        module = parse_assembly(text, name)
    except EnzymeBuildError as err:
        raise InternalError(f"rewriting vector math calls gave invalid IR: {err.message}")
    verify(module, generated=True)
    _write(bitcode, module.bitcode())
    module.close()


def emit_object_file(bitcode: str, output: str, *, opt: int = 2, pic: bool = True,
                     jobs: int | None = None, workdir: str | None = None,
                     split_min_bytes: int = SPLIT_MIN_BYTES, name: str = "module") -> int:
    """Native object code for the host from the bitcode file ``bitcode``, written to
    ``output``. Returns the number of partitions compiled in parallel (1: not split)."""
    jobs = codegen_jobs() if jobs is None else jobs
    if not external_tools_enabled():
        from . import emit_object, parse_bitcode
        with open(bitcode, "rb") as fh:
            module = parse_bitcode(fh.read(), name)
        _write(output, emit_object(module, opt=opt, pic=pic))
        return 1
    llc = [find_tool("llc"), f"-O{min(max(opt, 0), 3)}", "-filetype=obj",
           f"--relocation-model={'pic' if pic else 'static'}"]
    with Workdir(workdir) as work:
        parts = 1
        if jobs > 1 and os.path.getsize(bitcode) >= split_min_bytes and _can_split():
            parts = _split(bitcode, jobs, work, name)
        if parts <= 1:
            tmp = work.file("whole.o")
            _run(llc + [bitcode, "-o", tmp], "code generation", name)
            os.replace(tmp, output)
            return 1
        objects = _compile_partitions(llc, [work.file(f"part.bc{k}") for k in range(parts)], name)
        merged = work.file("merged.o")
        _join(objects, merged, name)
        _relocalize(bitcode, merged, work, name)
        os.replace(merged, output)
        return parts


def _can_split() -> bool:
    return find_tool("llvm-split") is not None and find_tool("llvm-nm") is not None


# A split whose largest partition holds more than this share of the bitcode saves less
# than the partitioning costs (one function the inliner grew to most of the program).
SPLIT_MAX_SHARE = 0.7


def _split(bitcode: str, jobs: int, work: Workdir, name: str) -> int:
    """llvm-split into ``jobs`` partitions part.bc0 …; returns ``jobs``, or 1 when one
    partition would hold most of the code (the partitions are then not used)."""
    _run([find_tool("llvm-split"), f"-j{jobs}", "--round-robin", bitcode, "-o", work.file("part.bc")],
         "code generation", name)
    parts = [work.file(f"part.bc{k}") for k in range(jobs)]
    missing = [p for p in parts if not os.path.exists(p)]
    if missing:
        raise InternalError(f"llvm-split did not write {', '.join(map(os.path.basename, missing))}")
    sizes = [os.path.getsize(p) for p in parts]
    if max(sizes) > SPLIT_MAX_SHARE * sum(sizes):
        for p in parts:
            os.unlink(p)
        return 1
    return jobs


def _compile_partitions(llc: list[str], parts: list[str], name: str) -> list[str]:
    """One llc per partition, all at once (there are at most `jobs` of them)."""
    running = []
    try:
        for part in parts:
            obj = part + ".o"
            proc = subprocess.Popen(llc + [part, "-o", obj], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True, errors="replace")
            running.append((proc, obj))
        failures = []
        for proc, _obj in running:
            _out, err = proc.communicate()
            if proc.returncode != 0:
                failures.append(_first_line(err, llc[0], proc.returncode))
    finally:
        for proc, _obj in running:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if failures:
        raise EnzymeBuildError(f"code generation failed: llc: {failures[0]}", location=name)
    return [obj for _proc, obj in running]


def _join(objects: list[str], output: str, name: str) -> None:
    """One relocatable object from the partitions' objects."""
    from .. import toolchain
    lld = toolchain.search("ld.lld")[0]
    if lld is not None:
        argv = [lld.path, "-r", "-o", output, *objects]
    else:
        argv = [toolchain.find("clang").path, "-r", "-nostdlib", "-o", output, *objects]
    _run(argv, "code generation", name)


def local_symbols(bitcode: str, name: str = "module") -> list[str]:
    """Names of the definitions with local linkage in a bitcode file (llvm-nm's lower-case
    letters)."""
    argv = [find_tool("llvm-nm"), "--defined-only", "--format=posix", bitcode]
    proc = subprocess.run(argv,
                          capture_output=True, text=True, errors="surrogateescape")
    if proc.returncode != 0:
        raise EnzymeBuildError("code generation failed: llvm-nm: "
                               f"{_first_line(proc.stderr, argv[0], proc.returncode)}", location=name)
    out = []
    for line in proc.stdout.splitlines():
        fields = line.split(" ")
        if len(fields) >= 2 and len(fields[1]) == 1 and fields[1].islower():
            out.append(fields[0])
    return out


def _relocalize(bitcode: str, obj: str, work: Workdir, name: str) -> None:
    """Locals that llvm-split had to make global (hidden) to cross partitions become local
    again: no clash with a same-named global of another object in the final link."""
    from .. import toolchain
    names = local_symbols(bitcode, name)
    listing = work.file("locals.txt")
    with open(listing, "w", encoding="utf-8", errors="surrogateescape") as fh:
        fh.write("".join(f"{_glob_escape(n)}\n" for n in names if n and "\n" not in n))
    _run([toolchain.find("llvm-objcopy").path, f"--localize-symbols={listing}",
          "--wildcard", "--localize-symbol=__llvmsplit_unnamed*", obj],
         "code generation", name)


def _glob_escape(name: str) -> str:
    """A symbol name as a literal pattern of llvm-objcopy's --wildcard mode."""
    return "".join("\\" + c if c in "*?[]\\!" else c for c in name)


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
