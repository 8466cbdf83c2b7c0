"""Every benchmark kernel and code-style variant (benchmarks/kernels/*.c, *.cpp) builds with enzyme-build
and its gradient agrees with finite differences; the hand-written adjoints agree with ours; the
JAX and PyTorch peers (benchmarks/peers/) compute the same gradients as our C on tiny inputs.
Not timings: reverse mode only, the kernels' --quick sizes, the shortest timing they accept."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
RUN_FAST = ["--quick", "--min-time=0.001", "--repeats=1"]
REVERSE_ONLY = ["-DBENCH_NO_FWD", "-DBENCH_NO_SPLIT", "-DBENCH_NO_VEC"]


def load_run_py():
    spec = importlib.util.spec_from_file_location("benchmarks_run", BENCH / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


RUN = load_run_py()
KERNELS = list(RUN.KERNELS)


def build(name: str, out: Path) -> tuple[str, subprocess.CompletedProcess]:
    binary = out / name
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENZYME_BUILD_")}
    kernel = RUN.KERNELS[name]
    proc = subprocess.run([RUN.enzyme_build_exe(), kernel.driver(), *RUN.CFLAGS, *kernel.flags, *REVERSE_ONLY,
                           str(kernel.source), "-o", str(binary), "-lm"], capture_output=True, text=True, env=env,
                          timeout=600)
    return str(binary), proc


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    """Every kernel built once (two at a time)."""
    out = tmp_path_factory.mktemp("variants")
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(KERNELS, pool.map(lambda name: build(name, out), KERNELS)))


def test_every_family_has_at_least_three_styles():
    families = {}
    for kernel in RUN.KERNELS.values():
        families.setdefault(kernel.family_name, []).append(kernel.name)
        assert kernel.source.is_file(), kernel.name
    for family in ("gmm", "lstm", "ba", "nbody"):
        assert len(families[family]) >= 4, families[family]  # the reference kernel and three variants
    assert len(families["norm"]) >= 3 and len(families["heat"]) >= 3
    listed = {p.stem for p in [*RUN.KERNEL_DIR.glob("*.c"), *RUN.KERNEL_DIR.glob("*.cpp")]}
    assert listed == set(RUN.KERNELS), listed ^ set(RUN.KERNELS)  # no kernel file left out of run.py


@pytest.mark.parametrize("name", KERNELS)
def test_variant_gradient_matches_finite_differences(binaries, name):
    binary, proc = binaries[name]
    assert proc.returncode == 0, f"enzyme-build refused {name}: {RUN.first_error_line(proc.stderr + proc.stdout)}"
    run = subprocess.run([binary, *RUN_FAST], capture_output=True, text=True, timeout=120)
    fields = RUN.parse_result(run.stdout)
    assert fields is not None, run.stdout + run.stderr
    assert fields["name"] == name
    assert fields["check"] == "ok" and fields["checks"] >= 6, run.stderr
    assert run.returncode == 0, run.stderr
    if name in ("gmm", "nbody"):  # the hand-written adjoint was timed and checked against our gradient
        assert fields.get("expert_s", 0) > 0
        assert not [ln for ln in run.stderr.splitlines() if "expert" in ln]


def c_gradients(binary: str, args: list[str]) -> dict[str, list[float]]:
    """The GRAD lines of a kernel run with --dump: array name -> values."""
    run = subprocess.run([binary, *args, "--dump", "--min-time=0.001", "--repeats=1"], capture_output=True,
                         text=True, timeout=120)
    grads: dict[str, list[float]] = {}
    for line in run.stdout.splitlines():
        if line.startswith("GRAD "):
            _, array, _, value = line.split()
            grads.setdefault(array, []).append(float(value))
    return grads


@pytest.mark.parametrize("framework", ["jax", "torch"])
def test_peers_compute_our_gradients(binaries, framework):
    proc = subprocess.run([sys.executable, str(BENCH / "peers" / "run_peers.py"), "--framework", framework,
                           "--quick", "--problems", "gmm,norm_1e4,nbody", "--gradients", "--no-timing"],
                          capture_output=True, text=True, timeout=300)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if not result["ok"]:
        pytest.skip(result["error"])
    sys.path.insert(0, str(BENCH / "peers"))
    try:
        import problems
    finally:
        sys.path.remove(str(BENCH / "peers"))
    for entry in result["results"]:
        assert "error" not in entry, entry
        problem = problems.BY_KEY[entry["problem"]]
        ours = c_gradients(binaries[problem.kernel][0], problem.args(quick=True))
        assert set(ours) == set(entry["gradients"]) == set(problems.C_GRADIENTS[problem.kernel])
        for array, values in ours.items():
            theirs = entry["gradients"][array]
            assert len(theirs) == len(values), array
            worst = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(values, theirs))
            assert worst < 1e-9, (problem.key, array, worst)


def test_missing_framework_is_a_clear_skip(tmp_path):
    """A framework that cannot be imported gives one JSON line saying so (run.py prints it)."""
    (tmp_path / "jax").mkdir()
    (tmp_path / "jax" / "__init__.py").write_text('raise ImportError("No module named jax")\n')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, str(BENCH / "peers" / "run_peers.py"), "--framework", "jax", "--quick"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"ok": False, "framework": "jax",
                                       "error": "jax not importable (No module named jax)"}
