"""Differential fuzzer: build random programs (generate.py) with enzyme-build in several
configurations, run them, and judge their derivatives with an oracle.

    .venv/bin/python tests/fuzz/run.py --seeds 0:200 --configs O0,O2,O3,adbefore --jobs 2 --out results/

Outcomes per (seed, config): ok, wrong (wrong gradient), crash (signal at run time),
internal (exit 2 / "internal error"), refused (exit 1, enzyme-build error; first line kept),
timeout (build or run), runfail (other non-zero exit at run time), noisy (f(x) is not
finite; the generator keeps f finite, so `noisy` in one config while another config is
`ok` means the primal itself was miscompiled).

Oracle (see docs/fuzzing.md): reverse vs forward per direction must agree to 1e-10
relative to max(1, largest derivative component); each of them vs the central finite
difference at step 1e-5 must agree to 1e-5 relative, checked only for components where the
three FD steps (1e-4, 1e-5, 1e-6) agree with each other to 1e-6 relative.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from generate import gen  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")

CONFIGS = {
    "O0": (["-O0"], {}),
    "O1": (["-O1"], {}),
    "O2": (["-O2"], {}),
    "O3": (["-O3"], {}),
    "adbefore": (["-O2"], {"ENZYME_BUILD_AD_BEFORE_OPT": "1"}),
}
OUTCOMES = ["ok", "wrong", "crash", "internal", "refused", "timeout", "runfail", "noisy"]
REV_FWD_TOL = 1e-10
FD_AGREE_TOL = 1e-6
FD_TOL = 1e-5
BUILD_TIMEOUT = 120
RUN_TIMEOUT = 30


def parse_output(text: str) -> dict:
    out = {"val": None, "rev": {}, "fwd": {}, "spl": {}, "fd": {},
           "tol": (REV_FWD_TOL, FD_AGREE_TOL, FD_TOL)}
    for line in text.splitlines():
        p = line.split()
        if not p:
            continue
        try:
            if p[0] == "VAL":
                out["val"] = float(p[1])
            elif p[0] == "TOL":     # a program computing partly in float (generate.py)
                out["tol"] = tuple(float(v) for v in p[1:4])
            elif p[0] == "REV":
                out["rev"][int(p[1])] = float(p[2])
            elif p[0] == "FWD":
                out["fwd"][int(p[1])] = float(p[2])
            elif p[0] == "SPL":
                out["spl"][int(p[1])] = float(p[2])
            elif p[0] == "FD":
                out["fd"].setdefault(int(p[2]), {})[p[1]] = float(p[3])
        except (IndexError, ValueError):
            pass
    return out


def judge(text: str) -> tuple[str, str]:
    """(outcome, detail) for a program's output: ok, wrong or noisy."""
    d = parse_output(text)
    comps = sorted(d["fd"])
    if d["val"] is None or not comps or set(d["rev"]) != set(comps) or set(d["fwd"]) != set(comps):
        return "wrong", "incomplete output"
    if not math.isfinite(d["val"]):
        return "noisy", f"f(x) = {d['val']}"
    if d["spl"] and set(d["spl"]) != set(comps):   # split mode (programs generated since window 10050)
        return "wrong", "incomplete output"
    nums = [*d["rev"].values(), *d["fwd"].values(), *d["spl"].values()]
    if not all(math.isfinite(v) for v in nums):
        return "wrong", "non-finite derivative"
    rev_fwd_tol, fd_agree_tol, fd_tol = d["tol"]
    scale = max([1.0] + [abs(v) for v in nums])
    problems = []
    for i in comps:
        r, w = d["rev"][i], d["fwd"][i]
        if abs(r - w) > rev_fwd_tol * scale:
            problems.append(f"x[{i}]: rev {r:.17g} != fwd {w:.17g}")
        if i in d["spl"] and abs(r - d["spl"][i]) > rev_fwd_tol * scale:
            problems.append(f"x[{i}]: rev {r:.17g} != split {d['spl'][i]:.17g}")
        fds = list(d["fd"][i].values())
        if not all(math.isfinite(v) for v in fds):
            continue
        fscale = max(1.0, *(abs(v) for v in fds))
        if max(fds) - min(fds) > fd_agree_tol * fscale:
            continue  # the steps disagree (non-smooth near x): FD says nothing here
        ref = d["fd"][i].get("1e-05", fds[len(fds) // 2])
        for name, v in (("rev", r), ("fwd", w)):
            if abs(v - ref) > fd_tol * max(fscale, abs(v)):
                problems.append(f"x[{i}]: {name} {v:.17g} != fd {ref:.17g}")
    return ("wrong", "; ".join(problems)) if problems else ("ok", "")


def first_error_line(stderr: str) -> str:
    for line in stderr.splitlines():
        if "error" in line.lower():
            return line.strip()
    lines = [l for l in stderr.splitlines() if l.strip()]
    return lines[0].strip() if lines else ""


def run_one(seed: int, config: str, workdir: str, source: str | None = None) -> dict:
    """Build the program of `seed` (or the given source text) in `config`, run and judge it."""
    flags, env_extra = CONFIGS[config]
    src = os.path.join(workdir, f"fuzz{seed}.c")
    exe = os.path.join(workdir, f"fuzz{seed}_{config}")
    text = gen(seed) if source is None else source
    with open(src, "w") as fh:
        fh.write(text)
    if "#pragma omp" in text:   # the OpenMP stream's programs (docs/fuzzing.md)
        flags = [*flags, "-fopenmp"]
    env = dict(os.environ, **env_extra)
    res = {"seed": seed, "config": config, "outcome": None, "detail": "", "build_stderr": "", "stdout": "", "stderr": ""}
    t0 = time.time()
    try:
        b = subprocess.run([ENZYME_BUILD, "cc", *flags, src, "-o", exe, "-lm"], capture_output=True, text=True,
                           env=env, timeout=BUILD_TIMEOUT, cwd=workdir)
    except subprocess.TimeoutExpired:
        res.update(outcome="timeout", detail=f"build timeout ({BUILD_TIMEOUT}s)")
        return res
    res["build_stderr"] = b.stderr
    res["build_seconds"] = round(time.time() - t0, 2)
    if b.returncode != 0:
        internal = b.returncode == 2 or "internal error" in b.stderr.lower() or b.returncode < 0
        res.update(outcome="internal" if internal else "refused",
                   detail=f"exit {b.returncode}: {first_error_line(b.stderr)}")
        return res
    try:
        p = subprocess.run([exe], capture_output=True, text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        res.update(outcome="timeout", detail=f"run timeout ({RUN_TIMEOUT}s)")
        return res
    res["stdout"], res["stderr"] = p.stdout, p.stderr
    if p.returncode < 0:
        res.update(outcome="crash", detail=f"signal {-p.returncode}")
    elif p.returncode != 0:
        res.update(outcome="runfail", detail=f"exit {p.returncode}: {first_error_line(p.stderr)}")
    else:
        res["outcome"], res["detail"] = judge(p.stdout)
    return res


def _task(args):
    seed, config = args
    with tempfile.TemporaryDirectory(prefix=f"fuzz{seed}_{config}_") as wd:
        return run_one(seed, config, wd)


def parse_seeds(spec: str) -> list[int]:
    seeds: list[int] = []
    for part in spec.split(","):
        if ":" in part:
            a, b = part.split(":")
            seeds += range(int(a), int(b))
        elif part:
            seeds.append(int(part))
    return seeds


def summary_table(results: list[dict], configs: list[str]) -> str:
    counts = {c: {o: 0 for o in OUTCOMES} for c in configs}
    for r in results:
        counts[r["config"]][r["outcome"]] += 1
    head = ["config", "programs"] + OUTCOMES
    rows = [head, ["---"] * len(head)]
    for c in configs:
        rows.append([c, str(sum(counts[c].values()))] + [str(counts[c][o]) for o in OUTCOMES])
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)


REDUCIBLE = ("wrong", "crash", "internal", "refused", "runfail", "noisy")


def reduce_failures(failures: list[dict], out: str, limit: int) -> list[dict]:
    """Reduce one failing config per seed (the first in config order), up to `limit` seeds,
    with reduce.py's line-based delta debugging; the reproducer is written next to the
    seed's source as seed<S>_<config>.reduced.c.  Timeouts are not reduced (each try would
    take the whole timeout)."""
    import reduce as reducer  # reduce imports this module

    done: list[dict] = []
    seen: set[int] = set()
    for f in failures:
        if len(done) >= limit or f["seed"] in seen or f["outcome"] not in REDUCIBLE:
            continue
        seen.add(f["seed"])
        t0 = time.time()
        source = gen(f["seed"])
        print(f"reducing seed {f['seed']} {f['config']} ({f['outcome']}) ...", flush=True)
        try:
            text, res = reducer.reduce(source, f["config"], verbose=False)
        except SystemExit as e:  # ok on rebuild: flaky, nothing to reduce
            print(f"  not reduced: {e}", flush=True)
            continue
        path = os.path.join(out, f"seed{f['seed']}_{f['config']}.reduced.c")
        with open(path, "w") as fh:
            fh.write(text)
        entry = {"seed": f["seed"], "config": f["config"], "path": path, "lines": len(text.splitlines()),
                 "from_lines": len(source.splitlines()), "outcome": res["outcome"], "detail": res["detail"][:200]}
        done.append(entry)
        print(f"  {entry['from_lines']} -> {entry['lines']} lines in {time.time() - t0:.0f}s: {path}", flush=True)
    return done


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="0:20", help="a:b (half-open) and/or single seeds, comma-separated")
    ap.add_argument("--configs", default="O0,O2,O3,adbefore")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="fuzz-results")
    ap.add_argument("--reduce", type=int, default=10, metavar="N",
                    help="reduce the first N failing seeds to <out>/seed<S>_<config>.reduced.c (0: none)")
    args = ap.parse_args(argv)
    seeds, configs = parse_seeds(args.seeds), args.configs.split(",")
    for c in configs:
        if c not in CONFIGS:
            ap.error(f"unknown config {c!r} (known: {', '.join(CONFIGS)})")
    os.makedirs(args.out, exist_ok=True)
    tasks = [(s, c) for s in seeds for c in configs]
    results: list[dict] = []
    t0 = time.time()
    with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        for n, res in enumerate(ex.map(_task, tasks), 1):
            results.append(res)
            mark = "" if res["outcome"] == "ok" else f"  {res['detail'][:160]}"
            print(f"[{n}/{len(tasks)} {time.time() - t0:6.0f}s] seed {res['seed']} {res['config']}: {res['outcome']}{mark}",
                  flush=True)
            if res["outcome"] not in ("ok",):
                base = os.path.join(args.out, f"seed{res['seed']}_{res['config']}")
                with open(base + ".c", "w") as fh:
                    fh.write(gen(res["seed"]))
                with open(base + ".txt", "w") as fh:
                    fh.write(f"outcome: {res['outcome']}\ndetail: {res['detail']}\n\n--- build stderr\n"
                             f"{res['build_stderr']}\n--- stdout\n{res['stdout']}\n--- stderr\n{res['stderr']}\n")
    table = summary_table(results, configs)
    print()
    print(f"seeds {args.seeds}, configs {args.configs}, {len(tasks)} builds in {time.time() - t0:.0f}s")
    print(table)
    failures = [{k: r[k] for k in ("seed", "config", "outcome", "detail")} for r in results if r["outcome"] != "ok"]
    for f in failures:
        print(f"  seed {f['seed']} {f['config']}: {f['outcome']}: {f['detail'][:200]}")
    reduced = reduce_failures(failures, args.out, args.reduce)
    with open(os.path.join(args.out, "summary.json"), "w") as fh:
        json.dump({"seeds": args.seeds, "configs": configs, "table": table, "failures": failures,
                   "reduced": reduced,
                   "results": [{k: r[k] for k in ("seed", "config", "outcome", "detail")} for r in results]},
                  fh, indent=1)
    with open(os.path.join(args.out, "summary.md"), "w") as fh:
        fh.write(f"`tests/fuzz/run.py --seeds {args.seeds} --configs {args.configs}`\n\n{table}\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
