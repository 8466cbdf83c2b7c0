"""Reading fat objects without spawning tools: ELF sections, ELF undefined symbols, ar members.

Spawning llvm-objcopy per object would dominate link time for big archives; the formats
are simple enough to read directly. Anything we cannot read counts as "no bitcode".

clang embeds the bitcode in a section named `.llvmbc`. LLVM-based tools (the gold plugin
that GNU ar/nm/ld load from /usr/lib/bfd-plugins, llvm-ar, llvm-nm) take an ELF file
with that section for an IR file and index the bitcode's symbols instead of the native
ones, or nothing at all when the plugin's LLVM is older. So right after each compile we
rename the section to `.enzbc` (in place: the name is shorter), and fat objects behave
like plain objects for every system tool.
"""
from __future__ import annotations

import os
import struct
from collections import namedtuple

BITCODE_SECTION = ".enzbc"
CLANG_BITCODE_SECTION = ".llvmbc"
ENZYME_MARKER = b"__enzyme_"

_SHT_SYMTAB = 2
_SHT_DYNSYM = 11
_SHN_UNDEF = 0
_STB_GLOBAL, _STB_WEAK = 1, 2


# A namedtuple, not a dataclass: `-c` compiles import this module (for the section
# rename) and importing dataclasses costs several milliseconds of start-up.
Member = namedtuple("Member", "name data")
Member.__doc__ = "One archive member: its name and contents."


def _elf_sections(data: bytes) -> list[tuple[str, int, int, int, int]] | None:
    """(name, type, offset, size, link) of every section of a 64-bit little-endian ELF."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shoff == 0 or shentsize < 64 or shoff + shnum * shentsize > len(data):
        return None
    headers = []
    for k in range(shnum):
        name, stype, _flags, _addr, off, size, link = struct.unpack_from(
            "<IIQQQQI", data, shoff + k * shentsize)
        # a section reaching past the end of the file is read as far as the file goes
        # (the linker warns and goes on; we must not index outside the data)
        off = min(off, len(data))
        size = min(size, len(data) - off)
        headers.append((name, stype, off, size, link))
    if shstrndx >= len(headers):
        return None
    str_off = headers[shstrndx][2]
    out = []
    for name, stype, off, size, link in headers:
        end = data.find(b"\0", str_off + name)
        out.append((data[str_off + name:end].decode("latin-1"), stype, off, size, link))
    return out


def elf_section(data: bytes, section: str) -> bytes | None:
    """Contents of the named section, or None (not ELF, or no such section)."""
    for name, stype, off, size, _link in _elf_sections(data) or ():
        if name == section and stype != 8:  # 8 = SHT_NOBITS
            return data[off:off + size]
    return None


def embedded_bitcode(data: bytes) -> bytes | None:
    """The bitcode a fat object carries (ours, or plain clang -fembed-bitcode), or None.

    An object that is bitcode itself (`-flto`/`-flto=thin`, which compile steps leave to
    clang) is its own bitcode: the whole-program link reads it like an embedded section.
    """
    if data[:4] == b"BC\xc0\xde":
        return data
    for name in (BITCODE_SECTION, CLANG_BITCODE_SECTION):
        section = elf_section(data, name)
        if section:
            return section
    return None


BITCODE_MAGIC = b"BC\xc0\xde"


def split_bitcode_modules(data: bytes) -> list[bytes]:
    """The bitcode modules in a section: one, or several after a relocatable link (`ld -r`
    concatenates the sections of its inputs).

    Walks the top-level blocks: each starts with a 32-bit header word (abbrev id 1 =
    ENTER_SUBBLOCK, block id, abbrev width, aligned) and a 32-bit length in words.
    """
    modules = []
    start, pos = 0, len(BITCODE_MAGIC)
    if not data.startswith(BITCODE_MAGIC):
        return [data]
    while pos + 8 <= len(data):
        if data[pos:pos + 4] == BITCODE_MAGIC:
            modules.append(data[start:pos])
            start, pos = pos, pos + 4
            continue
        header = struct.unpack_from("<I", data, pos)[0]
        if header & 3 != 1:
            break  # not a block: stop splitting, hand the rest to LLVM as one piece
        pos += 8 + 4 * struct.unpack_from("<I", data, pos + 4)[0]
    modules.append(data[start:])
    return [m for m in modules if m]


def rename_bitcode_section(path: str) -> bool:
    """Rename a fresh object's `.llvmbc` section to `.enzbc` in place (see module doc)."""
    try:
        with open(path, "r+b") as fh:
            data = fh.read()
            spot = _section_name_offset(data, CLANG_BITCODE_SECTION)
            if spot is None:
                return False
            new = BITCODE_SECTION.encode().ljust(len(CLANG_BITCODE_SECTION) + 1, b"\0")
            fh.seek(spot)
            fh.write(new)
        return True
    except OSError:
        return False


