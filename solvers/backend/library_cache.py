"""What the host backend's kernel cache loads is what it wrote: each library NAME.so has a
record NAME.so.sha256 ("<size> <sha256 hex>") next to it, and a library is used only if it
starts with the ELF magic and matches its record's size and hash (the cuda backend keeps the
PTX of its graph-loop kernel the same way, without the magic). Loading a truncated library
does not fail cleanly: its mapped pages end early and the first call into them dies of a bus
error, so a damaged or half-written entry (a full disk, a copy cut short, a crash) must be
found before dlopen and rebuilt.

Both files are written under temporary names in the cache folder and renamed into place, the
library first: a reader that finds a library and a record that do not match (another process
between its two renames) rebuilds, which is safe, only wasted work.
"""

import hashlib
import os
from pathlib import Path

ELF_MAGIC = b"\x7fELF"
_CHUNK = 1 << 20


def record_path(library):
    library = Path(library)
    return library.with_name(library.name + ".sha256")


def _digest(path):
    sha = hashlib.sha256()
    with open(path, "rb") as file:
        for chunk in iter(lambda: file.read(_CHUNK), b""):
            sha.update(chunk)
    return sha.hexdigest()


def verified(library, magic=ELF_MAGIC):
    """Whether the cached file exists, starts with `magic` (the ELF magic; None: anything),
    and has the size and SHA-256 its record gives."""
    library = Path(library)
    try:
        size, digest = record_path(library).read_text().split()
        with open(library, "rb") as file:
            if magic and file.read(len(magic)) != magic:
                return False
        return library.stat().st_size == int(size) and _digest(library) == digest
    except (OSError, ValueError):
        return False


def install(built, library, magic=ELF_MAGIC):
    """Move the freshly built file `built` (in the cache folder) to `library`, with its
    record; each rename is atomic."""
    built, library = Path(built), Path(library)
    if magic and built.read_bytes()[:len(magic)] != magic:
        raise OSError(f"{built}: the compiler's output is not an ELF library")
    record = f"{built.stat().st_size} {_digest(built)}\n"
    temporary = built.with_name(built.name + ".sha256")
    temporary.write_text(record)
    os.replace(built, library)
    os.replace(temporary, record_path(library))
