"""IR-level tests of `stage._merged_pointer_words` (through `stage.integer_pointer_arithmetic`):
a word stored to memory that a phi or a select merges from arithmetic on one pointer and from
plain integers is stored as a pointer, merged again over pointers (a GEP of the pointer, a GEP of
null by the integer). Words with anything else in the merge are left alone. The compiled class
(tagged values made by a conditional before AD) is in test_tagged_pointers.py."""
from __future__ import annotations

import re

from ad_helpers import ir_module, verified

from enzyme_build.ad.stage import integer_pointer_arithmetic


def rewritten(*body: str, params: str, declare: str = "") -> str:
    text = ir_module(*body, ret="void", params=params) + declare + "\n"
    return verified(integer_pointer_arithmetic(verified(text)))


def test_select_of_tagged_pointer_and_shifted_integer():
    out = rewritten(
        "  %a = ptrtoint ptr %p to i64",
        "  %b = or i64 %a, 1",
        "  %k = zext i32 %n to i64",
        "  %s = shl i64 %k, 1",
        "  %m = select i1 %c, i64 %b, i64 %s",
        "  store i64 %m, ptr %q, align 8",
        "  ret void",
        params="ptr %p, ptr %q, i1 %c, i32 %n")
    assert re.search(r"%m\.in0 = getelementptr i8, ptr %p, i64 %m\.in0\.intoff", out)
    assert "%m.in0.intoff = sub i64 %b, %a" in out
    assert "%m.in1 = getelementptr i8, ptr null, i64 %s" in out
    assert "%m.asptr = select i1 %c, ptr %m.in0, ptr %m.in1" in out
    assert "store ptr %m.asptr, ptr %q, align 8" in out
    assert "store i64" not in out
    assert "%m = select i1 %c, i64 %b, i64 %s" in out     # the integer stays for its other uses


def test_phi_of_tagged_pointer_and_constant():
    out = rewritten(
        "  br i1 %c, label %boxed, label %absent",
        "boxed:",
        "  %a = ptrtoint ptr %p to i64",
        "  %b = or i64 %a, 2",
        "  br label %join",
        "absent:",
        "  br label %join",
        "join:",
        "  %m = phi i64 [ %b, %boxed ], [ 0, %absent ]",
        "  store i64 %m, ptr %q, align 8",
        "  ret void",
        params="ptr %p, ptr %q, i1 %c")
    assert "%m.asptr = phi ptr [ %m.in0, %boxed ], [ %m.in1, %absent ]" in out
    assert "%m.in1 = getelementptr i8, ptr null, i64 0" in out
    # each incoming pointer is made at the end of its own block
    boxed = out[out.index("boxed:"):out.index("absent:")]
    assert "%m.in0 = getelementptr i8, ptr %p" in boxed
    assert "store ptr %m.asptr, ptr %q" in out


def test_phi_of_loaded_word_and_small_integer():
    out = rewritten(
        "  %w = load i64, ptr %r, align 8",
        "  %u = inttoptr i64 %w to ptr",            # words are read back as pointers here
        "  %d = load double, ptr %u, align 8",
        "  br i1 %c, label %copy, label %fresh",
        "copy:",
        "  br label %join",
        "fresh:",
        "  %s = call i64 @small(i64 %n)",
        "  br label %join",
        "join:",
        "  %m = phi i64 [ %w, %copy ], [ %s, %fresh ]",
        "  store i64 %m, ptr %q, align 8",
        "  ret void",
        params="ptr %r, ptr %q, i1 %c, i64 %n", declare="declare i64 @small(i64)")
    assert "%w.asptr = load ptr, ptr %r, align 8" in out   # the loaded word's pointer twin
    assert "%m.in0 = getelementptr i8, ptr %w.asptr, i64 0" in out
    assert "%m.in1 = getelementptr i8, ptr null, i64 %s" in out
    assert "store ptr %m.asptr, ptr %q" in out


def test_merges_with_unknown_words_are_left_alone():
    # a call that is given a pointer may return a pointer's bits: not a plain integer
    body = ["  %a = ptrtoint ptr %p to i64",
            "  %b = or i64 %a, 1",
            "  %s = call i64 @hide(ptr %p)",
            "  %m = select i1 %c, i64 %b, i64 %s",
            "  store i64 %m, ptr %q, align 8",
            "  ret void"]
    out = rewritten(*body, params="ptr %p, ptr %q, i1 %c", declare="declare i64 @hide(ptr)")
    assert "store i64 %m, ptr %q" in out and ".asptr" not in out
    # two plain integers: no pointer in the word, nothing to do
    out = rewritten("  %s = shl i64 %n, 1",
                    "  %m = select i1 %c, i64 %s, i64 7",
                    "  store i64 %m, ptr %q, align 8",
                    "  ret void",
                    params="ptr %q, i1 %c, i64 %n")
    assert "store i64 %m, ptr %q" in out and ".asptr" not in out
    # an i64 parameter may carry a pointer's bits: not a plain integer either
    out = rewritten("  %a = ptrtoint ptr %p to i64",
                    "  %b = or i64 %a, 1",
                    "  %m = select i1 %c, i64 %b, i64 %n",
                    "  store i64 %m, ptr %q, align 8",
                    "  ret void",
                    params="ptr %p, ptr %q, i1 %c, i64 %n")
    assert "store i64 %m, ptr %q" in out and ".asptr" not in out
    # an integer table merged with a constant: no word is read back as a pointer here
    out = rewritten("  %w = load i64, ptr %r, align 8",
                    "  %m = select i1 %c, i64 %w, i64 5",
                    "  store i64 %m, ptr %q, align 8",
                    "  ret void",
                    params="ptr %r, ptr %q, i1 %c")
    assert "store i64 %m, ptr %q" in out and ".asptr" not in out


def test_word_stored_twice_gets_one_twin_per_store():
    # a boxed value stored in two tables: each store converts it under its own name
    out = rewritten(
        "  %a = ptrtoint ptr %p to i64",
        "  %b = or i64 %a, 1",
        "  store i64 %b, ptr %q, align 8",
        "  br label %next",
        "next:",
        "  store i64 %b, ptr %r, align 8",
        "  ret void",
        params="ptr %p, ptr %q, ptr %r")
    assert "store ptr %b.asptr, ptr %q" in out
    assert "store ptr %b.asptr2, ptr %r" in out