def _section_name_offset(data: bytes, section: str) -> int | None:
    """File offset of a section's name in .shstrtab, if no other section shares the bytes."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shoff == 0 or shentsize < 64 or shstrndx >= shnum or shoff + shnum * shentsize > len(data):
        return None
    names = [struct.unpack_from("<I", data, shoff + k * shentsize)[0] for k in range(shnum)]
    str_off = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 24)[0]
    want = section.encode() + b"\0"
    hits = [n for n in names if data[str_off + n:str_off + n + len(want)] == want]
    if len(hits) != 1:
        return None
    start = hits[0]
    if any(start < n < start + len(want) for n in names):
        return None  # another name is a suffix stored inside ours: leave the file alone
    return str_off + start


def _global_symbols(data: bytes, table_type: int):
    """(name, defined?) of every global or weak symbol in the ELF symbol tables of a type."""
    sections = _elf_sections(data) or []
    for _name, stype, off, size, link in sections:
        if stype != table_type or link >= len(sections):
            continue
        str_off = sections[link][2]
        for pos in range(off, off + size - 23, 24):
            st_name, st_info, _other, st_shndx = struct.unpack_from("<IBBH", data, pos)
            if st_name and (st_info >> 4) in (_STB_GLOBAL, _STB_WEAK):
                end = data.find(b"\0", str_off + st_name)
                yield data[str_off + st_name:end].decode("latin-1"), st_shndx != _SHN_UNDEF


def undefined_symbols(data: bytes) -> set[str]:
    """Global/weak symbols a native ELF object references but does not define."""
    return {name for name, defined in _global_symbols(data, _SHT_SYMTAB) if not defined}


def dynamic_symbols(data: bytes) -> set[str]:
    """Names in a shared library's dynamic symbol table, defined or not.

    An executable exports its definitions of these names (the library calls back into
    them, or they interpose on the library's own), so they must survive internalization.
    """
    return {name for name, _defined in _global_symbols(data, _SHT_DYNSYM)}


def defined_dynamic_symbols(data: bytes) -> set[str]:
    """Names a shared library defines (exports) in its dynamic symbol table."""
    return {name for name, defined in _global_symbols(data, _SHT_DYNSYM) if defined}


def is_archive(data: bytes) -> bool:
    return data[:8] in (b"!<arch>\n", b"!<thin>\n")


class MalformedArchive(ValueError):
    """An archive whose structure no linker would accept (the link stops with our message)."""


def malformed_archive(path: str, err: MalformedArchive):
    """The user's error for an archive the reader rejected."""
    from ..errors import EnzymeBuildError
    return EnzymeBuildError(f"malformed archive {path}: {err}",
                            hint="recreate it with ar or llvm-ar (a linker rejects it too)")


# A member header's size field: up to ten decimal digits, space padded.
_AR_HEADER_END = b"`\n"


def archive_members(data: bytes, archive_path: str = ".") -> list[Member]:
    """Members of a GNU/BSD `ar` archive, in order (symbol tables left out).

    Members of a thin archive (`ar rcsT`) are read from their files, which the archive
    names relative to its own directory: regular files only, and never an archive (no
    nesting, so an archive naming itself cannot loop). Sizes and names are validated
    against the data; anything inconsistent raises MalformedArchive.
    """
    if not is_archive(data):
        return []
    thin = data[:8] == b"!<thin>\n"
    members: list[Member] = []
    long_names = b""
    pos = 8
    while pos < len(data):
        if data[pos:pos + 1] == b"\n" and pos + 1 == len(data):
            break  # padding after the last member
        if pos + 60 > len(data):
            raise MalformedArchive(f"truncated member header at offset {pos}")
        header = data[pos:pos + 60]
        if header[58:60] != _AR_HEADER_END:
            raise MalformedArchive(f"bad member header at offset {pos}")
        raw_name = header[:16].decode("latin-1").rstrip()
        size = _decimal(header[48:58], f"member size at offset {pos}")
        special = raw_name in ("/", "//", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED")
        stored = size if (special or not thin) else 0  # thin members live in their own files
        if pos + 60 + stored > len(data):
            raise MalformedArchive(f"member at offset {pos} claims {size} bytes past the end")
        body = data[pos + 60:pos + 60 + stored]
        pos += 60 + stored + (stored & 1)
        if raw_name == "//":
            long_names = body
            continue
        if special:
            continue
        if raw_name.startswith("#1/"):  # BSD: name stored at the start of the body
            length = _decimal(raw_name[3:].encode("latin-1"), f"BSD name length {raw_name!r}")
            if length > len(body):
                raise MalformedArchive(f"BSD name {raw_name!r} longer than its member")
            name = body[:length].rstrip(b"\0").decode("latin-1")
            body = body[length:]
        elif raw_name.startswith("/") and raw_name[1:].isascii() and raw_name[1:].isdigit():
            start = int(raw_name[1:])
            if start >= len(long_names):
                raise MalformedArchive(f"long name {raw_name!r} outside the name table")
            end = long_names.find(b"\n", start)
            name = long_names[start:end if end >= 0 else None].decode("latin-1").rstrip("/")
        else:
            name = raw_name.rstrip("/")
        if not name:
            raise MalformedArchive(f"member without a name at offset {pos}")
        if thin:
            body = _thin_member(os.path.join(os.path.dirname(archive_path), name), name)
        members.append(Member(name, body))
    return members


def _decimal(field: bytes, what: str) -> int:
    text = field.decode("latin-1").strip()
    if not text.isdigit() or not text.isascii():
        raise MalformedArchive(f"{what} is not a size: {text!r}")
    return int(text)


def _thin_member(path: str, name: str) -> bytes:
    """A thin archive's member: a regular file. One that is itself an archive is left to
    the linker (read as no bitcode): following it could lead back to this archive."""
    try:
        data = read_file(path)
    except OSError as err:
        raise MalformedArchive(f"member {name!r} cannot be read: {err.strerror or err}") from err
    return b"" if is_archive(data) else data


def is_shared_object_path(path: str) -> bool:
    base = os.path.basename(path)
    return base.endswith((".so", ".dylib")) or ".so." in base


def read_file(path: str) -> bytes:
    """A regular file's contents. Devices, FIFOs and directories raise OSError: an input
    named `/dev/zero` (directly or by a thin archive) must not be read until memory runs out."""
    import stat
    # O_NONBLOCK: opening a FIFO must not wait for a writer (no effect on regular files)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return fh.read()


def mentions_enzyme(data: bytes, path: str = ".") -> bool:
    """Does any bitcode in this object or archive mention an __enzyme_ symbol?

    A whole-file byte search first (cheap, usually decides), then the real check inside
    the embedded bitcode sections.
    """
    if data[:8] == b"!<thin>\n":
        return any(mentions_enzyme(m.data) for m in archive_members(data, path) if m.data)
    if ENZYME_MARKER not in data:
        return False
    if is_archive(data):
        return any(mentions_enzyme(m.data) for m in archive_members(data) if not is_archive(m.data))
    bitcode = embedded_bitcode(data)
    return bitcode is not None and ENZYME_MARKER in bitcode


def library_search_dirs(user_dirs: list[str]) -> list[str]:
    """Where `-l` looks: the -L dirs in order (CommandLine.search_dirs), then LIBRARY_PATH,
    then the usual system dirs.

    Only used to spot fat archives among -l libraries; the trial link does the real search.
    """
    dirs = list(user_dirs)
    dirs += [d for d in os.environ.get("LIBRARY_PATH", "").split(os.pathsep) if d]
    machine = os.uname().machine
    dirs += ["/usr/local/lib", f"/usr/local/lib/{machine}-linux-gnu", f"/usr/lib/{machine}-linux-gnu",
             f"/lib/{machine}-linux-gnu", "/usr/lib64", "/usr/lib", "/lib"]
    return dirs


def find_library(name: str, search_dirs: list[str], *, static_only: bool) -> str | None:
    """Where the linker would find `-l<name>` in search_dirs (None: not there)."""
    if name.startswith(":"):
        candidates = [name[1:]]
    else:
        candidates = ([] if static_only else [f"lib{name}.so"]) + [f"lib{name}.a"]
    for directory in search_dirs:
        for candidate in candidates:
            path = os.path.join(directory, candidate)
            if os.path.isfile(path):
                return path
    return None
