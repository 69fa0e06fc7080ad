"""Issue 54's tests of `fastsum diff s3://...` (run by scripts/tests/s3):

1. against a fake endpoint of our own (s3_fake.py): hostile keys never
   reach a path, lies are errors naming the key (exit 2), 503 SlowDown is
   retried, SSE-KMS objects are unverifiable or (--download) compared,
   multipart ETags decided with part sizes from HeadObject partNumber,
   pagination, and an unchanged re-run with --cache asks nothing per object;
2. against SeaweedFS (a real S3 server) where ../shared has it: objects
   uploaded by boto3 + awscrt with every checksum algorithm, single-part
   and multipart at several part sizes, full-object and composite, and
   without checksums; `diff` and `--plan` against an independent
   comparison (Python's, of the local files before and after random
   edits, same-size edits with the mtime put back included).

Every check counts; the closing line says "N passed, N failed"."""

import json
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from s3_fake import Fake, Obj, b64, listing_xml  # noqa: E402

FASTSUM = os.path.abspath(sys.argv[1])
WEED = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else ""
PASSED, FAILED = [0], [0]


def check(name, ok, detail=""):
    if ok:
        PASSED[0] += 1
    else:
        FAILED[0] += 1
        print("FAIL: %s %s" % (name, detail), file=sys.stderr)


def env_for(endpoint):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("AWS_"):
            del env[k]
    env.update(AWS_ACCESS_KEY_ID="AKTEST", AWS_SECRET_ACCESS_KEY="SKTEST123",
               AWS_REGION="us-east-1", AWS_ENDPOINT_URL=endpoint,
               AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
               # An s3:// operand read as HOST:PATH would run this: loudly.
               FASTSUM_RSH=os.path.join(os.path.dirname(__file__), "s3_no_ssh"))
    return env


def run(endpoint, *args):
    p = subprocess.run([FASTSUM, "diff", *args], env=env_for(endpoint),
                       capture_output=True, timeout=300)
    if b"ssh must not run" in p.stderr:
        check("never ssh for s3://", False, p.stderr)
    return p


def write_tree(root, files):
    for rel, data in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


# ---------------------------------------------------------------- fake

def fake_hostile_keys(fake, endpoint, tmp):
    fake.objects = {b"p/ok": Obj(b"fine")}
    for key in [b"p/../evil", b"p/a/../../evil", b"p//etc/passwd", b"p/a//b",
                b"p/./x", b"p/nul\0x", b"p/\xff\xfe", b"p/.."]:
        fake.objects[key] = Obj(b"evil")
    d = os.path.join(tmp, "hostile", "dir")
    write_tree(d, {"ok": b"fine"})
    for args in (["s3://b/p", d], [d, "s3://b/p"], ["--plan", "s3://b/p", d]):
        p = run(endpoint, *args)
        err = p.stderr.decode("utf-8", "replace")
        check("hostile keys: exit 2", p.returncode == 2, (args, p.returncode, err))
        for shown in ["p/../evil", "p//etc/passwd", "p/a//b", "p/./x", "p/.."]:
            check("hostile key named: " + shown, shown in err, err)
        if args[0] == "--plan":
            plan = json.loads(p.stdout)
            check("a hostile key is no change (plan)", plan["send"] == plan["only_old"] == []
                  and len(plan["problems"]) == 8 and not plan["complete"], plan)
        else:
            check("a hostile key is no change", p.stdout == b"", p.stdout)
    check("nothing written outside DIR", os.listdir(os.path.join(tmp, "hostile")) == ["dir"])


