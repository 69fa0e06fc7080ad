"""The tests of `fastsum diff s3://...` (run by scripts/tests/s3):

1. against a fake endpoint of our own (s3_fake.py): hostile keys never
   reach a path, lies are errors naming the key (exit 2), 503 SlowDown is
   retried, SSE-KMS objects are unverifiable or (--download) compared,
   multipart ETags decided with part sizes from HeadObject partNumber,
   pagination, and an unchanged re-run with --cache asks nothing per object;
2. against SeaweedFS (a real S3 server) where $FASTSUM_FIXTURES has it: objects
   uploaded by boto3 + awscrt with every checksum algorithm, single-part
   and multipart at several part sizes, full-object and composite, and
   without checksums; `diff` and `--plan` against an independent
   comparison (Python's, of the local files before and after random
   edits, same-size edits with the mtime put back included).

3. `fastsum contained --in s3://...` (s3_contained.py): the
   same fakes with HEADs that lie (s3c_fake.py), and a seeded
   differential test against SeaweedFS.

Every check counts; the closing line says "N passed, N failed"."""

import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import zlib

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


def run(endpoint, *args, timeout=300):
    p = subprocess.run([FASTSUM, "diff", *args], env=env_for(endpoint),
                       capture_output=True, timeout=timeout)
    if b"ssh must not run" in p.stderr:
        check("never ssh for s3://", False, p.stderr)
    return p


def run_main(endpoint, *args, cwd=None):
    """`fastsum ARGS` (the main mode), never ssh."""
    p = subprocess.run([FASTSUM, *args], env=env_for(endpoint), capture_output=True,
                       timeout=300, cwd=cwd)
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


def escaped(tag, name, digest):
    """A tagged line as fastsum writes it: a name holding a newline or a
    backslash escaped, and the line then starting with a backslash."""
    if "\\" in name or "\n" in name:
        name = name.replace("\\", "\\\\").replace("\n", "\\n")
        return "\\%s (%s) = %s" % (tag, name, digest)
    return "%s (%s) = %s" % (tag, name, digest)


