"""`fastsum.contained(src, "s3://bucket/prefix")`, against the
small S3 endpoint of scripts/tests (s3_fake.py, plain HTTP on 127.0.0.1):
the answers computed here from the bytes of both sides, and S3's rule
held (every digest S3 gives of an object must agree)."""

import os
import random
import sys

import pytest

import fastsum

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "tests"))
from s3_fake import Fake, Obj, b64  # noqa: E402
from s3_lies import COLLISION_A, COLLISION_B, crc64nvme  # noqa: E402


@pytest.fixture
def s3(monkeypatch):
    fake = Fake()
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "SKTEST123")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:%d" % fake.port)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    yield fake
    fake.stop()


def write(root, rel, content):
    path = os.path.join(os.fsencode(root), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content)


def test_contained_in_a_bucket_matches_the_bytes(s3, tmp_path):
    rng = random.Random(6565)
    src = tmp_path / "src"
    objects, want = {}, {}
    for i in range(24):
        blob = rng.randbytes(rng.choice([1, 100, 4096, 9000, 70000]))
        write(src, b"d%d/f%d" % (i % 3, i), blob)
        path = os.path.join(os.fsencode(src), b"d%d/f%d" % (i % 3, i))
        kind = i % 6
        if kind == 0:  # a copy under another key and depth
            objects[b"p/x/y/copy-%d" % i] = Obj(blob)
        elif kind == 1:  # first byte differs
            objects[b"p/first-%d" % i] = Obj(bytes([blob[0] ^ 1]) + blob[1:])
        elif kind == 2:  # last byte differs
            objects[b"p/last-%d" % i] = Obj(blob[:-1] + bytes([blob[-1] ^ 1]))
        elif kind == 3 and len(blob) >= 3:  # multipart, its part sizes given
            objects[b"p/mp-%d" % i] = Obj(blob, parts=[len(blob) // 3, len(blob) // 3,
                                                      len(blob) - 2 * (len(blob) // 3)])
        elif kind == 4:  # the same bytes beside the prefix: not in the archive
            objects[b"p-other/%d" % i] = Obj(blob)
        held = any(o.data == blob for k, o in objects.items() if k.startswith(b"p/"))
        want[path] = held
    # An MD5 collision beside S3's CRC-64/NVME of the other block.
    write(src, b"coll", COLLISION_B)
    objects[b"p/coll"] = Obj(COLLISION_A, {"x-amz-checksum-crc64nvme": b64(crc64nvme(COLLISION_A)),
                                           "x-amz-checksum-type": "FULL_OBJECT"})
    want[os.path.join(os.fsencode(src), b"coll")] = False
    write(src, b"empty", b"")
    objects[b"p/e"] = Obj(b"")
    want[os.path.join(os.fsencode(src), b"empty")] = True
    s3.objects = objects
    got = {}
    for v in fastsum.contained(os.fsencode(src), "s3://b/p"):
        assert v.kind in ("contained", "missing"), (v.path, v.kind, v.error)
        got[v.path] = v.contained
        if v.contained:
            key = v.copy[len(b"s3://b/"):] if isinstance(v.copy, bytes) else \
                os.fsencode(v.copy)[len(b"s3://b/"):]
            assert objects[key].data == open(v.path, "rb").read()
    assert got == want
    assert any(want.values()) and not all(want.values())


def test_an_object_s3_keeps_no_digest_of_is_a_problem_or_downloaded(s3, tmp_path):
    src = tmp_path / "src"
    write(src, b"secret", b"kms bytes\n")
    write(src, b"other", b"kms bytex\n")
    s3.objects = {b"p/k": Obj(b"kms bytes\n", {"x-amz-server-side-encryption": "aws:kms"},
                              etag="0" * 32)}
    kinds = {os.path.basename(v.path): v.kind for v in
             fastsum.contained(os.fsencode(src), "s3://b/p")}
    # Neither is known: S3 gives no digest of the one object of their size.
    assert kinds == {b"secret": "problem", b"other": "problem"}
    got = {os.path.basename(v.path): v.contained for v in
           fastsum.contained(os.fsencode(src), "s3://b/p", download=True)}
    assert got == {b"secret": True, b"other": False}
