"""Reduce a failing fuzz program to a smaller reproducer with the same outcome.

    .venv/bin/python tests/fuzz/reduce.py --seed 14 --config O2 [--out reduced.c]
    .venv/bin/python tests/fuzz/reduce.py --source prog.c --config adbefore

Line-based delta debugging: chunks of lines (halves, quarters, ... single lines) are
deleted from the program above `main` as long as the reduced program still builds and
gives the same outcome (f's prologue, which initialises every array, is kept) (for `refused`/`internal`, the same message up to the first " in @"
or "%"; for `wrong`, any wrong gradient).  Deletions that break the C make clang fail, which
changes the outcome, so they are rejected; so are deletions after which clang warns of a
missing return or an uninitialised value (-Werror=return-type, -Werror=uninitialized).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as fuzz  # noqa: E402


CLANG = shutil.which("clang-22") or shutil.which("clang") or "clang"
# A deletion must not leave a non-void function without its return or a value unset.
STRICT = ["-fsyntax-only", "-Werror=return-type", "-Werror=uninitialized", "-Werror=sometimes-uninitialized",
          "-Werror=conditional-uninitialized"]


def _valid(path: str) -> bool:
    return subprocess.run([CLANG, *STRICT, path], capture_output=True).returncode == 0


def _key(res: dict) -> tuple[str, str]:
    detail = res["detail"]
    if res["outcome"] in ("refused", "internal", "runfail"):
        for cut in (" in @", "%"):
            detail = detail.split(cut)[0]
        return res["outcome"], detail
    return res["outcome"], ""


def reduce(source: str, config: str, verbose: bool = True) -> tuple[str, dict]:
    with tempfile.TemporaryDirectory(prefix="fuzzreduce_") as wd:
        first = fuzz.run_one(0, config, wd, source)
        if first["outcome"] == "ok":
            raise SystemExit("the program is ok in this config: nothing to reduce")
        want = _key(first)
        lines = source.splitlines()
        main_at = next(i for i, l in enumerate(lines) if l.startswith("int main("))
        # Keep the includes/declarations (everything up to the struct) and main.
        lo = next(i for i, l in enumerate(lines) if l.startswith("struct S")) + 1
        # f's prologue (declarations and the loop that initialises a and b) is kept, so
        # the reduced program never reads uninitialised memory; so is free(b).
        f_at = next(i for i, l in enumerate(lines) if l.startswith("__attribute__((noinline)) double f("))
        init_at = next(i for i in range(f_at, main_at) if lines[i].startswith("  for (int i = 0; i < "))
        keep = set(range(f_at, init_at + 1)) | {i for i in range(f_at, main_at) if lines[i].strip() == "free(b);"}
        body = [(i, lines[i]) for i in range(lo, main_at)]
        head, tail = lines[:lo], lines[main_at:]

        def text(cand: list[tuple[int, str]]) -> str:
            return "\n".join(head + [l for _, l in cand] + tail) + "\n"
        tries = 0

        def still_fails(cand: list[str]) -> bool:
            nonlocal tries
            tries += 1
            if not keep <= {i for i, _ in cand}:
                return False
            path = os.path.join(wd, "cand.c")
            with open(path, "w") as fh:
                fh.write(text(cand))
            if not _valid(path):
                return False
            res = fuzz.run_one(0, config, wd, text(cand))
            return _key(res) == want

        chunk = max(1, len(body) // 2)
        while chunk >= 1:
            i, changed = 0, False
            while i < len(body):
                cand = body[:i] + body[i + chunk:]
                if cand != body and still_fails(cand):
                    body, changed = cand, True
                    if verbose:
                        print(f"  [{tries}] {len(body)} lines", flush=True)
                else:
                    i += chunk
            if not changed:
                chunk //= 2
        out = text(body)
        return out, fuzz.run_one(0, config, wd, out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--seed", type=int)
    g.add_argument("--source")
    ap.add_argument("--config", required=True, choices=sorted(fuzz.CONFIGS))
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    source = fuzz.gen(args.seed) if args.source is None else open(args.source).read()
    out, res = reduce(source, args.config)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(out)
    else:
        sys.stdout.write(out)
    print(f"reduced: {len(source.splitlines())} -> {len(out.splitlines())} lines; "
          f"{res['outcome']}: {res['detail'][:200]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
