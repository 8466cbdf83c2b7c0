"""Random C programs (loops, nested loops, while loops with data-dependent exits, branches,
calls between noinline functions, math) whose gradients are checked against finite
differences in combined and split mode: a fixed-seed net for the caching machinery."""
from __future__ import annotations

import random


def gen(seed: int) -> str:
    r = random.Random(seed)
    lines = ['#include "adcheck.h"', 'extern int enzyme_dup, enzyme_const;', 'double __enzyme_autodiff(void *, ...);',
             'void *__enzyme_augmentfwd(void *, ...);', 'void __enzyme_reverse(void *, ...);']
    nfun = r.randint(1, 3)
    def expr(vars_, depth=0):
        if depth > 2 or r.random() < 0.3:
            return r.choice(vars_ + ["0.5", "1.25"])
        op = r.choice(["+", "-", "*", "sin", "exp", "sq", "div", "tanh"])
        a, b = expr(vars_, depth + 1), expr(vars_, depth + 1)
        if op in "+-*": return f"({a} {op} {b})"
        if op == "sq": return f"({a} * {a})"
        if op == "div": return f"({a} / (1.5 + ({b}) * ({b})))"
        if op == "exp": return f"exp(0.1 * ({a}))"
        return f"{op}({a})"
    for k in range(nfun):
        callee = f"f{k-1}" if k > 0 else None
        body = [f"__attribute__((noinline)) double f{k}(const double *x, double *w, int n) {{", "  double s = 0.25, t = 0.0;"]
        for stmt in range(r.randint(2, 5)):
            kind = r.choice(["loop", "nested", "if", "assign", "call", "while"])
            v = ["s", "t", "x[0]", "x[1]"]
            if kind == "loop":
                body.append(f"  for (int i = 0; i < n; i++) {{ double u = {expr(v + ['x[i]', 'w[i]'])}; w[i] = u; s += u * x[(i + {r.randint(1,3)}) % n]; }}")
            elif kind == "nested":
                body.append(f"  for (int i = 0; i < n; i++) for (int j = 0; j <= i; j++) t += {expr(v + ['x[i]', 'x[j]'])} * 0.1;")
            elif kind == "if":
                body.append(f"  if ({expr(v)} > 0.3) s = {expr(v)}; else t = t + {expr(v)};")
            elif kind == "assign":
                body.append(f"  s = {expr(v)};")
            elif kind == "while":
                body.append(f"  {{ int k = 0; while (k < n && s < 5.0) {{ s = s * 1.1 + {expr(['x[k]', 't'])} * 0.05; k++; }} }}")
            elif kind == "call" and callee:
                body.append(f"  t += {callee}(x, w, n) * {expr(v)};")
        body.append("  return s + t * 0.5;")
        body.append("}")
        lines += body
    top = f"f{nfun-1}"
    lines += [f"static double F(const double *x, int n) {{ double w[8] = {{0}}; return {top}(x, w, n); }}",
              "int main(void) {",
              "  enum { N = 5 }; double x[N], dx[N] = {0}, dx2[N] = {0}, g[N], w[8] = {0}, dw[8] = {0};",
              f"  for (int i = 0; i < N; i++) x[i] = 0.1 + 0.15 * i + {r.random():.3f};",
              f"  __enzyme_autodiff((void *){top}, enzyme_dup, x, dx, enzyme_dup, w, dw, enzyme_const, N);",
              "  ac_fd_grad(F, x, N, g);",
              "  for (int i = 0; i < N; i++) ac_near(\"combined\", dx[i], g[i], 1e-5);",
              "  double dw2[8] = {0}; for (int i = 0; i < 8; i++) w[i] = 0;",
              f"  void *tp = __enzyme_augmentfwd((void *){top}, enzyme_dup, x, dx2, enzyme_dup, w, dw2, enzyme_const, N);",
              f"  __enzyme_reverse((void *){top}, enzyme_dup, x, dx2, enzyme_dup, w, dw2, enzyme_const, N, 1.0, tp);",
              "  for (int i = 0; i < N; i++) ac_near(\"split\", dx2[i], g[i], 1e-5);",
              "  return ac_done();", "}"]
    return "\n".join(lines) + "\n"
