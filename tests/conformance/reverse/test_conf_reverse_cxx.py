"""Reverse-mode conformance for C++ (enzyme-build c++): classes, templates, std::vector,
std::array, operator overloads, lambdas, new/delete, float overloads."""
import pytest

from rev_helpers import build_and_run


@pytest.mark.parametrize("opt", ["-O1", "-O2", "-O3"])
def test_cxx(tmp_path, opt):
    assert build_and_run(tmp_path, "cxx.cc", opt=opt) >= 28


def test_vector_push_o2(tmp_path):
    assert build_and_run(tmp_path, "vector_push_o0.cc", opt="-O2") == 6


@pytest.mark.parametrize("opt,env", [("-O0", {}),
                                     pytest.param("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"},
                                                  marks=pytest.mark.xfail(strict=True, reason="see failure rev-04"))],
                         ids=["O0", "ad-before-opt"])
def test_vector_push_o0(tmp_path, opt, env):
    assert build_and_run(tmp_path, "vector_push_o0.cc", opt=opt, env_extra=env) == 6


def test_cxx_o0(tmp_path):
    assert build_and_run(tmp_path, "cxx.cc", opt="-O0") >= 28


def test_stl_algorithms_o2(tmp_path):
    assert build_and_run(tmp_path, "stl_algorithms.cc", opt="-O2") == 4


def test_stl_algorithms_o0(tmp_path):
    assert build_and_run(tmp_path, "stl_algorithms.cc", opt="-O0") == 4


def test_vector_of_vectors(tmp_path):
    build_and_run(tmp_path, "vector_of_vectors.cc")


def test_sort_vector_o2(tmp_path):
    assert build_and_run(tmp_path, "sort_vector.cc", opt="-O2") == 5


def test_sort_vector_o0(tmp_path):
    assert build_and_run(tmp_path, "sort_vector.cc", opt="-O0") == 5


@pytest.mark.parametrize("opt", ["-O0", "-O2", "-O3"])
@pytest.mark.parametrize("program,checks", [("cxx_more.cc", 8), ("decl_cxx.cc", 7), ("functor_const.cc", 1),
                                            ("function_refs.cc", 6)])
def test_cxx_more(tmp_path, program, checks, opt):
    assert build_and_run(tmp_path, program, opt=opt) == checks


def test_functor_const_before_opt(tmp_path):
    assert build_and_run(tmp_path, "functor_const.cc", env_extra={"ENZYME_BUILD_AD_BEFORE_OPT": "1"}) == 1


@pytest.mark.parametrize("opt,env", [("-O0", {}), ("-O2", {}), ("-O0", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O0", "O2", "O0-ad-before-opt"])
def test_cxx_vector_o0(tmp_path, opt, env):
    assert build_and_run(tmp_path, "cxx_vector_o0.cc", opt=opt, env_extra=env) == 24


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_vec3f(tmp_path, opt):
    build_and_run(tmp_path, "vec3f.cc", opt=opt)


@pytest.mark.parametrize("opt,env", [("-O0", {}), ("-O2", {}), ("-O2", {"ENZYME_BUILD_AD_BEFORE_OPT": "1"})],
                         ids=["O0", "O2", "ad-before-opt"])
def test_const_initializer_functor(tmp_path, opt, env):
    """A functor copied from a constant initializer (@__const.*) with memcpy: the memory
    type analysis reads the initializer's declared type (was rev-15: "unknown type")."""
    assert build_and_run(tmp_path, "const_initializer_functor.cc", opt=opt, env_extra=env) == 1
