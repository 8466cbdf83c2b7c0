"""Compiles through ccache (with its remote storage on a local redis-server shared by two
build trees) and distcc (two local distccd "hosts"), via ENZYME_BUILD_LAUNCHER, on real
projects: examples/multisource, Lua 5.4, and the `enzyme-build build` (SCons) route."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import pytest

from project_helpers import BIN_DIR, REPO, in_ci, is_fat_object, run

ENZYME_CC = os.path.join(BIN_DIR, "enzyme-cc")
ENZYME_BUILD = os.path.join(BIN_DIR, "enzyme-build")
MULTISOURCE = os.path.join(REPO, "examples", "multisource")
EXAMPLE_SOURCES = ["Makefile", "SConstruct", "physics.h", "forces.c", "integrate.c", "kernel_rules.c", "main.c"]


def copy_example(tree) -> None:
    """The example's sources only: after `./bootstrap example` the checkout also holds its
    objects and binary, and a copy of those would leave make nothing to compile."""
    os.makedirs(tree)
    for name in EXAMPLE_SOURCES:
        shutil.copy(os.path.join(MULTISOURCE, name), os.path.join(tree, name))


def need(*programs):
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        reason = f"{', '.join(missing)} not installed (./bootstrap test installs them)"
        if in_ci():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


@pytest.fixture
def redis_url(tmp_path):
    need("redis-server")
    port = free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, server)
        yield f"redis://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def distcc_hosts(tmp_path):
    """Two distccd daemons on loopback ports: two build "hosts" on this machine."""
    need("distccd", "distcc")
    daemons, hosts = [], []
    try:
        for k in range(2):
            port = free_port()
            log = open(tmp_path / f"distccd{k}.log", "w")
            daemons.append((subprocess.Popen(
                ["distccd", "--no-detach", "--daemon", "--listen", "127.0.0.1", "--port", str(port),
                 "--allow", "127.0.0.1", "--jobs", "2", "--log-stderr", "--log-level", "info",
                 # the compiler whitelist is for daemons open to a network; this one is loopback-only
                 "--enable-tcp-insecure"], stdout=log, stderr=log), log, tmp_path / f"distccd{k}.log"))
            wait_for_port(port, daemons[-1][0])
            hosts.append(f"127.0.0.1:{port}/2")
        yield " ".join(hosts), [path for _proc, _log, path in daemons]
    finally:
        for proc, log, _path in daemons:
            proc.terminate()
            proc.wait(timeout=10)
            log.close()


def ccache_stats(ccache_dir) -> dict[str, int]:
    out = subprocess.run(["ccache", "--print-stats"], env=dict(os.environ, CCACHE_DIR=str(ccache_dir)),
                         capture_output=True, text=True, check=True).stdout
    stats = {}
    for line in out.splitlines():
        key, _, value = line.partition("\t")
        if value.strip().isdigit():
            stats[key] = int(value)
    return stats


def build_multisource(tree, env) -> str:
    copy_example(tree)
    run(["make", "-j2", "-C", str(tree), f"CC={ENZYME_CC}", "nbody"], env=env, timeout=900)
    assert is_fat_object(str(tree / "forces.o"))
    return run([str(tree / "nbody")], cwd=str(tree)).stdout


def test_ccache_remote_storage_shared_by_two_build_trees(tmp_path, redis_url):
    need("ccache")
    base = dict(os.environ, ENZYME_BUILD_LAUNCHER="ccache", CCACHE_BASEDIR=str(tmp_path),
                CCACHE_REMOTE_STORAGE=redis_url, CCACHE_SECONDARY_STORAGE=redis_url,
                CCACHE_NOHASHDIR="1", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    first = build_multisource(tmp_path / "a", dict(base, CCACHE_DIR=str(tmp_path / "cache-a")))
    second = build_multisource(tmp_path / "b", dict(base, CCACHE_DIR=str(tmp_path / "cache-b")))
    assert first == second and "ok" in first
    stats_a = ccache_stats(tmp_path / "cache-a")
    stats_b = ccache_stats(tmp_path / "cache-b")
    assert stats_a.get("cache_miss", 0) >= 4, stats_a     # the first tree compiled everything
    assert stats_b.get("remote_storage_hit", 0) >= 4, stats_b  # the second got it from redis
    # a cached object is a fat object all the same (bitcode, link guard), and links with AD
    assert is_fat_object(str(tmp_path / "b" / "main.o"))


def test_ccache_key_follows_enzyme_build(tmp_path):
    """The key file ccache hashes changes with enzyme-build's version and the settings that
    change objects; a plain object (ENZYME_BUILD_CONFIGURE_ONLY=1) is never served for a fat one."""
    need("ccache")
    from enzyme_build.frontend import launcher
    assert launcher.key_text("0.1.0") != launcher.key_text("0.2.0")
    env = dict(os.environ, ENZYME_BUILD_LAUNCHER="ccache", CCACHE_DIR=str(tmp_path / "cache"),
               XDG_CACHE_HOME=str(tmp_path / "xdg"))
    (tmp_path / "x.c").write_text("double x(double a) { return a * a; }\n")
    run([ENZYME_CC, "-O2", "-c", "x.c", "-o", "fat.o"], cwd=str(tmp_path), env=env)
    run([ENZYME_CC, "-O2", "-c", "x.c", "-o", "plain.o"], cwd=str(tmp_path),
        env=dict(env, ENZYME_BUILD_CONFIGURE_ONLY="1"))
    run([ENZYME_CC, "-O2", "-c", "x.c", "-o", "fat2.o"], cwd=str(tmp_path), env=env)
    assert is_fat_object(str(tmp_path / "fat.o")) and is_fat_object(str(tmp_path / "fat2.o"))
    assert not is_fat_object(str(tmp_path / "plain.o"))
    assert ccache_stats(tmp_path / "cache").get("direct_cache_hit", 0) >= 1
    keys = os.listdir(tmp_path / "xdg" / "enzyme-build" / "cache-keys")
    assert len(keys) == 1


AD_PROGRAM = """#include <stdio.h>
#include <enzyme/enzyme.h>
double f(double x) { return x * x * x; }
int main(void) { printf("%g\\n", __enzyme_autodiff((void *)f, 2.0)); return 0; }
"""


def test_ccache_caches_the_lean_compile_of_a_one_step_ad_build(tmp_path):
    """`cc prog.c -o prog` with AD compiles a lean object (docs/frontend.md). ccache reads a
    word starting with `-o` as the output option, so `-mllvm -optimize-regalloc=false` made
    the compile uncacheable: the option is spelled `--optimize-regalloc=false`."""
    need("ccache")
    env = dict(os.environ, ENZYME_BUILD_LAUNCHER="ccache", CCACHE_DIR=str(tmp_path / "cache"),
               XDG_CACHE_HOME=str(tmp_path / "xdg"))
    (tmp_path / "sq.c").write_text(AD_PROGRAM)
    for k in range(2):
        run([ENZYME_CC, "-O2", "sq.c", "-o", f"sq{k}"], cwd=str(tmp_path), env=env)
        assert run([str(tmp_path / f"sq{k}")]).stdout == "12\n"
    stats = ccache_stats(tmp_path / "cache")
    assert stats.get("preprocessor_error", 0) == 0 and stats.get("unsupported_compiler_option", 0) == 0, stats
    assert stats.get("cache_miss", 0) == 1 and stats.get("direct_cache_hit", 0) == 1, stats


def daemon_jobs(logs) -> list[int]:
    return [path.read_text(errors="replace").count("COMPILE_OK") for path in logs]


def test_distcc_builds_multisource_across_two_hosts(tmp_path, distcc_hosts):
    hosts, logs = distcc_hosts
    (tmp_path / "distcc").mkdir(exist_ok=True)
    env = dict(os.environ, ENZYME_BUILD_LAUNCHER="distcc", DISTCC_HOSTS=hosts, DISTCC_FALLBACK="0",
               DISTCC_DIR=str(tmp_path / "distcc"))
    output = build_multisource(tmp_path / "tree", env)
    assert "ok" in output
    assert sum(daemon_jobs(logs)) >= 4, daemon_jobs(logs)


def test_distcc_distributes_the_lean_compile_of_a_one_step_ad_build(tmp_path, distcc_hosts):
    """distcc took `-optimize-regalloc=false` for a second output and ran the compile locally."""
    hosts, logs = distcc_hosts
    (tmp_path / "distcc").mkdir(exist_ok=True)
    env = dict(os.environ, ENZYME_BUILD_LAUNCHER="distcc", DISTCC_HOSTS=hosts, DISTCC_FALLBACK="0",
               DISTCC_DIR=str(tmp_path / "distcc"))
    (tmp_path / "sq.c").write_text(AD_PROGRAM)
    before = sum(daemon_jobs(logs))
    run([ENZYME_CC, "-O2", "sq.c", "-o", "sq"], cwd=str(tmp_path), env=env)
    assert run([str(tmp_path / "sq")]).stdout == "12\n"
    assert sum(daemon_jobs(logs)) == before + 1, daemon_jobs(logs)


def test_distcc_builds_lua(tmp_path, distcc_hosts, lua_source_dir):
    hosts, logs = distcc_hosts
    (tmp_path / "distcc").mkdir(exist_ok=True)
    env = dict(os.environ, ENZYME_BUILD_LAUNCHER="distcc", DISTCC_HOSTS=hosts, DISTCC_FALLBACK="0",
               DISTCC_DIR=str(tmp_path / "distcc"))
    tree = tmp_path / "lua"
    shutil.copytree(lua_source_dir, tree)
    run(["make", "-j4", "-C", str(tree / "src"), "linux", f"CC={ENZYME_CC}"], env=env, timeout=900)
    assert is_fat_object(str(tree / "src" / "lvm.o"))
    out = run([str(tree / "src" / "lua"), "-e", "print(2^10, string.rep('ab', 3))"]).stdout
    assert out.strip() == "1024.0\tababab"
    jobs = daemon_jobs(logs)
    assert all(n >= 1 for n in jobs) and sum(jobs) >= 30, jobs  # both hosts compiled


def test_scons_route_with_launcher_and_shared_cache_dir(tmp_path):
    """`enzyme-build build` in two checkouts: compiles through ccache, objects shared
    through one --cache-dir (the second checkout compiles nothing)."""
    need("ccache")
    cache = tmp_path / "scons-cache"
    cache.mkdir(mode=0o700)
    env = dict(os.environ, ENZYME_BUILD_LAUNCHER="ccache", CCACHE_DIR=str(tmp_path / "ccache"),
               XDG_CACHE_HOME=str(tmp_path / "xdg"))
    outputs = []
    for name in ("one", "two"):
        tree = tmp_path / name
        copy_example(tree)
        sources = ["main.c", "forces.c", "integrate.c", "kernel_rules.c"]
        result = run([ENZYME_BUILD, "build", *sources, "-O2", "-l", "m", "-o", "nbody",
                      "--cache-dir", str(cache)], cwd=str(tree), env=env)
        outputs.append((result.stdout, run([str(tree / "nbody")], cwd=str(tree)).stdout))
    assert outputs[0][1] == outputs[1][1] and "ok" in outputs[0][1]
    assert "compiled 4 of 4" in outputs[0][0]
    assert "compiled 0 of 4" in outputs[1][0], outputs[1][0]
    assert all(f"from cache {source}" in outputs[1][0] for source in sources), outputs[1][0]
    assert ccache_stats(tmp_path / "ccache").get("cache_miss", 0) >= 4
