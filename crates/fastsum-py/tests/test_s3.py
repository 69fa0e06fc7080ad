"""The digests S3 keeps against independent code: awscrt's
CRC-32C and CRC-64/NVME (the AWS SDKs' own), zlib's CRC-32, hashlib's MD5,
SHA-1, SHA-256 and SHA-512 and the xxhash package's XXH64, XXH3 and XXH128
(S3's XXHASH64, XXHASH3, XXHASH128) for the multipart ETag and the
composite checksums."""

import base64
import hashlib
import zlib

import pytest
import xxhash
from awscrt import checksums

import fastsum

WHOLE = {
    "crc32": lambda d: zlib.crc32(d).to_bytes(4, "big"),
    "crc32c": lambda d: checksums.crc32c(d).to_bytes(4, "big"),
    "crc64nvme": lambda d: checksums.crc64nvme(d).to_bytes(8, "big"),
}
PARTS = {
    "s3etag": lambda d: hashlib.md5(d).digest(),
    "md5": lambda d: hashlib.md5(d).digest(),
    "crc32": WHOLE["crc32"],
    "crc32c": WHOLE["crc32c"],
    "sha1": lambda d: hashlib.sha1(d).digest(),
    "sha256": lambda d: hashlib.sha256(d).digest(),
    "sha512": lambda d: hashlib.sha512(d).digest(),
    "xxh64": lambda d: xxhash.xxh64(d).digest(),
    "xxh3": lambda d: xxhash.xxh3_64(d).digest(),
    "xxh128": lambda d: xxhash.xxh3_128(d).digest(),
}


def in_parts(h, data, size):
    parts = [data[i:i + size] for i in range(0, len(data), size)] or [b""]
    if len(parts) == 1:
        return h(data).hex()
    return "%s-%d" % (h(b"".join(h(p) for p in parts)).hex(), len(parts))


def sizes(part):
    return sorted({0, 1, part - 1, part, part + 1, 2 * part, 2 * part + 1, 3 * part + 7})


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_whole_crcs_equal_awscrt_and_zlib(tmp_path, name):
    data = bytes(range(256)) * 300 + b"tail"
    for n in [0, 1, 9, 4095, len(data)]:
        path = tmp_path / ("f%d" % n)
        path.write_bytes(data[:n])
        assert fastsum.hash_file(path, name) == WHOLE[name](data[:n]).hex()
        h = fastsum.new(name, data[:n])
        assert base64.b64encode(h.digest()).decode() == base64.b64encode(WHOLE[name](data[:n])).decode()
    assert fastsum.new("crc32c", b"123456789").hexdigest() == "e3069283"
    assert fastsum.new("crc64nvme", b"123456789").hexdigest() == "ae8b14860a799888"


@pytest.mark.parametrize("part", [1024, 5000, 65536])
@pytest.mark.parametrize("name", sorted(PARTS))
def test_parts_equal_hashlib_at_every_boundary(tmp_path, name, part):
    rng = __import__("random").Random(part)
    files = {}
    for n in sizes(part):
        data = rng.randbytes(n)
        path = tmp_path / ("f%d" % n)
        path.write_bytes(data)
        files[str(path)] = data
        want = in_parts(PARTS[name], data, part)
        assert fastsum.hash_file(path, name, part_size=part) == want, n
        assert fastsum.hash_file(path, "%s/%d" % (name, part)) == want, n
    results = fastsum.hash_files(list(files), name, part_size=part)
    assert [r.digest for r in results] == [in_parts(PARTS[name], d, part) for d in files.values()]
    walked = {r.path: r.digest for r in fastsum.hash_tree(tmp_path, name, part_size=part)}
    assert walked == {p: in_parts(PARTS[name], d, part) for p, d in files.items()}


def test_part_sizes_refused_where_s3_has_no_parts(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x")
    for name, size in [("crc64nvme", 8 << 20), ("blake3", 8 << 20), ("md5", 0)]:
        with pytest.raises(ValueError, match="part"):
            fastsum.hash_file(path, name, part_size=size)
    # The default part size of s3etag is 8 MiB, as aws s3 cp's.
    assert fastsum.hash_file(path, "s3etag") == hashlib.md5(b"x").hexdigest()