def fake_listing_lines(fake, endpoint, tmp):
    """`fastsum -r s3://b/p`: S3's digests as fastsum's lines, only where
    S3 keeps one in the form asked; the rest named on stderr, exit 1."""
    import hashlib
    from awscrt import checksums
    rng = random.Random(7)
    data = {k: rng.randbytes(n) for k, n in
            [("crc", 100), ("md5", 50), ("kms", 60), ("mp", 3000), ("odd", 3000),
             ("new\nline", 10), ("back\\slash", 20), ("d/deep", 0)]}
    crc = checksums.crc64nvme(data["crc"])
    fake.objects = {b"p/" + k.encode(): Obj(v) for k, v in data.items()}
    # A CRC-64/NVME beside an MD5 ETag: the ETag is the best (a CRC can be
    # forged by whoever writes to the bucket); -a crc64nvme asks for the CRC.
    fake.objects[b"p/crc"].headers = {"x-amz-checksum-crc64nvme": b64(crc.to_bytes(8, "big"))}
    fake.objects[b"p/kms"] = Obj(data["kms"], {"x-amz-server-side-encryption": "aws:kms"},
                                 etag="0" * 32)
    fake.objects[b"p/mp"] = Obj(data["mp"], parts=[1024, 1024, 952])
    fake.objects[b"p/odd"] = Obj(data["odd"], parts=[1000, 2000])
    fake.objects[b"p-sibling/x"] = Obj(b"never")
    fake.objects[b"p/../evil"] = Obj(b"evil")
    md5 = {k: hashlib.md5(v).hexdigest() for k, v in data.items()}
    want = {escaped("S3ETAG/1KiB", "mp", fake.objects[b"p/mp"].etag)}
    want |= {escaped("MD5", k, md5[k]) for k in ("crc", "md5", "new\nline", "back\\slash", "d/deep")}
    p = run_main(endpoint, "-r", "s3://b/p")
    out, err = p.stdout.decode(), p.stderr.decode("utf-8", "replace")
    check("-r s3://: each object's best digest, tagged", set(out.splitlines()) == want
          and len(out.splitlines()) == len(want), (sorted(set(out.splitlines()) ^ want), err))
    order = ["back\\\\slash", "crc", "d/deep", "md5", "mp", "new\\nline"]
    check("-r s3://: in the listing's order (bytes)", [l.split("(", 1)[1].rsplit(")", 1)[0]
                                                       for l in out.splitlines()] == order, out)
    check("-r s3://: no digest, exit 1", p.returncode == 1, (p.returncode, err))
    for name in ("s3://b/p/kms", "s3://b/p/odd", "s3://b/p/../evil"):
        check("-r s3://: named on stderr: " + name, name in err, err)
    check("-r s3://: why: SSE-KMS, unequal parts", "SSE-KMS" in err and "unequal" in err, err)
    check("-r s3://: prefix-sibling never listed", "never" not in out + err
          and "sibling" not in out + err, (out, err))
    p = run_main(endpoint, "-r", "--json", "s3://b/p")
    records = {r["path"]: r for r in map(json.loads, p.stdout.splitlines())}
    check("-r --json s3://: a record per object, its algorithm and size",
          records.get("mp", {}).get("algorithm") == "s3etag/1KiB"
          and records.get("crc", {}).get("algorithm") == "md5"
          and records["new\nline"]["size"] == 10 and len(records) == 6, records)
    # The lines check a local copy with fastsum -c (each names its algorithm).
    d = os.path.join(tmp, "lines")
    write_tree(d, {k: v for k, v in data.items()})
    with open(os.path.join(tmp, "lines.list"), "w") as f:
        f.write(out)
    c = run_main(endpoint, "-c", os.path.join(tmp, "lines.list"), cwd=d)
    check("-r s3://: its lines check the local copy", c.returncode == 0
          and c.stdout.count(b": OK") == len(want), (c.stdout, c.stderr))
    # -a md5: the ETag where it is an MD5, and nothing else.
    p = run_main(endpoint, "-r", "-a", "md5", "s3://b/p")
    gnu = {("\\%s  %s" % (md5[k], k.replace("\\", "\\\\").replace("\n", "\\n")))
           if ("\n" in k or "\\" in k) else "%s  %s" % (md5[k], k)
           for k in ("crc", "md5", "new\nline", "back\\slash", "d/deep")}
    check("-r -a md5 s3://: md5sum's lines of the MD5 ETags",
          set(p.stdout.decode().splitlines()) == gnu and p.returncode == 1,
          (p.stdout, p.stderr))
    check("-r -a md5: a multipart ETag is no MD5",
          b"s3://b/p/mp': S3 keeps S3ETAG/1KiB of it, not MD5" in p.stderr, p.stderr)
    p = run_main(endpoint, "-r", "-a", "s3etag", "--part-size", "1KiB", "s3://b/p")
    lines = p.stdout.decode().splitlines()
    check("-r -a s3etag --part-size: the multipart ETag and the one-part MD5s",
          escaped("S3ETAG/1KiB", "mp", fake.objects[b"p/mp"].etag) in lines
          and escaped("S3ETAG/1KiB", "md5", md5["md5"]) in lines and len(lines) == 6, lines)
    p = run_main(endpoint, "-r", "-a", "blake3", "s3://b/p")
    check("-r -a blake3 s3://: S3 keeps none, said at once",
          p.returncode == 1 and p.stdout == b"" and b"S3 keeps no blake3" in p.stderr, p.stderr)
    # --download: every object streamed where S3 keeps no SHA-256.
    del fake.objects[b"p/../evil"]
    p = run_main(endpoint, "-r", "--download", "-a", "sha256", "s3://b/p")
    want = {escaped("SHA256", k, hashlib.sha256(v).hexdigest()) for k, v in data.items()}
    check("-r --download -a sha256: every object, hashed as read",
          set(p.stdout.decode().splitlines()) == want and p.returncode == 0,
          (p.stdout, p.stderr))
    fake.objects = {}


