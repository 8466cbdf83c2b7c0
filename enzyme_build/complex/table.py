"""The table of complex runtime and libm functions the library gives bodies to.

Each entry is a C99 function (or clang's complex runtime call) written as plain real
arithmetic on its real and imaginary parts, with `$T` for the real type and `$F(name)`
for the libm function of that precision (`exp` / `expf`). The engine differentiates these
bodies like any code, so every derivative treats the real and imaginary parts as
independent reals (Enzyme's convention, docs/complex.md).

Bodies of result `"z"` are complex expressions (the library is compiled with
`-fcx-limited-range`, so `*` and `/` there are the naive formulas, no runtime call): `$C`
is the complex type and `$L(clog)` another entry of the table, inlined (it must come
earlier in the table).

`args`: `"c"` one complex argument `z` (parts `x`, `y`), `"cc"` two (`z`: `x`, `y`;
`w`: `u`, `v`), `"rrrr"` four reals `a, b, c, d` (clang's `__muldc3(a, b, c, d)` for
`(a + ib)(c + id)`). `result`: `"c"` complex (the body sets `re`, `im`), `"z"` complex (the
body sets the complex `res`) or `"r"` real (the body sets `r`).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    double: str          # the symbol for double (`cexp`, `__muldc3`)
    single: str          # the symbol for float (`cexpf`, `__mulsc3`)
    args: str
    result: str
    body: str


ENTRIES: tuple[Entry, ...] = (
    # clang's runtime calls: complex multiply and divide, with the C99 Annex G recovery of
    # infinite results the runtime does when the naive result is NaN + i NaN (as in
    # compiler-rt and libgcc); derivatives exist only on the finite path
    Entry("__muldc3", "__mulsc3", "rrrr", "c", """
      $T ac = a * c, bd = b * d, ad = a * d, bc = b * c;
      re = ac - bd; im = ad + bc;
      if (__builtin_isnan(re) && __builtin_isnan(im)) {
        int again = 0;
        if (__builtin_isinf(a) || __builtin_isinf(b)) {
          a = $F(copysign)(__builtin_isinf(a) ? 1 : 0, a); b = $F(copysign)(__builtin_isinf(b) ? 1 : 0, b);
          if (__builtin_isnan(c)) c = $F(copysign)(0, c);
          if (__builtin_isnan(d)) d = $F(copysign)(0, d);
          again = 1;
        }
        if (__builtin_isinf(c) || __builtin_isinf(d)) {
          c = $F(copysign)(__builtin_isinf(c) ? 1 : 0, c); d = $F(copysign)(__builtin_isinf(d) ? 1 : 0, d);
          if (__builtin_isnan(a)) a = $F(copysign)(0, a);
          if (__builtin_isnan(b)) b = $F(copysign)(0, b);
          again = 1;
        }
        if (!again && (__builtin_isinf(ac) || __builtin_isinf(bd) || __builtin_isinf(ad) || __builtin_isinf(bc))) {
          if (__builtin_isnan(a)) a = $F(copysign)(0, a);
          if (__builtin_isnan(b)) b = $F(copysign)(0, b);
          if (__builtin_isnan(c)) c = $F(copysign)(0, c);
          if (__builtin_isnan(d)) d = $F(copysign)(0, d);
          again = 1;
        }
        if (again) { re = __builtin_inf() * (a * c - b * d); im = __builtin_inf() * (a * d + b * c); }
      }"""),
    Entry("__divdc3", "__divsc3", "rrrr", "c", """
      if ($F(fabs)(c) >= $F(fabs)(d)) {   /* Smith's algorithm, as libgcc */
        $T q = d / c, den = c + d * q;
        re = (a + b * q) / den; im = (b - a * q) / den;
      } else {
        $T q = c / d, den = c * q + d;
        re = (a * q + b) / den; im = (b * q - a) / den;
      }
      if (__builtin_isnan(re) && __builtin_isnan(im)) {
        if (c == 0 && d == 0 && (!__builtin_isnan(a) || !__builtin_isnan(b))) {
          re = $F(copysign)(__builtin_inf(), c) * a; im = $F(copysign)(__builtin_inf(), c) * b;
        } else if ((__builtin_isinf(a) || __builtin_isinf(b)) && __builtin_isfinite(c) && __builtin_isfinite(d)) {
          a = $F(copysign)(__builtin_isinf(a) ? 1 : 0, a); b = $F(copysign)(__builtin_isinf(b) ? 1 : 0, b);
          re = __builtin_inf() * (a * c + b * d); im = __builtin_inf() * (b * c - a * d);
        } else if ((__builtin_isinf(c) || __builtin_isinf(d)) && __builtin_isfinite(a) && __builtin_isfinite(b)) {
          c = $F(copysign)(__builtin_isinf(c) ? 1 : 0, c); d = $F(copysign)(__builtin_isinf(d) ? 1 : 0, d);
          re = 0 * (a * c + b * d); im = 0 * (b * c - a * d);
        }
      }"""),
    Entry("cabs", "cabsf", "c", "r", "r = $F(hypot)(x, y);"),
    Entry("carg", "cargf", "c", "r", "r = $F(atan2)(y, x);"),
    Entry("creal", "crealf", "c", "r", "r = x;"),
    Entry("cimag", "cimagf", "c", "r", "r = y;"),
    Entry("conj", "conjf", "c", "c", "re = x; im = -y;"),
    Entry("cexp", "cexpf", "c", "c", "$T e = $F(exp)(x); re = e * $F(cos)(y); im = e * $F(sin)(y);"),
    Entry("clog", "clogf", "c", "c", "re = $F(log)($F(hypot)(x, y)); im = $F(atan2)(y, x);"),
    Entry("csqrt", "csqrtf", "c", "c", """
      if (x == 0 && y == 0) { re = 0; im = y; }
      else {
        $T m = $F(hypot)(x, y);
        if (x >= 0) { $T t = $F(sqrt)((m + x) / 2); re = t; im = y / (2 * t); }
        else { $T t = $F(sqrt)((m - x) / 2); re = $F(fabs)(y) / (2 * t); im = $F(copysign)(t, y); }
      }"""),
    Entry("cpow", "cpowf", "cc", "c", """
      if (x == 0 && y == 0) { re = (u == 0 && v == 0) ? 1 : 0; im = 0; }
      else {
        $T lr = $F(log)($F(hypot)(x, y)), th = $F(atan2)(y, x);
        $T a = u * lr - v * th, b = u * th + v * lr, e = $F(exp)(a);
        re = e * $F(cos)(b); im = e * $F(sin)(b);
      }"""),
    Entry("csin", "csinf", "c", "c", "re = $F(sin)(x) * $F(cosh)(y); im = $F(cos)(x) * $F(sinh)(y);"),
    Entry("ccos", "ccosf", "c", "c", "re = $F(cos)(x) * $F(cosh)(y); im = -($F(sin)(x) * $F(sinh)(y));"),
    Entry("ctan", "ctanf", "c", "c", """
      $T den = $F(cos)(2 * x) + $F(cosh)(2 * y);
      re = $F(sin)(2 * x) / den; im = $F(sinh)(2 * y) / den;"""),
    Entry("csinh", "csinhf", "c", "c", "re = $F(sinh)(x) * $F(cos)(y); im = $F(cosh)(x) * $F(sin)(y);"),
    Entry("ccosh", "ccoshf", "c", "c", "re = $F(cosh)(x) * $F(cos)(y); im = $F(sinh)(x) * $F(sin)(y);"),
    Entry("ctanh", "ctanhf", "c", "c", """
      $T den = $F(cosh)(2 * x) + $F(cos)(2 * y);
      re = $F(sinh)(2 * x) / den; im = $F(sin)(2 * y) / den;"""),
    # inverse functions from their logarithmic forms (odd symmetry keeps casinh accurate
    # for Re z < 0); the branch cuts are C99's
    Entry("casinh", "casinhf", "c", "z", """
      $C s = x < 0 ? -z : z;
      $C t = $L(clog)(s + $L(csqrt)(s * s + 1));
      res = x < 0 ? -t : t;"""),
    Entry("casin", "casinf", "c", "z", """
      $C t = $L(casinh)(__builtin_complex(-y, x));
      res = __builtin_complex(__imag__ t, -__real__ t);"""),
    Entry("cacos", "cacosf", "c", "z", """
      $C t = $L(casin)(z);
      res = __builtin_complex(($T)1.57079632679489661923132169163975144L - __real__ t, -__imag__ t);"""),
    Entry("cacosh", "cacoshf", "c", "z", "res = $L(clog)(z + $L(csqrt)(z + 1) * $L(csqrt)(z - 1));"),
    Entry("catanh", "catanhf", "c", "z", "res = ($L(clog)(1 + z) - $L(clog)(1 - z)) / 2;"),
    Entry("catan", "catanf", "c", "z", """
      $C t = $L(catanh)(__builtin_complex(-y, x));
      res = __builtin_complex(__imag__ t, -__real__ t);"""),
    Entry("cproj", "cprojf", "c", "c", """
      re = x; im = y;
      if (__builtin_isinf(x) || __builtin_isinf(y)) { re = __builtin_inf(); im = $F(copysign)(0, y); }"""),
)


BY_DOUBLE = {e.double: e for e in ENTRIES}


def extended_symbol(entry: Entry) -> str:
    """The long double symbol: clang's runtime names it with `x` (`__mulxc3`, x86's 80-bit
    format), C99 libm with an `l` suffix (`cexpl`)."""
    if entry.double.startswith("__") and entry.double.endswith("dc3"):
        return entry.double[:-3] + "xc3"
    return entry.double + "l"


def known_names() -> dict[str, tuple[Entry, str]]:
    """symbol -> (entry, precision 'd', 's' or 'l')."""
    out: dict[str, tuple[Entry, str]] = {}
    for e in ENTRIES:
        out[e.double] = (e, "d")
        out[e.single] = (e, "s")
        out[extended_symbol(e)] = (e, "l")
    return out
