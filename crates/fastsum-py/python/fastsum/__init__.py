"""fastsum: fast file checksums for Python.

hashlib-compatible hash objects (``fastsum.md5()``, ``fastsum.new("sha256")``,
``hashlib.file_digest(f, fastsum.blake3)``), and files, lists of files and
whole trees hashed on every core with the GIL released: ``hash_file``,
``hash_files``, ``hash_tree``; manifests checked with ``check``; what changed
with ``diff``; identical files with ``dupes``.
"""

from ._fastsum import (
    Change,
    CheckResult,
    Dupes,
    FileResult,
    Group,
    Hash,
    __version__,
    algorithms_available,
    blake2b,
    blake3,
    check,
    diff,
    dupes,
    hash_file,
    hash_files,
    hash_tree,
    md5,
    new,
    sha1,
    sha224,
    sha256,
    sha384,
    sha512,
    sm3,
    xxh3,
    xxh32,
    xxh64,
    xxh128,
)

algorithms_guaranteed = algorithms_available

__all__ = [
    "Change",
    "CheckResult",
    "Dupes",
    "FileResult",
    "Group",
    "Hash",
    "__version__",
    "algorithms_available",
    "algorithms_guaranteed",
    "blake2b",
    "blake3",
    "check",
    "diff",
    "dupes",
    "hash_file",
    "hash_files",
    "hash_tree",
    "md5",
    "new",
    "sha1",
    "sha224",
    "sha256",
    "sha384",
    "sha512",
    "sm3",
    "xxh3",
    "xxh32",
    "xxh64",
    "xxh128",
]