def fake_lies(fake, endpoint, tmp):
    d = os.path.join(tmp, "lies")
    write_tree(d, {"a": b"aaaa", "b": b"bbbb"})
    a, b = Obj(b"aaaa"), Obj(b"bbbb")
    cases = {
        "repeated key": [listing_xml([(b"p/a", a), (b"p/a", a)])],
        "backwards listing": [listing_xml([(b"p/b", b), (b"p/a", a)])],
        "backwards across pages": [listing_xml([(b"p/b", b)], "1"), listing_xml([(b"p/a", a)])],
        "garbage 200": [b"<html>hello</html>"],
        "truncated without token": [listing_xml([(b"p/a", a)]).replace(
            b"<IsTruncated>false", b"<IsTruncated>true")],
        "bad size": [listing_xml([(b"p/a", a)]).replace(b"<Size>4</Size>", b"<Size>-4</Size>")],
    }
    fake.objects = {b"p/a": a, b"p/b": b}
    for name, pages in cases.items():
        fake.listing = pages
        p = run(endpoint, "s3://b/p", d)
        check("lie refused: " + name, p.returncode == 2 and p.stdout == b"",
              (p.returncode, p.stdout, p.stderr))
        if "key" in name or "backwards" in name:
            check("lie names the key: " + name, b"s3://b/p/a" in p.stderr, p.stderr)
    fake.listing = None
    # A checksum of the wrong length, and one not base64.
    for bad in [b64(b"\0" * 5), "not base64!"]:
        fake.objects = {b"p/a": Obj(b"aaaa", {"x-amz-checksum-crc32": bad}), b"p/b": b}
        p = run(endpoint, "s3://b/p", d)
        check("wrong checksum refused", p.returncode == 2 and b"p/a" in p.stderr, p.stderr)
    # Part sizes that do not add up.
    fake.objects = {b"p/a": Obj(b"aaaa", parts=[3, 3]), b"p/b": b}
    fake.objects[b"p/a"].parts = [1, 1]
    p = run(endpoint, "s3://b/p", d)
    check("parts that do not add up refused", p.returncode == 2 and b"p/a" in p.stderr, p.stderr)


def fake_behaviour(fake, endpoint, tmp):
    d = os.path.join(tmp, "behave")
    data = bytes(random.Random(1).getrandbits(8) for _ in range(3000))
    write_tree(d, {"kms": b"secret", "mp": data, "slow": b"slow"})
    kms = {"x-amz-server-side-encryption": "aws:kms"}
    fake.objects = {
        b"p/kms": Obj(b"secret", kms, etag="0" * 32),
        b"p/mp": Obj(data, parts=[1024, 1024, 952], attrs_parts=False),
        b"p/slow": Obj(b"slow"),
    }
    fake.fail_first = 3
    p = run(endpoint, "--json", "s3://b/p", d)
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    check("503 SlowDown retried; KMS unverifiable, exit 1", p.returncode == 1,
          (p.returncode, p.stderr))
    check("unverifiable in --json", lines == [{"change": "unverifiable", "old": "kms", "new": "kms",
                                               "old_size": 6, "new_size": 6}], lines)
    check("multipart ETag from HeadObject partNumber", fake.count("HEAD") >= 4)
    p = run(endpoint, "--download", "s3://b/p", d)
    check("--download: the same bytes are unchanged", p.returncode == 0, (p.stdout, p.stderr))
    write_tree(d, {"kms": b"SECRET", "mp": data[:-1] + b"\0"})
    p = run(endpoint, "--download", "s3://b/p", d)
    check("--download and part sizes find same-size edits",
          p.stdout == b"M\tkms\nM\tmp\n" and p.returncode == 1, (p.stdout, p.stderr))


def fake_pages_and_cache(fake, endpoint, tmp):
    d = os.path.join(tmp, "pages")
    files = {"f%03d" % i: b"x%d" % i for i in range(25)}
    write_tree(d, files)
    fake.objects = {b"p/" + k.encode(): Obj(v) for k, v in files.items()}
    fake.objects[b"p-sibling/zzz"] = Obj(b"never")
    fake.page_size = 4
    cache = os.path.join(tmp, "cache.sqlite")
    fake.requests.clear()
    p = run(endpoint, "--cache=" + cache, "s3://b/p", d)
    check("25 objects over 7 pages, none changed", p.returncode == 0 and p.stdout == b"",
          (p.returncode, p.stdout, p.stderr))
    check("every page fetched", fake.count("GET") == 7, fake.requests)
    fake.requests.clear()
    p = run(endpoint, "--cache=" + cache, "s3://b/p", d)
    check("re-run from the cache: listing only", p.returncode == 0
          and fake.count("HEAD") == 0 and fake.count("GET") == 7, fake.requests)
    fake.page_size = 1000


def fake_suite(tmp):
    fake = Fake()
    endpoint = "http://127.0.0.1:%d" % fake.port
    try:
        fake_hostile_keys(fake, endpoint, tmp)
        fake_lies(fake, endpoint, tmp)
        fake_behaviour(fake, endpoint, tmp)
        fake_pages_and_cache(fake, endpoint, tmp)
    finally:
        fake.stop()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        fake_suite(tmp)
        if WEED:
            import s3_weed
            s3_weed.suite(WEED, tmp, run, check)
        else:
            print("scripts/tests/s3: SeaweedFS tests SKIPPED: no ../shared/servers/seaweedfs",
                  file=sys.stderr)
    print("s3: %d passed, %d failed" % (PASSED[0], FAILED[0]))
    sys.exit(1 if FAILED[0] else 0)
