"""The object and archive readers on random damage: never an exception but MalformedArchive.

These readers run on every AD link over inputs anyone may have made; an unexpected
exception there is an internal error for the user (seen: struct.error and OverflowError
from a section table pointing past the end of the file).
"""
from __future__ import annotations

import random
import shutil
import signal
import subprocess

import pytest

from enzyme_build.link import objfile
from security_helpers import write

READERS = (objfile.embedded_bitcode, objfile.undefined_symbols, objfile.dynamic_symbols,
           objfile.mentions_enzyme, objfile.split_bitcode_modules)


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """A fat object and an archive (with a long member name) made by the real tools."""
    directory = tmp_path_factory.mktemp("readers")
    write(directory, "f.c", "double __enzyme_autodiff(void *, ...);\n"
          "double sq(double x) { return x * x; }\n"
          "double g(void) { return __enzyme_autodiff((void *)sq, 3.0); }\n")
    write(directory, "a_member_with_a_long_name.c", "int long_named(void) { return 1; }\n")
    from security_helpers import ENZYME_CC
    subprocess.run([ENZYME_CC, "-c", "f.c", "a_member_with_a_long_name.c"], cwd=directory, check=True)
    ar = shutil.which("llvm-ar-22") or "ar"
    subprocess.run([ar, "rcs", "libs.a", "f.o", "a_member_with_a_long_name.o"], cwd=directory,
                   check=True)
    return (directory / "f.o").read_bytes(), (directory / "libs.a").read_bytes()


def damaged(data: bytes, rng: random.Random, *, head: int) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.4:
            pos = rng.randrange(min(head, len(buf)))
        elif roll < 0.8:
            pos = len(buf) - rng.randrange(1, min(len(buf), 64 * 20))
        else:
            pos = rng.randrange(len(buf))
        special = rng.choice([ord("-"), ord("/"), ord("#"), ord("9"), 0xB2, 0xFF])
        buf[pos] = rng.randrange(256) if rng.random() < 0.7 else special
    if rng.random() < 0.1:
        del buf[rng.randrange(len(buf)):]
    return bytes(buf)


def test_elf_readers_survive_damage(samples):
    obj, _archive = samples
    for seed in range(5000):
        data = damaged(obj, random.Random(seed), head=64)
        for reader in READERS:
            reader(data)


@pytest.fixture
def time_limit():
    """Fail (instead of hanging) when a reader loops: a negative member size once did."""
    def expired(_signum, _frame):
        raise TimeoutError("a reader did not finish within 60 s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_archive_reader_raises_only_malformed_archive(samples, tmp_path, time_limit):
    _obj, archive = samples
    assert [m.name for m in objfile.archive_members(archive)] == ["f.o", "a_member_with_a_long_name.o"]
    for seed in range(3000):
        data = damaged(archive, random.Random(seed), head=400)
        try:
            for member in objfile.archive_members(data, str(tmp_path / "libs.a")):
                objfile.mentions_enzyme(member.data)
        except objfile.MalformedArchive:
            pass


def test_devices_and_fifos_are_not_read(tmp_path, time_limit):
    """Opening a FIFO once waited for a writer; /dev/zero (named by a thin archive) was
    read until memory ran out. Both, and a directory, are refused at once."""
    import os
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (str(fifo), "/dev/null", str(tmp_path)):
        with pytest.raises(OSError):
            objfile.read_file(path)
