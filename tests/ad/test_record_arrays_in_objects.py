"""Records copied out of arrays of records inside larger objects (box2d-lite's contact
manifolds: `Arbiter { Contact contacts[2]; int numContacts; Body *body1, *body2; }`, each
`Contact` doubles, a `double x[15]` array or `Vec2` members, then a union `FeaturePair`).
The copies `merged[i] = newContacts[i]` and `contacts[i] = merged[i]` were refused as
"mixed double/int/pointer": the pointer members after the array, reached through the
array's stride, looked like part of every record, the declared types named both the
element and the enclosing object, and the union is tagged `char`. Now the element type
both GEPs index decides when the copy is whole elements of it, a declared record without
pointers outweighs a pointer seen only through a stride, and a `!tbaa.struct` entry tagged
`char` that no access reads a float from (or puts a pointer in) is bytes
(analysis/types.py).

Reverse and forward derivatives against central differences at -O0, -O2, -O3 and with AD
before optimization.
"""
from __future__ import annotations

import pytest
from hcheck_run import build_and_run_hcheck, checks_passed, loss_check_main

CONFIGS = [("-O0", {}), ("-O2", {}), ("-O3", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})]
CONFIG_IDS = ["O0", "O2", "O3", "ad-before-opt"]

HEAD = r"""
#include "hcheck.h"
#include <cmath>
#include <cstdio>
#include <vector>
extern "C" { extern int enzyme_dup, enzyme_const; double __enzyme_autodiff(void *, ...); double __enzyme_fwddiff(void *, ...); }
#define N 2
"""

CHECK = loss_check_main((1.5, 2.0))

PROGRAMS = {
    "contacts": r"""
#include <new>
struct Contact { double x[15]; int feature; };
struct Arb {
  Contact contacts[2]; int n; double *src;
  explicit Arb(double *p);
  void Update(const Contact *nc, int m) {
    Contact merged[2];
    for (int i = 0; i < m; ++i) {
      int k = -1;
      for (int j = 0; j < n; ++j) if (nc[i].feature == contacts[j].feature) { k = j; break; }
      merged[i] = nc[i];
      if (k > -1) merged[i].x[1] = contacts[k].x[1];
    }
    for (int i = 0; i < m; ++i) contacts[i] = merged[i];
    n = m;
  }
};
__attribute__((noinline)) Arb::Arb(double *p) : src(p) {
  n = 2;
  for (int i = 0; i < 2; i++) { for (int j = 0; j < 15; j++) contacts[i].x[j] = p[i] * (j + 1); contacts[i].feature = i; }
}
double loss(const double *q) {
  double p[2] = {q[0], q[1]};
  Arb *slot = nullptr;
  alignas(Arb) char buf[sizeof(Arb)];
  double L = 0;
  for (int s = 0; s < 3; s++) {
    Arb a(p);
    if (!slot) slot = new (buf) Arb(a); else slot->Update(a.contacts, a.n);
    for (int i = 0; i < 2; i++) { L += slot->contacts[i].x[0] * slot->contacts[i].x[1]; slot->contacts[i].x[1] *= 2; }
  }
  return L;
}
""",
    "union_tail": r"""
struct Vec2 { double x, y; };
union FeaturePair { struct { char in1, out1, in2, out2; } e; int value; };
struct Contact { Vec2 position, normal, r1, r2; double separation, Pn, Pt, Pnb, massNormal, massTangent, bias; FeaturePair feature; };
struct Arbiter { Contact contacts[2]; int numContacts; void *body1, *body2; double friction; };
__attribute__((noinline)) void update(Arbiter *arb, const Contact *newContacts, int n) {
  Contact merged[2];
  for (int i = 0; i < n; ++i) {
    const Contact *cNew = newContacts + i;
    int k = -1;
    for (int j = 0; j < arb->numContacts; ++j) if (cNew->feature.value == arb->contacts[j].feature.value) { k = j; break; }
    merged[i] = *cNew;
    if (k > -1) { merged[i].Pn = arb->contacts[k].Pn; merged[i].Pt = arb->contacts[k].Pt; }
  }
  for (int i = 0; i < n; ++i) arb->contacts[i] = merged[i];
  arb->numContacts = n;
}
double loss(const double *p) {
  Arbiter arb = {};
  arb.friction = 0.2;
  double L = 0;
  for (int s = 0; s < 3; s++) {
    Contact c[2] = {};
    for (int i = 0; i < 2; i++) {
      c[i].position = {p[0] * (i + 1), p[1] - i}; c[i].normal = {0, 1};
      c[i].separation = p[0] * p[1] - s; c[i].Pn = c[i].separation * 0.5 + arb.contacts[i].Pn; c[i].Pt = p[1] * i;
      c[i].feature.value = i;
    }
    update(&arb, c, 2);
    for (int i = 0; i < 2; i++) L += arb.contacts[i].Pn * arb.contacts[i].position.x + arb.contacts[i].Pt * arb.friction;
  }
  return L;
}
""",
}


@pytest.mark.parametrize("opt,env", CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_records_copied_out_of_arrays_in_objects(tmp_path, name, opt, env):
    source = HEAD + PROGRAMS[name] + CHECK
    assert checks_passed(build_and_run_hcheck(tmp_path / name, source, cxx=True, opt=opt, env_extra=env)) == 4