def fake_hostile_pass(fake, endpoint, tmp):
    """What a hostile pass found (stop 59): each once answered exit 0."""
    d = os.path.join(tmp, "forged")
    write_tree(d, {"a": b"aaaa"})
    crc = b64(zlib.crc32(b"aaaa").to_bytes(4, "big"))
    sha = b64(hashlib.sha256(b"aaab").digest())
    # A same-size change whose CRC was made to equal the file's: the MD5
    # ETag (or a SHA-256) S3 keeps beside it says otherwise, and wins.
    for name, headers in [("a forged CRC beside an MD5 ETag", {"x-amz-checksum-crc32": crc}),
                          ("a forged CRC beside a SHA-256",
                           {"x-amz-checksum-crc32": crc, "x-amz-checksum-sha256": sha})]:
        fake.objects = {b"p/a": Obj(b"aaab", headers)}
        p = run(endpoint, "s3://b/p", d)
        check(name + " is a change", p.returncode == 1 and b"a" in p.stdout,
              (p.returncode, p.stdout, p.stderr))
    # The same CRC on the same bytes is still no change.
    fake.objects = {b"p/a": Obj(b"aaaa", {"x-amz-checksum-crc32": crc})}
    p = run(endpoint, "s3://b/p", d)
    check("an honest CRC and ETag agree", p.returncode == 0, (p.returncode, p.stdout, p.stderr))
    # A key ending in '/' that holds bytes is said; an empty folder marker
    # is not.
    fake.objects = {b"p/a": Obj(b"aaaa"), b"p/m/": Obj(b""), b"p/b/": Obj(b"20 bytes, not a dir")}
    for args in [("s3://b/p", d), (d, "s3://b/p")]:
        p = run(endpoint, *args)
        check("a key ending in '/' with bytes is a problem", p.returncode == 2
              and b"p/b/" in p.stderr and b"p/m/" not in p.stderr, (p.returncode, p.stderr))
    # s3://b//p is the prefix /p/, never p/.
    fake.objects = {b"p/a": Obj(b"aaaa"), b"/p/a": Obj(b"zzzz")}
    p = run(endpoint, "s3://b//p", d)
    check("s3://b//p lists /p/", p.returncode == 1, (p.returncode, p.stdout, p.stderr))
    p = run(endpoint, "s3://b/p", d)
    check("s3://b/p lists p/", p.returncode == 0, (p.returncode, p.stdout, p.stderr))


def services_endpoint(fake, endpoint, tmp):
    """The AWS CLI's service-specific endpoint: a profile's `services =
    NAME` and its `[services NAME]` section's `s3 = endpoint_url`, ahead
    of the profile's own endpoint_url (here a closed port). fastsum read
    only the latter and sent the run elsewhere."""
    d = os.path.join(tmp, "services")
    write_tree(d, {"a": b"services\n"})
    fake.objects = {b"p/a": Obj(b"services\n")}
    config = os.path.join(tmp, "aws-config")
    with open(config, "w") as f:
        f.write("[default]\nservices = here\nendpoint_url = http://127.0.0.1:9\n"
                "[services here]\ns3 =\n  endpoint_url = %s\n" % endpoint)
    env = env_for(endpoint)
    del env["AWS_ENDPOINT_URL"]
    env["AWS_CONFIG_FILE"] = config
    fake.requests.clear()
    p = subprocess.run([FASTSUM, "diff", "s3://b/p", d], env=env, capture_output=True, timeout=300)
    check("[services NAME] s3 endpoint_url is the one asked", p.returncode == 0 and p.stdout == b""
          and fake.count("GET") >= 1, (p.returncode, p.stdout, p.stderr))


def fake_suite(tmp):
    fake = Fake()
    endpoint = "http://127.0.0.1:%d" % fake.port
    try:
        fake_hostile_keys(fake, endpoint, tmp)
        fake_lies(fake, endpoint, tmp)
        fake_behaviour(fake, endpoint, tmp)
        fake_pages_and_cache(fake, endpoint, tmp)
        fake_listing_lines(fake, endpoint, tmp)
        fake_hostile_pass(fake, endpoint, tmp)
        services_endpoint(fake, endpoint, tmp)
        import s3_main
        s3_main.cache_and_path_style(fake, endpoint, tmp, check, run_main, Obj)
        s3_main.download_timeouts(fake, endpoint, tmp, check, run, Obj, write_tree)
        s3_main.trickled_listing(fake, endpoint, tmp, check, run, Obj, write_tree)
        s3_main.download_pinned(fake, endpoint, tmp, check, run, run_main, Obj, write_tree)
        import s3_lies
        s3_lies.every_digest(fake, endpoint, tmp, check, run, Obj, write_tree)
        s3_lies.bounded(fake, endpoint, tmp, check, run, Obj, write_tree, listing_xml)
        s3_lies.hostile_pass(fake, endpoint, tmp, check, run, run_main, Obj, write_tree, listing_xml)
        import s3_checksums
        s3_checksums.new_checksums(fake, endpoint, tmp, check, run, run_main, Obj, write_tree)
        liar = Fake()
        try:
            s3_lies.cache_of_an_endpoint(fake, liar, tmp, check, run, Obj, write_tree)
        finally:
            liar.stop()
    finally:
        fake.stop()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        fake_suite(tmp)
        if WEED:
            import s3_weed
            s3_weed.suite(WEED, tmp, run, check, run_main)
        # `fastsum contained --in s3://`: its fake endpoints,
        # and its own SeaweedFS where WEED names one.
        # (Without WEED, scripts/tests/s3 says why, once the fakes' part
        # has run.)
        import s3_contained
        s3_contained.run_all(FASTSUM, WEED, check)
    print("s3: %d passed, %d failed" % (PASSED[0], FAILED[0]))
    sys.exit(1 if FAILED[0] else 0)
