"""`fastsum.diff("s3://bucket/prefix", dir)` and the other order,
against the small S3 endpoint of scripts/tests (s3_fake.py: plain
HTTP on 127.0.0.1, objects as the test sets them); the expected changes
computed here from the bytes of both sides."""

import os
import sys

import pytest

import fastsum

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "tests"))
from s3_fake import Fake, Obj  # noqa: E402


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


def expected(old, new):
    out = set()
    for k in old.keys() | new.keys():
        if k not in new:
            out.add(("removed", k))
        elif k not in old:
            out.add(("added", k))
        elif old[k] != new[k]:
            out.add(("modified", k))
    return out


def test_diff_of_a_bucket_and_a_tree_both_ways(s3, tmp_path):
    bucket = {"a": b"same", "d/b": b"old!", "gone": b"x" * 3000, "kms": b"secret",
              "mp": bytes(range(256)) * 12}
    tree = dict(bucket, **{"d/b": b"new!", "added\nname": b"brand new"})
    del tree["gone"]
    s3.objects = {("p/" + k).encode(): Obj(v) for k, v in bucket.items()}
    s3.objects[b"p/kms"] = Obj(b"secret", {"x-amz-server-side-encryption": "aws:kms"},
                               etag="0" * 32)
    s3.objects[b"p/mp"] = Obj(bucket["mp"], parts=[1024, 1024, 1024])
    s3.objects[b"p-sibling/a"] = Obj(b"never")
    for rel, data in tree.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    # "kms": the same bytes, but S3 keeps no digest of them.
    want = expected(bucket, tree) | {("unverifiable", "kms")}
    got = {(c.kind, c.path) for c in fastsum.diff("s3://bkt/p", str(tmp_path))}
    assert got == want
    flip = {"added": "removed", "removed": "added"}
    got = {(c.kind, c.path) for c in fastsum.diff(str(tmp_path), "s3://bkt/p")}
    assert got == {(flip.get(k, k), p) for k, p in want}
    # download=True: its bytes streamed and compared; a same-size edit found.
    got = {(c.kind, c.path) for c in fastsum.diff("s3://bkt/p", str(tmp_path), download=True)}
    assert got == expected(bucket, tree)
    (tmp_path / "kms").write_bytes(b"SECRET")
    got = {(c.kind, c.path) for c in fastsum.diff("s3://bkt/p", str(tmp_path), download=True)}
    assert ("modified", "kms") in got


def test_a_hostile_key_is_a_problem_never_a_path(s3, tmp_path):
    s3.objects = {b"p/../evil": Obj(b"evil"), b"p/ok": Obj(b"ok")}
    (tmp_path / "ok").write_bytes(b"ok")
    changes = list(fastsum.diff("s3://bkt/p", str(tmp_path)))
    assert [(c.kind, c.path) for c in changes] == [("problem", "s3://bkt/p/../evil")]
    assert "'..'" in changes[0].error
