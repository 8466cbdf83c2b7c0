"""Crafted inputs for the security tests: damaged archives and fat objects."""
from __future__ import annotations

import os
import random


def ar_header(name: str, size: str | int) -> bytes:
    """One 60-byte `ar` member header (the size field taken as given, even if nonsense)."""
    fields = (name.ljust(16) + "0".ljust(12) + "0".ljust(6) + "0".ljust(6) + "644".ljust(8)
              + str(size).ljust(10))
    return fields.encode("latin-1") + b"`\n"


def archive(members: list[tuple[str, bytes]], *, thin: bool = False) -> bytes:
    """A GNU archive; names longer than 15 bytes or holding a `/` go to the `//` table."""
    out = b"!<thin>\n" if thin else b"!<arch>\n"
    table = b""
    headers = []
    for name, data in members:
        if len(name) > 15 or "/" in name.rstrip("/"):
            headers.append(f"/{len(table)}")
            table += name.rstrip("/").encode("latin-1") + b"/\n"
        else:
            headers.append(name)
    if table:
        out += ar_header("//", len(table)) + table + (b"\n" if len(table) & 1 else b"")
    for header, (_name, data) in zip(headers, members):
        out += ar_header(header, len(data))
        if not thin:
            out += data + (b"\n" if len(data) & 1 else b"")
    return out


def crafted_archives(directory: str, member: bytes) -> dict[str, str]:
    """name -> path of each damaged archive; `member` is a real object to put inside."""
    files = {
        # a negative size once moved the reader backwards forever
        "negative-size": b"!<arch>\n" + ar_header("a.o/", -120) + member,
        # a size past the end of the file
        "size-past-end": b"!<arch>\n" + ar_header("a.o/", len(member) + 4096) + member,
        # a size that is not a number
        "size-not-a-number": b"!<arch>\n" + ar_header("a.o/", "12x4") + member,
        # a BSD long name whose length is not a number
        "bsd-name-not-a-number": b"!<arch>\n" + ar_header("#1/xyz", len(member)) + member,
        # a GNU long-name reference outside the name table
        "long-name-outside-table": b"!<arch>\n" + ar_header("/999", len(member)) + member,
        # a header that does not end in "`\n"
        "bad-header-end": b"!<arch>\n" + ar_header("a.o/", len(member))[:58] + b"XX" + member,
        # a thin archive naming a device: reading it would never end
        "thin-dev-zero": archive([("/dev/zero/", b"")], thin=True),
        # a thin archive naming itself
        "thin-self": None,
        # a member name that is a path: once used as the name of a file we wrote
        "member-name-with-slash": archive([("../x/evil.o/", member)]),
    }
    paths = {}
    for name, data in files.items():
        path = os.path.join(directory, f"lib{name}.a")
        if data is None:  # the thin archive that names its own file
            base = os.path.basename(path)
            data = b"!<thin>\n" + ar_header(base + "/", 1000)
        with open(path, "wb") as fh:
            fh.write(data)
        paths[name] = path
    return paths


def bitcode_span(obj: bytes) -> tuple[int, int]:
    """(offset, size) of the embedded bitcode section of a fat object."""
    from enzyme_build.link import objfile

    for name, _type, offset, size, _link in objfile._elf_sections(obj) or ():  # noqa: SLF001
        if name in (objfile.BITCODE_SECTION, objfile.CLANG_BITCODE_SECTION):
            return offset, size
    raise AssertionError("no embedded bitcode section")


def mutated_objects(obj: bytes, count: int, seed: int = 0) -> list[bytes]:
    """`count` copies of a fat object, each with 1-4 random bytes of its bitcode changed."""
    offset, size = bitcode_span(obj)
    out = []
    for k in range(count):
        rng = random.Random(seed * 100003 + k)
        data = bytearray(obj)
        for _ in range(rng.randint(1, 4)):
            data[offset + rng.randrange(size)] = rng.randrange(256)
        out.append(bytes(data))
    return out
