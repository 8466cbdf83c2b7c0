"""Fat objects in a static archive made by the system's `ar`: indexed, linkable, runnable."""
from __future__ import annotations

import os
import textwrap

from project_helpers import is_fat_object, run

VEC_C = textwrap.dedent("""\
    double dot(const double *a, const double *b, int n) {
      double s = 0.0;
      for (int i = 0; i < n; i++) s += a[i] * b[i];
      return s;
    }
    """)
SCALE_C = textwrap.dedent("""\
    void scale(double *a, double k, int n) { for (int i = 0; i < n; i++) a[i] *= k; }
    """)
MAIN_C = textwrap.dedent("""\
    #include <stdio.h>
    double dot(const double *a, const double *b, int n);
    void scale(double *a, double k, int n);
    int main(void) {
      double a[3] = {1, 2, 3}, b[3] = {4, 5, 6};
      scale(a, 2.0, 3);
      printf("%.1f\\n", dot(a, b, 3));
      return 0;
    }
    """)


def test_ar_archive_of_fat_objects(enzyme_cc_cmd, tmp_path):
    for name, text in (("vec.c", VEC_C), ("scale.c", SCALE_C), ("main.c", MAIN_C)):
        (tmp_path / name).write_text(text)
    cc = enzyme_cc_cmd.split()
    for name in ("vec", "scale"):
        run(cc + ["-O2", "-c", f"{name}.c", "-o", f"{name}.o"], cwd=tmp_path)
        assert is_fat_object(str(tmp_path / f"{name}.o")), f"{name}.o is not a fat object"
    run(["ar", "rcs", "libvec.a", "vec.o", "scale.o"], cwd=tmp_path)
    # the archive index is what the system linker resolves symbols from
    armap = run(["nm", "--print-armap", "libvec.a"], cwd=tmp_path).stdout
    assert "dot in vec.o" in armap and "scale in scale.o" in armap, armap
    run(cc + ["-O2", "main.c", "-L.", "-lvec", "-o", "main"], cwd=tmp_path)
    assert run([os.path.join(tmp_path, "main")]).stdout == "64.0\n"
