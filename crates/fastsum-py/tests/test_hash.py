"""hashlib-style objects against hashlib, blake3 and xxhash."""

import array
import hashlib
import io
import sys

import blake3 as blake3_ref
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

import fastsum

LENGTHS = [0, 1, 3, 55, 56, 63, 64, 65, 127, 128, 129, 1000, 4096, 100_003]


def data(n):
    return bytes((i * 131 + 7) % 251 for i in range(n))


def reference(name):
    """An independent implementation of `name`: a function bytes -> bytes."""
    table = {
        "md5": lambda b: hashlib.md5(b).digest(),
        "sha1": lambda b: hashlib.sha1(b).digest(),
        "sha224": lambda b: hashlib.sha224(b).digest(),
        "sha256": lambda b: hashlib.sha256(b).digest(),
        "sha384": lambda b: hashlib.sha384(b).digest(),
        "sha512": lambda b: hashlib.sha512(b).digest(),
        "blake2b": lambda b: hashlib.blake2b(b).digest(),
        "sha3_224": lambda b: hashlib.sha3_224(b).digest(),
        "sha3_256": lambda b: hashlib.sha3_256(b).digest(),
        "sha3_384": lambda b: hashlib.sha3_384(b).digest(),
        "sha3_512": lambda b: hashlib.sha3_512(b).digest(),
        "blake3": lambda b: blake3_ref.blake3(b).digest(),
        "xxh32": lambda b: xxhash.xxh32(b).digest(),
        "xxh64": lambda b: xxhash.xxh64(b).digest(),
        "xxh3": lambda b: xxhash.xxh3_64(b).digest(),
        "xxh128": lambda b: xxhash.xxh3_128(b).digest(),
    }
    if name == "sm3":
        try:
            hashlib.new("sm3")
        except ValueError:
            pytest.skip("this OpenSSL has no SM3")
        return lambda b: hashlib.new("sm3", b).digest()
    return table[name]


ALGORITHMS = ["md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "blake3",
              "xxh32", "xxh64", "xxh3", "xxh128", "sm3", "sha3_224", "sha3_256", "sha3_384",
              "sha3_512"]


@pytest.mark.parametrize("name", ALGORITHMS)
def test_every_algorithm_matches_its_reference(name):
    ref = reference(name)
    for n in LENGTHS:
        b = data(n)
        assert fastsum.new(name, b).digest() == ref(b), (name, n)
        assert getattr(fastsum, name)(b).hexdigest() == ref(b).hex(), (name, n)


@pytest.mark.parametrize("name", ["md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b"])
def test_attributes_are_hashlibs(name):
    ours, theirs = fastsum.new(name), hashlib.new(name)
    assert (ours.name, ours.digest_size, ours.block_size) == (
        theirs.name, theirs.digest_size, theirs.block_size)


def test_blake2b_digest_size_is_a_parameter_not_a_truncation():
    for size in (1, 20, 32, 64):
        b = data(300)
        assert fastsum.blake2b(b, digest_size=size).digest() == hashlib.blake2b(
            b, digest_size=size).digest()
    with pytest.raises(ValueError):
        fastsum.blake2b(digest_size=65)


def test_copy_is_independent_and_digest_does_not_end_the_hash():
    h = fastsum.sha256(b"ab")
    c = h.copy()
    assert h.digest() == hashlib.sha256(b"ab").digest()
    h.update(b"c")
    assert h.hexdigest() == hashlib.sha256(b"abc").hexdigest()
    assert c.hexdigest() == hashlib.sha256(b"ab").hexdigest()


def test_any_contiguous_buffer_is_accepted():
    b = data(5000)
    want = hashlib.md5(b).hexdigest()
    for view in (bytearray(b), memoryview(b), memoryview(b)[0:], array.array("B", b)):
        assert fastsum.md5(view).hexdigest() == want
    ints = array.array("I", range(1000))
    assert fastsum.sha1(ints).digest() == hashlib.sha1(ints).digest()
    np = pytest.importorskip("numpy")
    floats = np.arange(10_000, dtype=np.float64)
    assert fastsum.blake3(floats).digest() == blake3_ref.blake3(floats.tobytes()).digest()
    # A strided view: whatever hashlib raises (numpy says ValueError).
    with pytest.raises(Exception) as theirs:
        hashlib.md5(floats[::2])
    with pytest.raises(theirs.type, match="contiguous"):
        fastsum.md5(floats[::2])


def test_bad_input_raises_what_hashlib_raises():
    with pytest.raises(TypeError, match="Strings must be encoded"):
        fastsum.md5("text")
    with pytest.raises(TypeError):
        fastsum.md5(12)
    with pytest.raises(ValueError, match="sha256"):
        fastsum.new("sha3-999")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="hashlib.file_digest is 3.11+")
def test_hashlib_file_digest_takes_our_constructors():
    b = data(1_000_000)
    for name in ("md5", "sha256", "blake3"):
        got = hashlib.file_digest(io.BytesIO(b), getattr(fastsum, name)).digest()
        assert got == reference(name)(b)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=20_000), st.lists(st.integers(0, 20_000), max_size=8),
       st.sampled_from([a for a in ALGORITHMS if a != "sm3"]))
def test_update_in_pieces_equals_one_shot(b, cuts, name):
    h = fastsum.new(name)
    at = 0
    for cut in sorted(c % (len(b) + 1) for c in cuts):
        h.update(b[at:cut])
        at = cut
    h.update(b[at:])
    assert h.digest() == reference(name)(b)


def test_the_old_checksums_match_coreutils(tmp_path):
    """crc, bsd and sysv digests are the checksum then the 8-byte size."""
    import shutil
    import subprocess
    for n in (0, 1, 1000, 100_003):
        b = data(n)
        f = tmp_path / f"f{n}"
        f.write_bytes(b)
        crc, size = subprocess.run([shutil.which("cksum"), f], capture_output=True,
                                   check=True).stdout.split()[:2]
        d = fastsum.new("crc", b).digest()
        assert (int.from_bytes(d[:4], "big"), int.from_bytes(d[4:], "big")) == (int(crc), int(size))
        bsd = subprocess.run(["sum", "-r", f], capture_output=True, check=True).stdout.split()[0]
        sysv = subprocess.run(["sum", "-s", f], capture_output=True, check=True).stdout.split()[0]
        assert int.from_bytes(fastsum.new("bsd", b).digest()[:2], "big") == int(bsd)
        assert int.from_bytes(fastsum.new("sysv", b).digest()[:2], "big") == int(sysv)
        assert fastsum.new("crc", b).block_size == 1
