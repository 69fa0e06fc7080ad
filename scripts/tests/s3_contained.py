"""Hostile tests of `fastsum contained SOURCE... --in s3://BUCKET/PREFIX`.

run_all(fastsum, weed, check): against a fake endpoint of our own
(s3_fake.Fake, with s3c_fake.Fake2's HEAD lies), then, when `weed` names
SeaweedFS's binary, a seeded random differential test against a real S3
server (boto3 + awscrt uploads, single-part and multipart, every checksum
layout) with a Python oracle that compares bytes. Every expectation is
computed here (hashlib, zlib, s3_lies' CRCs), never taken from fastsum.

What is held (the semantics under test): a source file is contained iff
some listed object under the prefix has its size and every digest S3
gives of it agrees with the file's bytes; objects of a size no source file
has are never HEADed or read; an opaque object (SSE-KMS/SSE-C ETag, a
non-MD5 ETag and no checksum, part sizes not to be had) or one whose HEAD
failed or lied leaves each source file of its size that no other object
holds with no verdict (a problem: named on stderr, exit 2), unless
--download streams it; a lying listing is exit 2; --remove is refused.

Standalone: python3 s3_contained.py FASTSUM [WEED]
"""

import base64
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = HERE  # s3_fake, s3_lies, s3_weed and s3_no_ssh are beside it
sys.path.insert(0, HERE)
from s3_fake import Obj, b64, listing_xml  # noqa: E402
from s3_lies import COLLISION_A, COLLISION_B, crc32, crc32c, crc64nvme  # noqa: E402
from s3c_fake import Fake2  # noqa: E402

KMS = {"x-amz-server-side-encryption": "aws:kms"}
SSEC = {"x-amz-server-side-encryption-customer-algorithm": "AES256",
        "x-amz-server-side-encryption-customer-key-MD5": b64(hashlib.md5(b"k" * 32).digest())}


def env_for(endpoint):
    """As s3_suite.py's env_for."""
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("AWS_"):
            del env[k]
    env.update(AWS_ACCESS_KEY_ID="AKTEST", AWS_SECRET_ACCESS_KEY="SKTEST123",
               AWS_REGION="us-east-1", AWS_ENDPOINT_URL=endpoint,
               AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
               FASTSUM_RSH=os.path.join(SCRIPTS, "s3_no_ssh"))
    return env


def write_tree(root, files):
    for rel, data in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


def escaped(name):
    """A name as a report line writes it (escape.rs' write_report_escaped,
    for the ASCII and newline names used here)."""
    return name.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")


def records(stdout):
    """--json lines by path (path_base64 for exact bytes), in order."""
    out = {}
    for line in stdout.splitlines():
        r = json.loads(line)
        p = base64.b64decode(r["path_base64"]).decode("utf-8", "surrogateescape") \
            if "path_base64" in r else r["path"]
        out[p] = r
    return out


class Ctx:
    def __init__(self, fastsum, check, tmp):
        self.fastsum, self.check, self.tmp = fastsum, check, tmp
        self.fake = Fake2()
        self.endpoint = "http://127.0.0.1:%d" % self.fake.port
        self.n = 0

    def case(self, files, objects=None, arcs=None):
        """A fresh directory with src/ (and arc/ when asked), the fake's
        objects set; returns the directory."""
        self.n += 1
        d = os.path.join(self.tmp, "c%03d" % self.n)
        write_tree(os.path.join(d, "src"), files)
        os.makedirs(os.path.join(d, "src"), exist_ok=True)
        if arcs is not None:
            write_tree(os.path.join(d, "arc"), arcs)
            os.makedirs(os.path.join(d, "arc"), exist_ok=True)
        self.fake.reset()
        self.fake.objects = dict(objects or {})
        return d

    def run(self, cwd, *args, endpoint=None, timeout=90):
        try:
            p = subprocess.run([self.fastsum, "contained", *args], cwd=cwd,
                               env=env_for(endpoint or self.endpoint),
                               capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.check("contained %s ends" % " ".join(args), False, "still running after %d s" % timeout)
            return subprocess.CompletedProcess(args, -1, b"", b"timeout")
        if b"ssh must not run" in p.stderr:
            self.check("never ssh for s3://", False, p.stderr)
        return p


def show(p):
    return (p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")[-2000:])


# ------------------------------------------------------------------ fake

def basics(c):
    """Copies under other keys and depths, a same-size impostor, empty files,
    -v, --json, -q, exit statuses, the prefix's sibling."""
    rng = random.Random(1)
    a, b, x = rng.randbytes(100), rng.randbytes(4097), rng.randbytes(77)
    files = {"a": a, "deep/er/b": b, "c": b"not there\n", "empty": b"", "x": x}
    objects = {
        b"p/x/y/z/a-copy": Obj(a),
        b"p/b": Obj(b),
        b"p/c-impostor": Obj(b"NOT THERE\n"),  # same size, other bytes
        b"p/x-first": Obj(bytes([x[0] ^ 1]) + x[1:]),
        b"p/x-last": Obj(x[:-1] + bytes([x[-1] ^ 0x80])),
        b"p-sibling/x": Obj(x),  # beside the prefix, never in it
        b"px": Obj(x),
    }
    d = c.case(files, objects)
    p = c.run(d, "src", "--in", "s3://b/p")
    check = c.check
    check("basics: the files not contained, one a line", p.returncode == 1
          and sorted(p.stdout.decode().splitlines()) == ["src/c", "src/empty", "src/x"], show(p))
    p = c.run(d, "-v", "src", "--in", "s3://b/p")
    want = {"contained\tsrc/a\ts3://b/p\ts3://b/p/x/y/z/a-copy",
            "contained\tsrc/deep/er/b\ts3://b/p\ts3://b/p/b", "src/c", "src/empty", "src/x"}
    got = p.stdout.decode().splitlines()
    check("basics -v: contained<TAB>PATH<TAB>s3://b/p<TAB>s3://b/KEY", set(got) == want
          and len(got) == 5 and p.returncode == 1, (sorted(set(got) ^ want), show(p)))
    p = c.run(d, "--json", "src", "--in", "s3://b/p")
    r = records(p.stdout)
    check("basics --json: a record per file", set(r) == {"src/" + k for k in files}, show(p))
    check("basics --json: contained record",
          r.get("src/a") == {"path": "src/a", "size": 100, "contained": True,
                             "archive": "s3://b/p", "copy": "s3://b/p/x/y/z/a-copy"}, r.get("src/a"))
    check("basics --json: not contained record",
          r.get("src/c", {}).get("contained") is False and r["src/c"].get("size") == 10
          and "copy" not in r["src/c"], r.get("src/c"))
    check("basics --json: a first/last-byte flip is not contained, the prefix's siblings hold nothing",
          r.get("src/x", {}).get("contained") is False, r.get("src/x"))
    # An empty object holds the empty file.
    c.fake.objects[b"p/zero/len"] = Obj(b"")
    p = c.run(d, "-v", "src", "--in", "s3://b/p")
    check("an empty object holds an empty file",
          "contained\tsrc/empty\ts3://b/p\ts3://b/p/zero/len" in p.stdout.decode().splitlines(), show(p))
    # Everything contained: exit 0, nothing on stdout, -q quiet.
    d = c.case({"a": a, "b": b}, objects)
    p = c.run(d, "src", "--in", "s3://b/p")
    check("every file contained: exit 0, stdout empty", p.returncode == 0 and p.stdout == b"", show(p))
    p = c.run(d, "-q", "src", "--in", "s3://b/p")
    check("-q: exit 0, nothing said", p.returncode == 0 and p.stdout == b"" and p.stderr == b"", show(p))
    p = c.run(d, "--s3-path-style", "src", "--in", "s3://b/p")
    check("--s3-path-style taken", p.returncode == 0 and p.stdout == b"", show(p))
    # A prefix with a trailing slash, and a whole bucket.
    p = c.run(d, "src", "--in", "s3://b/p/")
    check("s3://b/p/ is the same prefix", p.returncode == 0, show(p))
    d = c.case({"x": x}, {b"p-sibling/x": Obj(x)})
    p = c.run(d, "src", "--in", "s3://b/p")
    check("s3://b/p never lists p-sibling/", p.returncode == 1 and p.stdout == b"src/x\n", show(p))
    p = c.run(d, "-v", "src", "--in", "s3://b")
    check("s3://b: the whole bucket", p.returncode == 0
          and p.stdout == b"contained\tsrc/x\ts3://b\ts3://b/p-sibling/x\n", show(p))
    # A folder marker (a key ending in '/', empty) is no empty file.
    d = c.case({"empty": b""}, {b"p/dir/": Obj(b"")})
    p = c.run(d, "src", "--in", "s3://b/p")
    check("a folder marker holds no empty file (judgement call)", p.returncode == 1
          and p.stdout == b"src/empty\n", show(p))


def requests_only_for_candidates(c):
    """Objects of a size no source file has are never HEADed or read, with
    or without --download, whatever kind they are."""
    rng = random.Random(2)
    a = rng.randbytes(50)
    big = rng.randbytes(3000)
    objects = {
        b"p/a": Obj(a),
        b"p/nocand-plain": Obj(rng.randbytes(51)),
        b"p/nocand-kms": Obj(rng.randbytes(52), KMS, etag="0" * 32),
        b"p/nocand-mp": Obj(big, parts=[1024, 1024, 952], attrs_parts=False),
        b"p/nocand-ssec": Obj(rng.randbytes(53), SSEC),
        b"p/nocand-odd": Obj(rng.randbytes(54), etag="abcdef-xyz"),
    }
    d = c.case({"a": a, "other": rng.randbytes(49)}, objects)
    for extra in ([], ["--download"]):
        c.fake.requests.clear()
        p = c.run(d, *extra, "src", "--in", "s3://b/p")
        asked = [(m, q) for m, q in c.fake.requests if "list-type=2" not in q]
        bad = [r for r in asked if "nocand" in r[1]]
        check = c.check
        check("no request names an object of a size no source file has %s" % extra,
              bad == [] and p.returncode == 1 and p.stdout == b"src/other\n", (bad, show(p)))
        check("no GetObject of an MD5-ETag object without --download %s" % extra,
              extra or not any(m == "GET" and "/p/a" in q and "attributes" not in q for m, q in asked),
              asked)
    # No source file at all of any listed size: the listing only.
    d = c.case({"only": b"1"}, objects)
    p = c.run(d, "--download", "src", "--in", "s3://b/p")
    asked = [q for m, q in c.fake.requests if "list-type=2" not in q]
    c.check("no candidate size: the listing only", asked == [] and p.returncode == 1, (asked, show(p)))


def every_digest(c):
    """An object is a copy only where every digest S3 gives agrees."""
    check = c.check
    for name, crc in [("crc64nvme", crc64nvme), ("crc32c", crc32c), ("crc32", crc32),
                      ("sha256", lambda b: hashlib.sha256(b).digest()),
                      ("sha1", lambda b: hashlib.sha1(b).digest())]:
        headers = {"x-amz-checksum-" + name: b64(crc(COLLISION_A)), "x-amz-checksum-type": "FULL_OBJECT"}
        d = c.case({"coll": COLLISION_B}, {b"p/coll": Obj(COLLISION_A, headers)})
        assert c.fake.objects[b"p/coll"].etag == hashlib.md5(COLLISION_B).hexdigest()
        p = c.run(d, "src", "--in", "s3://b/p")
        check("an MD5-colliding object whose %s disagrees does not hold the file" % name,
              p.returncode == 1 and p.stdout == b"src/coll\n", show(p))
        p = c.run(d, "--download", "src", "--in", "s3://b/p")
        check("... nor with --download (%s)" % name, p.returncode == 1 and p.stdout == b"src/coll\n", show(p))
        write_tree(os.path.join(d, "src"), {"coll": COLLISION_A})
        p = c.run(d, "-v", "src", "--in", "s3://b/p")
        check("the same bytes agree in MD5 and %s" % name, p.returncode == 0
              and p.stdout == b"contained\tsrc/coll\ts3://b/p\ts3://b/p/coll\n", show(p))
    # The colliding object beside one that S3 only gives the MD5 ETag of:
    # the latter holds the file (every digest S3 gives of it agrees), and is
    # the copy named; the colliding one never is.
    headers = {"x-amz-checksum-crc64nvme": b64(crc64nvme(COLLISION_A))}
    d = c.case({"coll": COLLISION_B}, {b"p/a-with-crc": Obj(COLLISION_A, headers),
                                        b"p/z-md5-only": Obj(COLLISION_A)})
    p = c.run(d, "-v", "src", "--in", "s3://b/p")
    check("the object that disagrees is never the copy; the one that agrees is",
          p.returncode == 0 and p.stdout == b"contained\tsrc/coll\ts3://b/p\ts3://b/p/z-md5-only\n", show(p))
    # A forged CRC beside an MD5 ETag that disagrees.
    d = c.case({"a": b"aaaa"}, {b"p/a": Obj(b"aaab", {"x-amz-checksum-crc32": b64(crc32(b"aaaa"))})})
    p = c.run(d, "src", "--in", "s3://b/p")
    check("a forged CRC beside the MD5 ETag: not contained", p.returncode == 1 and p.stdout == b"src/a\n", show(p))
    # A SHA-256 that disagrees beside an agreeing MD5 ETag.
    d = c.case({"a": b"aaaa"}, {b"p/a": Obj(b"aaaa", {"x-amz-checksum-sha256": b64(hashlib.sha256(b"aaab").digest())})})
    p = c.run(d, "src", "--in", "s3://b/p")
    check("an agreeing ETag never outvotes a SHA-256 that disagrees", p.returncode == 1
          and p.stdout == b"src/a\n", show(p))
    # Newer checksums: SHA-512 and xxhash, opaque ETag, the checksum all there is.
    try:
        import xxhash
        kinds = [("sha512", lambda b: hashlib.sha512(b).digest()),
                 ("xxhash64", lambda b: xxhash.xxh64(b).digest()),
                 ("xxhash3", lambda b: xxhash.xxh3_64(b).digest()),
                 ("xxhash128", lambda b: xxhash.xxh3_128(b).digest())]
    except ImportError:
        kinds = [("sha512", lambda b: hashlib.sha512(b).digest())]
    data = random.Random(3).randbytes(5000)
    other = data[:-1] + bytes([data[-1] ^ 1])
    for name, dig in kinds:
        obj = Obj(data, dict(KMS, **{"x-amz-checksum-" + name: b64(dig(data)),
                                     "x-amz-checksum-type": "FULL_OBJECT"}))
        d = c.case({"f": data, "g": other}, {b"p/f": obj})
        p = c.run(d, "src", "--in", "s3://b/p")
        check("SSE-KMS with a full-object %s: the checksum decides" % name,
              p.returncode == 1 and p.stdout == b"src/g\n", show(p))


def multipart(c):
    rng = random.Random(4)
    data = rng.randbytes(3000)
    flip_last = data[:-1] + bytes([data[-1] ^ 1])
    flip_mid = data[:1500] + bytes([data[1500] ^ 1]) + data[1501:]
    check = c.check
    for how, attrs in [("GetObjectAttributes", True), ("HeadObject partNumber", False)]:
        for parts in ([1024, 1024, 952], [1000, 2000], [3000]):
            obj = Obj(data, parts=parts, attrs_parts=attrs)
            d = c.case({"same": data, "last": flip_last, "mid": flip_mid}, {b"p/deep/mp": obj})
            p = c.run(d, "src", "--in", "s3://b/p")
            check("multipart ETag %s, part sizes from %s: the same bytes contained, a flip not"
                  % (parts, how), p.returncode == 1
                  and sorted(p.stdout.decode().splitlines()) == ["src/last", "src/mid"], show(p))
    # Composite checksums, the ETag opaque: the composite decides.
    parts = [1024, 1024, 952]
    for name, dig in [("sha256", lambda b: hashlib.sha256(b).digest()), ("crc32c", crc32c),
                      ("sha1", lambda b: hashlib.sha1(b).digest()), ("crc32", crc32)]:
        at, comp = 0, b""
        for n in parts:
            comp += dig(data[at:at + n])
            at += n
        comp = dig(comp)
        for attrs in (True, False):
            obj = Obj(data, dict(KMS, **{"x-amz-checksum-" + name: b64(comp) + "-3",
                                         "x-amz-checksum-type": "COMPOSITE"}), parts=parts, attrs_parts=attrs)
            d = c.case({"same": data, "last": flip_last}, {b"p/mp": obj})
            p = c.run(d, "src", "--in", "s3://b/p")
            check("composite %s (parts via %s), ETag opaque: decided" % (name, "attrs" if attrs else "partNumber"),
                  p.returncode == 1 and p.stdout == b"src/last\n", show(p))
    # A multipart object whose part sizes are not to be had, no checksum:
    # opaque; a problem; --download decides.
    obj = Obj(data, parts=parts, attrs_parts=False)
    d = c.case({"same": data, "last": flip_last, "held": b"held"},
               {b"p/mp": obj, b"p/held": Obj(b"held")})
    c.fake.no_parts = {b"p/mp"}
    p = c.run(d, "--json", "src", "--in", "s3://b/p")
    r = records(p.stdout)
    check("part sizes not to be had: exit 2, the object named", p.returncode == 2
          and b"s3://b/p/mp" in p.stderr, show(p))
    check("part sizes not to be had: no verdict for either file of its size",
          all("contained" not in r.get(k, {"contained": 1}) and "error" in r.get(k, {})
              for k in ("src/same", "src/last")) and r.get("src/held", {}).get("contained") is True, r)
    p = c.run(d, "--download", "src", "--in", "s3://b/p")
    check("part sizes not to be had, --download: streamed and decided",
          p.returncode == 1 and p.stdout == b"src/last\n", show(p))
    # A multipart ETag and a full-object CRC-64/NVME: both agree or none.
    obj = Obj(data, {"x-amz-checksum-crc64nvme": b64(crc64nvme(data)), "x-amz-checksum-type": "FULL_OBJECT"},
              parts=parts)
    d = c.case({"same": data, "last": flip_last}, {b"p/mp": obj})
    p = c.run(d, "src", "--in", "s3://b/p")
    check("multipart ETag + full-object CRC-64/NVME", p.returncode == 1 and p.stdout == b"src/last\n", show(p))
    # The part sizes the server gives disagree with the listed size: trouble.
    obj = Obj(data, parts=[1000, 1000])  # 2000 of 3000
    obj.etag = Obj(data, parts=[1500, 1500]).etag
    d = c.case({"same": data}, {b"p/mp": obj})
    p = c.run(d, "src", "--in", "s3://b/p")
    check("part sizes that do not add up to the size: exit 2, named, no verdict",
          p.returncode == 2 and b"s3://b/p/mp" in p.stderr and p.stdout == b"", show(p))


def opaque(c):
    """Opaque objects and HEADs that fail or lie: problems for the source
    files of their size that no other object holds."""
    rng = random.Random(5)
    s = rng.randbytes(64)
    same_size = rng.randbytes(64)
    held = rng.randbytes(64)
    other = rng.randbytes(65)
    check = c.check
    kinds = {
        "SSE-KMS (ETag = the file's MD5)": Obj(same_size, KMS, etag=hashlib.md5(s).hexdigest()),
        "SSE-C (ETag = the file's MD5)": Obj(same_size, SSEC, etag=hashlib.md5(s).hexdigest()),
        "an ETag that is no MD5, no checksum": Obj(same_size, etag="x" * 7 + "-" + "y"),
        "a 40-hex ETag, no checksum": Obj(same_size, etag=hashlib.sha1(s).hexdigest()),
    }
    for name, obj in kinds.items():
        d = c.case({"s": s, "held": held, "other": other},
                   {b"p/opaque": obj, b"p/h": Obj(held)})
        p = c.run(d, "--json", "src", "--in", "s3://b/p")
        r = records(p.stdout)
        check("opaque (%s): exit 2, the object named on stderr" % name,
              p.returncode == 2 and b"s3://b/p/opaque" in p.stderr, show(p))
        check("opaque (%s): no verdict for the file no other object holds" % name,
              "contained" not in r.get("src/s", {"contained": 1}) and "error" in r.get("src/s", {}), r)
        check("opaque (%s): the rest answered (a held file of its size contained, another size not)" % name,
              r.get("src/held", {}).get("contained") is True
              and r.get("src/other", {}).get("contained") is False, r)
        p = c.run(d, "src", "--in", "s3://b/p")
        check("opaque (%s): text: only the file not contained on stdout" % name,
              p.returncode == 2 and p.stdout == b"src/other\n" and b"src/s" in p.stderr, show(p))
        # --download: the body's SHA-256 decides (the body is other bytes).
        p = c.run(d, "--download", "src", "--in", "s3://b/p")
        check("opaque (%s) --download: other bytes, not contained" % name,
              p.returncode == 1 and sorted(p.stdout.decode().splitlines()) == ["src/other", "src/s"], show(p))
        c.fake.objects[b"p/opaque"].data = s
        p = c.run(d, "-v", "--download", "src", "--in", "s3://b/p")
        check("opaque (%s) --download: the same bytes, contained" % name,
              p.returncode == 1 and "contained\tsrc/s\ts3://b/p\ts3://b/p/opaque"
              in p.stdout.decode().splitlines(), show(p))
    # An opaque object of the size of a file another object holds: no trouble.
    d = c.case({"s": s}, {b"p/a-opaque": Obj(same_size, KMS, etag="0" * 32), b"p/b-copy": Obj(s)})
    p = c.run(d, "-v", "src", "--in", "s3://b/p")
    check("an opaque object beside a copy: contained, exit 0", p.returncode == 0
          and p.stdout == b"contained\tsrc/s\ts3://b/p\ts3://b/p/b-copy\n", show(p))
    # The file held by a local archive of the union: no trouble either.
    d = c.case({"s": s}, {b"p/opaque": Obj(same_size, KMS, etag="0" * 32)}, arcs={"copy": s})
    p = c.run(d, "-v", "src", "--in", "s3://b/p", "--in", "arc")
    check("an opaque object, the file in the union's directory: contained, exit 0",
          p.returncode == 0 and p.stdout == b"contained\tsrc/s\tarc\tarc/copy\n", show(p))
    # HEADs that fail or lie.
    lies = {
        "HEAD 403": ("status", 403),
        "HEAD 404 (gone since the listing)": ("status", 404),
        "HEAD gives another size": ("as", Obj(s + b"!")),
        "HEAD gives another ETag": ("as", Obj(same_size)),
        "HEAD gives a multipart ETag": ("as", Obj(s, parts=[32, 32])),
    }
    for name, (how, what) in lies.items():
        d = c.case({"s": s, "held": held, "other": other}, {b"p/liar": Obj(s), b"p/h": Obj(held)})
        if how == "status":
            c.fake.head_status = {b"p/liar": what}
        else:
            c.fake.head_as = {b"p/liar": what}
        p = c.run(d, "--json", "src", "--in", "s3://b/p")
        r = records(p.stdout)
        check("%s: exit 2, the object named" % name,
              p.returncode == 2 and b"s3://b/p/liar" in p.stderr, show(p))
        check("%s: no verdict for its size's file, the rest answered" % name,
              "error" in r.get("src/s", {}) and "contained" not in r.get("src/s", {"contained": 1})
              and r.get("src/held", {}).get("contained") is True
              and r.get("src/other", {}).get("contained") is False, r)
    # A checksum of the wrong length, one not base64, one given twice.
    for name, obj in [
        ("a CRC-32 of 5 bytes", Obj(s, {"x-amz-checksum-crc32": b64(b"\0" * 5)})),
        ("a checksum that is not base64", Obj(s, {"x-amz-checksum-sha256": "not base64!"})),
        ("a CRC-64/NVME given twice", Obj(s, extra=[("x-amz-checksum-crc64nvme", b64(crc64nvme(s))),
                                                    ("x-amz-checksum-crc64nvme", b64(crc64nvme(held)))])),
        ("the encryption given twice", Obj(s, extra=[("x-amz-server-side-encryption", "aws:kms"),
                                                     ("x-amz-server-side-encryption", "AES256")])),
    ]:
        d = c.case({"s": s, "other": other}, {b"p/bad": obj})
        p = c.run(d, "src", "--in", "s3://b/p")
        check("%s: exit 2, named, no verdict for the file" % name,
              p.returncode == 2 and b"s3://b/p/bad" in p.stderr and p.stdout == b"src/other\n", show(p))
    # --download bodies that are not the listed length, or replaced.
    for name, body in [("shorter", s[:40]), ("longer", s + b"more")]:
        d = c.case({"s": s, "other": other}, {b"p/kms": Obj(s, KMS, etag="1" * 32)})
        c.fake.body_override = {b"p/kms": body}
        p = c.run(d, "--download", "src", "--in", "s3://b/p")
        check("--download: a body %s than listed is a problem, exit 2, no verdict" % name,
              p.returncode == 2 and b"s3://b/p/kms" in p.stderr and p.stdout == b"src/other\n", show(p))
    d = c.case({"s": s}, {b"p/kms": Obj(same_size, KMS, etag="1" * 32)})
    c.fake.swap_on_get = {b"p/kms": Obj(s, KMS, etag="2" * 32)}
    p = c.run(d, "--download", "src", "--in", "s3://b/p")
    check("--download: an object replaced since the listing (with the file's bytes) is a problem",
          p.returncode == 2 and b"s3://b/p/kms" in p.stderr and p.stdout == b"", show(p))
    d = c.case({"s": s}, {b"p/kms": Obj(s, KMS, etag="1" * 32)})
    p = c.run(d, "--download", "src", "--in", "s3://b/p")
    check("--download asks for the listed version (If-Match)", p.returncode == 0
          and c.fake.if_match == [(b"p/kms", '"%s"' % ("1" * 32))], (show(p), c.fake.if_match))


def listing_lies(c):
    a, b = Obj(b"aaaa"), Obj(b"bbbb")
    check = c.check
    cases = {
        "a key twice": [listing_xml([(b"p/a", a), (b"p/a", a)])],
        "keys going backwards": [listing_xml([(b"p/b", b), (b"p/a", a)])],
        "backwards across pages": [listing_xml([(b"p/b", b)], "1"), listing_xml([(b"p/a", a)])],
        "a key twice across pages": [listing_xml([(b"p/a", a)], "1"), listing_xml([(b"p/a", a)])],
        "garbage": [b"<html>hello</html>"],
        "truncated without a token": [listing_xml([(b"p/a", a)]).replace(b"<IsTruncated>false", b"<IsTruncated>true")],
        "a negative size": [listing_xml([(b"p/a", a)]).replace(b"<Size>4</Size>", b"<Size>-4</Size>")],
        "a page cut short": [listing_xml([(b"p/a", a), (b"p/b", b)]).split(b"</Contents>")[0] + b"</Contents>"],
        "a cycle of tokens": [listing_xml([], "1"), listing_xml([], "0")],
    }
    # A key outside the prefix, listed by a server that lies: never a copy.
    d = c.case({"a": b"aaaa", "b": b"bbbb"}, {b"p/a": a, b"q/z": b})
    c.fake.listing = [listing_xml([(b"p/a", a), (b"q/z", b)])]
    p = c.run(d, "-v", "src", "--in", "s3://b/p", timeout=60)
    check("a listed key outside the prefix is never a copy (exit 2, or src/b not contained)",
          b"s3://b/q/z" not in p.stdout and (p.returncode == 2 or b"src/b\n" in p.stdout), show(p))
    for name, pages in cases.items():
        d = c.case({"a": b"aaaa", "b": b"bbbb", "c": b"cccc"}, {b"p/a": a, b"p/b": b})
        c.fake.listing = pages
        p = c.run(d, "src", "--in", "s3://b/p", timeout=60)
        check("a lying listing (%s): exit 2, and nothing said not contained" % name,
              p.returncode == 2 and p.stdout == b"", show(p))
        if "key" in name or "backwards" in name:
            check("a lying listing (%s) names the key" % name, b"s3://b/p/a" in p.stderr, show(p))
        # In a union, the directory's answers stand; nothing is not contained.
        write_tree(os.path.join(d, "arc"), {"a": b"aaaa"})
        p = c.run(d, "--json", "src", "--in", "s3://b/p", "--in", "arc", timeout=60)
        r = records(p.stdout)
        check("a lying listing (%s) in a union: exit 2, no file said not contained" % name,
              p.returncode == 2 and not any(v.get("contained") is False for v in r.values()), show(p))


def pages(c):
    files = {"f%03d" % i: b"content %d" % i for i in range(23)}
    objects = {b"p/k%03d/%d" % (i, i % 3): Obj(b"content %d" % i) for i in range(0, 23, 2)}
    d = c.case(files, objects)
    c.fake.page_size = 4
    p = c.run(d, "src", "--in", "s3://b/p")
    want = sorted("src/f%03d" % i for i in range(1, 23, 2))
    c.check("pages of 4: every page's objects hold", p.returncode == 1
            and p.stdout.decode().splitlines() == want, show(p))


def names(c):
    """Keys with a newline, a tab, a backslash: no forged line, exact in JSON."""
    files = {"a": b"alpha\n", "b": b"bravo\n", "c": b"charlie\n", "new\nline": b"delta\n", "e": b"echo\n"}
    # (No '//' in it: a key keys.rs refuses is never asked for, below.)
    forged = b"p/x\ncontained\tsrc/e\ts3:/b/p\ts3:/b/p/y"
    objects = {b"p/new\nline": Obj(b"alpha\n"), b"p/t\tab": Obj(b"bravo\n"),
               b"p/back\\slash": Obj(b"charlie\n"), forged: Obj(b"delta\n"),
               "p/caf\u00e9/\u4e2d".encode(): Obj(b"echo\n")}
    d = c.case(files, objects)
    p = c.run(d, "-v", "src", "--in", "s3://b/p")
    got = p.stdout.decode("utf-8", "replace").splitlines()
    want = {
        "\\contained\tsrc/a\ts3://b/p\ts3://b/p/" + escaped("new\nline"),
        "\\contained\tsrc/b\ts3://b/p\ts3://b/p/" + escaped("t\tab"),
        "\\contained\tsrc/c\ts3://b/p\ts3://b/p/" + escaped("back\\slash"),
        "\\contained\tsrc/" + escaped("new\nline") + "\ts3://b/p\ts3://b/p/" + escaped(forged.decode()[2:]),
        "contained\tsrc/e\ts3://b/p\ts3://b/p/caf\u00e9/\u4e2d",
    }
    c.check("keys with a newline, tab, backslash: escaped, one line a file, none forged",
            set(got) == want and len(got) == 5 and p.returncode == 0, (sorted(set(got) ^ want), show(p)))
    p = c.run(d, "--json", "src", "--in", "s3://b/p")
    r = records(p.stdout)
    copies = {k: v.get("copy") for k, v in r.items()}
    c.check("--json: the copy is the exact key",
            copies == {"src/a": "s3://b/p/new\nline", "src/b": "s3://b/p/t\tab",
                       "src/c": "s3://b/p/back\\slash", "src/new\nline": "s3://b/" + forged.decode(),
                       "src/e": "s3://b/p/caf\u00e9/\u4e2d"}, copies)
    # A key that is not UTF-8 (or that keys.rs refuses otherwise) is never
    # asked for: the file of its size it might hold is a problem, named,
    # with or without --download, and no request names the key.
    d = c.case({"a": b"alpha\n"}, {b"p/\xff\xfe": Obj(b"alpha\n")})
    for extra in ([], ["--download"]):
        c.fake.requests.clear()
        p = c.run(d, *extra, "--json", "src", "--in", "s3://b/p")
        r = records(p.stdout).get("src/a", {})
        asked = [q for m, q in c.fake.requests if not q.split("?")[0].endswith("/b/")]
        c.check("a non-UTF-8 key %s: no verdict (exit 2), never asked for" % extra,
                p.returncode == 2 and "error" in r and "contained" not in r and asked == [],
                (r, show(p), asked))


def remove_refused(c):
    s = b"kept bytes\n"
    for archives in (["s3://b/p"], ["s3://b/p", "arc"], ["arc", "s3://b/p"]):
        for dry in ([], ["--dry-run"]):
            d = c.case({"s": s, "t": b"t\n"}, {b"p/s": Obj(s), b"p/t": Obj(b"t\n")}, arcs={"t": b"t\n"})
            args = ["--remove", *dry, "src"]
            for a in archives:
                args += ["--in", a]
            p = c.run(d, *args)
            c.check("--remove with an s3:// archive %s%s: refused, exit 2, nothing removed" % (archives, dry),
                    p.returncode == 2 and p.stdout == b"" and b"--remove refused" in p.stderr
                    and os.path.exists(os.path.join(d, "src/s")) and os.path.exists(os.path.join(d, "src/t")),
                    show(p))
            gets = [q for m, q in c.fake.requests if m == "GET" and "list-type" not in q
                    and "attributes" not in q]
            c.check("--remove refused: no object's body read %s%s" % (archives, dry),
                    gets == [], c.fake.requests)


def union(c):
    rng = random.Random(6)
    x, y, z, w = (rng.randbytes(n) for n in (10, 20, 30, 40))
    d = c.case({"x": x, "y": y, "z": z, "both": w},
               {b"p/x": Obj(x), b"p/both": Obj(w)}, arcs={"y": y, "both": w})
    p = c.run(d, "-v", "src", "--in", "s3://b/p", "--in", "arc")
    got = p.stdout.decode().splitlines()
    c.check("union s3:// + DIR: each file where its bytes are",
            "contained\tsrc/x\ts3://b/p\ts3://b/p/x" in got and "contained\tsrc/y\tarc\tarc/y" in got
            and "src/z" in got and any(l.startswith("contained\tsrc/both\t") for l in got)
            and len(got) == 4 and p.returncode == 1, show(p))
    # Two s3:// archives, two endpoints' worth of prefixes.
    c.fake.objects[b"q/z"] = Obj(z)
    p = c.run(d, "-v", "src", "--in", "s3://b/p", "--in", "s3://b/q")
    got = p.stdout.decode().splitlines()
    c.check("union of two prefixes", "contained\tsrc/z\ts3://b/q\ts3://b/q/z" in got
            and "src/y" in got and p.returncode == 1, show(p))
    # A doubt in one archive, the copy in another: contained, whatever the order.
    s = rng.randbytes(64)
    for order in (["s3://b/p", "s3://b/q"], ["s3://b/q", "s3://b/p"], ["arc", "s3://b/p"], ["s3://b/p", "arc"]):
        d2 = c.case({"s": s}, {b"p/opaque": Obj(rng.randbytes(64), KMS, etag="0" * 32), b"q/copy": Obj(s)},
                    arcs={"copy": s})
        args = ["-v", "src"]
        for a in order:
            args += ["--in", a]
        p = c.run(d2, *args)
        check = c.check
        check("an opaque object in one archive, the copy in another %s: contained, exit 0" % order,
              p.returncode == 0 and p.stdout.startswith(b"contained\tsrc/s\t"), show(p))
    c.fake.objects = {b"p/x": Obj(x), b"p/both": Obj(w), b"q/z": Obj(z)}
    # The same prefix twice: one archive, no double count, no trouble.
    p = c.run(d, "src", "--in", "s3://b/p", "--in", "s3://b/p")
    c.check("the same prefix twice", p.returncode == 1
            and sorted(p.stdout.decode().splitlines()) == ["src/y", "src/z"], show(p))


def more_lies(c):
    """Part counts that disagree, retries, the endpoint's order, keys with
    dot-segments, overlapping sources."""
    check = c.check
    rng = random.Random(7)
    data = rng.randbytes(3000)
    # A multipart ETag of 2 parts' MD5s that says -3: no copy.
    obj = Obj(data, parts=[1500, 1500])
    obj.etag = obj.etag.rsplit("-", 1)[0] + "-3"
    for attrs in (True, False):
        obj.attrs_parts = attrs
        d = c.case({"f": data}, {b"p/mp": obj})
        p = c.run(d, "src", "--in", "s3://b/p")
        check("a multipart ETag whose -N is not the part count: never contained (%s)"
              % ("attrs" if attrs else "partNumber"), p.returncode in (1, 2)
              and b"contained" not in p.stdout.replace(b"not contained", b""), show(p))
    # A composite SHA-256 of 2 parts that says -3, the ETag opaque.
    comp = hashlib.sha256(hashlib.sha256(data[:1500]).digest() + hashlib.sha256(data[1500:]).digest()).digest()
    obj = Obj(data, dict(KMS, **{"x-amz-checksum-sha256": b64(comp) + "-3", "x-amz-checksum-type": "COMPOSITE"}),
              parts=[1500, 1500])
    d = c.case({"f": data}, {b"p/mp": obj})
    p = c.run(d, "--json", "src", "--in", "s3://b/p")
    r = records(p.stdout).get("src/f", {})
    check("a composite checksum whose -N is not the part count: never contained",
          r.get("contained") is not True and p.returncode in (1, 2), show(p))
    # 503 SlowDown, retried: the same answer.
    d = c.case({"a": b"aaaa", "b": b"bbbb"}, {b"p/a": Obj(b"aaaa"), b"p/x": Obj(b"BBBB")})
    c.fake.fail_first = 3
    p = c.run(d, "src", "--in", "s3://b/p")
    check("503 SlowDown retried: the same answer", p.returncode == 1 and p.stdout == b"src/b\n", show(p))
    # AWS_ENDPOINT_URL_S3 before AWS_ENDPOINT_URL (a closed port).
    env = env_for("http://127.0.0.1:9")
    env["AWS_ENDPOINT_URL_S3"] = c.endpoint
    p = subprocess.run([c.fastsum, "contained", "src", "--in", "s3://b/p"], cwd=d, env=env,
                       capture_output=True, timeout=60)
    check("AWS_ENDPOINT_URL_S3 is the endpoint asked", p.returncode == 1 and p.stdout == b"src/b\n", show(p))
    # An endpoint that refuses connections: trouble, no file said not contained.
    p = c.run(d, "src", "--in", "s3://b/p", endpoint="http://127.0.0.1:9", timeout=120)
    check("no endpoint: exit 2, nothing said not contained", p.returncode == 2 and p.stdout == b"", show(p))
    # A key with dot-segments is asked as itself, never as the object its
    # path normalizes to (outside the prefix): the object there has the
    # listed (opaque) ETag and the file's bytes; the listed one does not.
    d = c.case({"a": b"evil"}, {b"p/../evil": Obj(b"good", KMS, etag="1" * 32),
                                b"evil": Obj(b"evil", KMS, etag="1" * 32)})
    for extra in ([], ["--download"]):
        p = c.run(d, *extra, "-v", "src", "--in", "s3://b/p")
        outside = [q.split("?")[0] for m, q in c.fake.requests if q.split("?")[0] == "/b/evil"]
        check("a key p/../evil is never read as the object evil %s" % extra,
              b"contained\t" not in p.stdout and outside == [] and p.returncode in (1, 2),
              (show(p), outside))
        c.fake.requests.clear()
    d = c.case({"a": b"evil", "b": b"good"}, {b"p/./x": Obj(b"evil"), b"p/y/../z": Obj(b"good", KMS, etag="2" * 32)})
    p = c.run(d, "-v", "--download", "src", "--in", "s3://b/p")
    normalized = [q.split("?")[0] for m, q in c.fake.requests if q.split("?")[0] in ("/b/p/x", "/b/p/z")]
    check("keys p/./x, p/y/../z: never a request for p/x or p/z", normalized == [], normalized)
    check("keys with dot-segments are never asked for: the files of their size are problems",
          p.returncode == 2 and p.stdout == b"" and b"src/a:" in p.stderr and b"src/b:" in p.stderr,
          show(p))
    # Overlapping sources count each file once.
    d = c.case({"a": b"aaaa", "sub/b": b"bbbb"}, {b"p/a": Obj(b"aaaa")})
    p = c.run(d, "-v", "src", "src/sub", "--in", "s3://b/p")
    check("overlapping sources: each file once", p.returncode == 1
          and sorted(p.stdout.decode().splitlines()) == ["contained\tsrc/a\ts3://b/p\ts3://b/p/a", "src/sub/b"],
          show(p))
    # A source inside nothing: a missing source is trouble, the rest answered.
    p = c.run(d, "src", "nosuch", "--in", "s3://b/p")
    check("a missing source: exit 2, the rest answered", p.returncode == 2 and p.stdout == b"src/sub/b\n"
          and b"nosuch" in p.stderr, show(p))


def still_more(c):
    check = c.check
    # A checksum header in another case: HTTP names are case-blind.
    d = c.case({"coll": COLLISION_B}, {b"p/coll": Obj(COLLISION_A, {"X-Amz-Checksum-CRC64NVME": b64(crc64nvme(COLLISION_A))})})
    p = c.run(d, "src", "--in", "s3://b/p")
    check("a checksum header in capitals still counts (collision not contained)",
          p.returncode == 1 and p.stdout == b"src/coll\n", show(p))
    # A checksum of an algorithm fastsum does not know: never outvoted by
    # the colliding MD5 beside it.
    d = c.case({"coll": COLLISION_B}, {b"p/coll": Obj(COLLISION_A, {"x-amz-checksum-crc128": b64(b"\1" * 16)})})
    p = c.run(d, "--json", "src", "--in", "s3://b/p")
    r = records(p.stdout).get("src/coll", {})
    check("an unknown x-amz-checksum-* beside a colliding MD5: never contained",
          r.get("contained") is not True and p.returncode in (1, 2), show(p))
    # Encryptions: DSSE-KMS is opaque; SSE-S3 (AES256) keeps the MD5.
    s, other = b"sixteen bytes!!!", b"SIXTEEN BYTES!!!"
    d = c.case({"s": s}, {b"p/o": Obj(other, {"x-amz-server-side-encryption": "aws:kms:dsse"},
                                      etag=hashlib.md5(s).hexdigest())})
    p = c.run(d, "src", "--in", "s3://b/p")
    check("DSSE-KMS: the ETag is no MD5 (a problem, never contained)", p.returncode == 2 and p.stdout == b"", show(p))
    d = c.case({"s": s}, {b"p/o": Obj(s, {"x-amz-server-side-encryption": "AES256"})})
    p = c.run(d, "src", "--in", "s3://b/p")
    check("SSE-S3 (AES256): the ETag is the MD5", p.returncode == 0, show(p))
    # An empty object whose digests say it is not empty: no copy of an empty file.
    for name, obj in [("an MD5 ETag of b'x'", Obj(b"", etag=hashlib.md5(b"x").hexdigest())),
                      ("a CRC-64/NVME of b'x'", Obj(b"", {"x-amz-checksum-crc64nvme": b64(crc64nvme(b"x"))}))]:
        d = c.case({"e": b""}, {b"p/e": obj})
        p = c.run(d, "--json", "src", "--in", "s3://b/p")
        r = records(p.stdout).get("src/e", {})
        check("an empty object with %s holds no empty file" % name,
              r.get("contained") is not True and p.returncode in (1, 2), show(p))
    # A part count past S3's 10,000: an error in a few requests.
    d = c.case({"a": b"aaaa"}, {b"p/a": Obj(b"aaaa", etag=hashlib.md5(b"aaaa").hexdigest() + "-999999999")})
    p = c.run(d, "src", "--in", "s3://b/p", timeout=60)
    check("a multipart ETag of 999999999 parts: a problem, few requests",
          p.returncode == 2 and b"s3://b/p/a" in p.stderr and len(c.fake.requests) < 20,
          (show(p), len(c.fake.requests)))
    # Ever-new continuation tokens: an error in a few requests.
    from s3_lies import Endless
    a = Obj(b"aaaa")
    d = c.case({"a": b"aaaa"}, {b"p/a": a})
    c.fake.listing = Endless(lambda i: listing_xml([], str(i + 1)))
    p = c.run(d, "src", "--in", "s3://b/p", timeout=60)
    check("ever-new tokens, empty pages: exit 2, few requests", p.returncode == 2 and p.stdout == b""
          and len(c.fake.requests) < 20, (show(p), len(c.fake.requests)))
    # --dirs with an s3:// archive; a skipped entry keeps exit 0 honest.
    d = c.case({"whole/a": b"aaaa", "whole/b": b"bbbb", "part/a": b"aaaa", "part/c": b"cccc"},
               {b"p/a": Obj(b"aaaa"), b"p/b": Obj(b"bbbb")})
    p = c.run(d, "--dirs", "src", "--in", "s3://b/p")
    check("--dirs with an s3:// archive", p.returncode == 1 and p.stdout == b"8 bytes, 2 files\tsrc/whole\n", show(p))
    d = c.case({"whole/a": b"aaaa", "whole/s": b"ssss", "ok/a": b"aaaa"},
               {b"p/a": Obj(b"aaaa"), b"p/kms": Obj(b"SSSS", KMS, etag="0" * 32)})
    p = c.run(d, "--dirs", "src", "--in", "s3://b/p")
    check("--dirs: a directory with a file of no verdict below is never listed",
          p.returncode == 2 and p.stdout == b"4 bytes, 1 file\tsrc/ok\n", show(p))
    d = c.case({"a": b"aaaa"}, {b"p/a": Obj(b"aaaa")})
    os.symlink("a", os.path.join(d, "src", "link"))
    p = c.run(d, "src", "--in", "s3://b/p")
    check("a symbolic link in the source: skipped, exit 1", p.returncode == 1 and p.stdout == b"", show(p))


def cache(c):
    """--cache: an unchanged re-run asks nothing per object; what a lying
    endpoint said never answers for another."""
    check = c.check
    liar = Fake2()
    try:
        here = b"the file as it is here"
        there = b"the file as it is THERE"[:len(here)]
        d = c.case({"f": here, "g": b"gg"}, {b"p/f": Obj(there), b"p/g": Obj(b"gg")})
        liar.objects = {b"p/f": Obj(there, dict(KMS, **{"x-amz-checksum-sha256": b64(hashlib.sha256(here).digest())})),
                        b"p/g": Obj(b"gg")}
        db = os.path.join(d, "cache.sqlite")
        p = c.run(d, "--cache=" + db, "src", "--in", "s3://b/p", endpoint="http://127.0.0.1:%d" % liar.port)
        check("--cache: the liar is believed where it is asked", p.returncode == 0, show(p))
        p = c.run(d, "--cache=" + db, "src", "--in", "s3://b/p")
        check("--cache: the liar's claim never answers for the honest endpoint",
              p.returncode == 1 and p.stdout == b"src/f\n", show(p))
        c.fake.requests.clear()
        p = c.run(d, "--cache=" + db, "src", "--in", "s3://b/p")
        check("--cache: an unchanged re-run, the listing only", p.returncode == 1 and p.stdout == b"src/f\n"
              and c.fake.count("HEAD") == 0, (show(p), c.fake.requests))
        # The object replaced (another ETag in the listing): asked again.
        c.fake.objects[b"p/f"] = Obj(here)
        p = c.run(d, "--cache=" + db, "src", "--in", "s3://b/p")
        check("--cache: a claim the listing contradicts is asked again", p.returncode == 0, show(p))
    finally:
        liar.stop()


def verify(c):
    """--verify: the object that holds a file is streamed and compared."""
    check = c.check
    d = c.case({"coll": COLLISION_B}, {b"p/coll": Obj(COLLISION_A)})
    p = c.run(d, "-v", "src", "--in", "s3://b/p")
    check("an MD5-only object colliding with the file: contained on S3's word (no --verify)",
          p.returncode == 0 and p.stdout == b"contained\tsrc/coll\ts3://b/p\ts3://b/p/coll\n", show(p))
    c.fake.requests.clear()
    p = c.run(d, "--json", "--verify", "src", "--in", "s3://b/p")
    r = records(p.stdout).get("src/coll", {})
    gets = [q for m, q in c.fake.requests if m == "GET" and "list-type" not in q and "attributes" not in q]
    check("--verify: the colliding object is streamed, other bytes: trouble, never contained",
          p.returncode == 2 and r.get("contained") is not True and "error" in r and len(gets) == 1
          and b"s3://b/p/coll" in p.stderr, (show(p), c.fake.requests))
    write_tree(os.path.join(d, "src"), {"coll": COLLISION_A})
    c.fake.requests.clear()
    c.fake.if_match.clear()
    p = c.run(d, "--verify", "src", "--in", "s3://b/p")
    check("--verify: the same bytes streamed: contained", p.returncode == 0 and p.stdout == b""
          and c.fake.if_match == [(b"p/coll", '"%s"' % hashlib.md5(COLLISION_A).hexdigest())],
          (show(p), c.fake.if_match))
    c.fake.body_override = {b"p/coll": COLLISION_A[:100]}
    p = c.run(d, "--verify", "src", "--in", "s3://b/p")
    check("--verify: a body shorter than listed: trouble", p.returncode == 2 and p.stdout == b"", show(p))


def mixed_forms(c):
    """Many objects of one size, each in its own form: every file matched
    to the object that holds it, in that object's part sizes."""
    rng = random.Random(8)
    X, Y, Z, W, U, V = (rng.randbytes(3000) for _ in range(6))
    zc = crc32c(crc32c(Z[:1500]) + crc32c(Z[1500:]))
    objects = {
        b"p/1-x": Obj(X, parts=[1024, 1024, 952]),
        b"p/2-y": Obj(Y, parts=[1000, 2000], attrs_parts=False),
        b"p/3-z": Obj(Z, dict(KMS, **{"x-amz-checksum-crc32c": b64(zc) + "-2", "x-amz-checksum-type": "COMPOSITE"}),
                      parts=[1500, 1500]),
        b"p/4-w": Obj(W),
        b"p/5-u": Obj(U, dict(KMS, **{"x-amz-checksum-crc64nvme": b64(crc64nvme(U))})),
        b"p/6-collide": Obj(X[:-1] + bytes([X[-1] ^ 1]), parts=[1024, 1024, 952]),
    }
    d = c.case({"x": X, "y": Y, "z": Z, "w": W, "u": U, "v": V}, objects)
    p = c.run(d, "--json", "src", "--in", "s3://b/p")
    r = records(p.stdout)
    got = {k: v.get("copy") for k, v in r.items()}
    want = {"src/x": "s3://b/p/1-x", "src/y": "s3://b/p/2-y", "src/z": "s3://b/p/3-z",
            "src/w": "s3://b/p/4-w", "src/u": "s3://b/p/5-u", "src/v": None}
    c.check("one size, six forms: each file to the object holding it", got == want and p.returncode == 1,
            (got, show(p)))


def fake_suite(fastsum, check, tmp):
    c = Ctx(fastsum, check, tmp)
    try:
        for test in (basics, requests_only_for_candidates, every_digest, multipart, opaque,
                     listing_lies, pages, names, remove_refused, union, more_lies, still_more, cache, verify, mixed_forms):
            try:
                test(c)
            except Exception as e:  # a broken test is a failure, never a stop
                import traceback
                check("fake test %s ran" % test.__name__, False, traceback.format_exc())
    finally:
        c.fake.stop()


# ------------------------------------------------------------------ SeaweedFS

def start_weed(weed, tmp, attempt=0):
    """s3_weed.start's server on other ports (s3_suite's own SeaweedFS may
    have just stopped on the pid's), in a data directory of its own."""
    base = random.Random(os.getpid() * 7 + 1 + attempt).randrange(40000, 60000, 20)
    data = os.path.join(tmp, "weed-contained-%d" % attempt)
    os.makedirs(data)
    ports = dict(zip(["master.port", "master.port.grpc", "volume.port", "volume.port.grpc",
                      "filer.port", "filer.port.grpc", "s3.port", "admin.port",
                      "admin.port.grpc", "debug.port"], range(base, base + 10)))
    args = [weed, "mini", "-dir=" + data, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-master.telemetry=false", "-webdav=false", "-admin.ui=false",
            "-s3.port.iceberg=0", "-s3.port.lance=0", "-admin.port.legacy=0"]
    args += ["-%s=%d" % kv for kv in ports.items()]
    env = dict(os.environ, AWS_ACCESS_KEY_ID="AKTEST", AWS_SECRET_ACCESS_KEY="SKTEST123")
    log = open(os.path.join(tmp, "weed-contained-%d.log" % attempt), "wb")
    proc = subprocess.Popen(args, env=env, stdout=log, stderr=log, cwd=data)
    return proc, "http://127.0.0.1:%d" % ports["s3.port"]


def weed_suite(fastsum, weed, check, tmp):
    import signal
    import s3_weed
    # Started again on other ports if it exits at once (a port taken).
    for attempt in range(3):
        proc, endpoint = start_weed(weed, tmp, attempt)
        s3, plain = s3_weed.client(endpoint), s3_weed.client(endpoint, "when_required")
        try:
            s3_weed.wait_ready(s3, proc)
            break
        except RuntimeError:
            proc.kill()
            proc.wait()
            if attempt == 2:
                with open(os.path.join(tmp, "weed-contained-%d.log" % attempt), "rb") as f:
                    raise RuntimeError("weed did not start: %r" % f.read()[-1500:])
    try:
        for seed in os.environ.get("FASTSUM_S3_SEEDS", "65,66,67").split(","):
            differential(fastsum, s3, plain, endpoint, check, tmp, int(seed))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def differential(fastsum, s3, plain, endpoint, check, tmp, seed):
    import s3_weed
    rng = random.Random(seed)
    bucket = s3_weed.BUCKET
    root = os.path.join(tmp, "weed-diff-%d" % seed)
    pre = "s%d/arc" % seed
    src, arc = os.path.join(root, "src"), os.path.join(root, "arc")
    os.makedirs(src)
    os.makedirs(arc)
    objects = {}  # key -> bytes (under arc/ in the bucket)
    sources = {}  # relative path -> bytes
    local_arc = {}
    names = ["a", "b.txt", "with space", "new\nline", "caf\u00e9", "tab\there", "back\\slash"]

    def where():
        depth = rng.randrange(0, 4)
        return "/".join(["d%d" % rng.randrange(3) for _ in range(depth)]
                        + ["%s-%d" % (rng.choice(names), rng.randrange(10 ** 6))])

    single = [(None, None, None)] + [(a, None, None) for a in s3_weed.ALGOS]
    multi = [(None, 5 << 20, None)] + [(a, 5 << 20, "COMPOSITE") for a in s3_weed.ALGOS if a != "CRC64NVME"] \
        + [(a, 5 << 20, "FULL_OBJECT") for a in ("CRC32", "CRC32C", "CRC64NVME")]
    sizes = [1, 2, 100, 4095, 4096, 4097, 8192, 12345, 70000]
    uploads = []
    contents = [rng.randbytes(rng.choice(sizes)) for _ in range(rng.randrange(14, 20))]
    mp_layouts = rng.sample(multi, 4)
    contents += [rng.randbytes((5 << 20) + rng.randrange(1, 70000)) for _ in mp_layouts]
    for i, data in enumerate(contents):
        big = len(data) > (5 << 20)
        layout = mp_layouts[i - (len(contents) - len(mp_layouts))] if big else rng.choice(single)
        r = rng.random()
        if r < 0.7 or big:
            uploads.append((where(), data, layout))
        if r < 0.2:
            uploads.append((where(), data, rng.choice(single)))  # a second copy
        if 0.7 <= r < 0.8 and not big:
            local_arc[where()] = data  # in the union's directory only
        sources[where()] = data
        if rng.random() < 0.3:
            sources[where()] = data
        flip = lambda at: data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]
        t = rng.random()
        if big:
            sources[where()] = flip(len(data) - 1 - rng.randrange(3))  # in the last part
            sources[where()] = flip(rng.randrange(5 << 20))  # in the first
        elif t < 0.25:
            sources[where()] = flip(len(data) - 1)
        elif t < 0.5:
            sources[where()] = flip(0)
        elif t < 0.65 and len(data) > 8192:
            sources[where()] = flip(len(data) // 2)
        elif t < 0.85:
            sources[where()] = rng.randbytes(len(data))
    sources["empty-1"] = b""
    sources["d0/empty-2"] = b""
    if seed % 2 == 1:
        uploads.append(("none/empty", b"", (None, None, None)))
    # A copy beside the prefix: never in it.
    sibling = rng.randbytes(333)
    sources["sibling-only"] = sibling
    s3.put_object(Bucket=bucket, Key=pre + "-sibling/x", Body=sibling)
    s3.put_object(Bucket=bucket, Key=pre + "x", Body=sibling)
    for key, data, layout in uploads:
        if key in objects:
            continue
        s3_weed.upload(s3, plain, pre + "/" + key, data, layout)
        objects[key] = data
    write_tree(src, sources)
    write_tree(arc, local_arc)
    # The server's own account of the prefix (keys as it keeps them:
    # SeaweedFS turns a backslash into a slash), each body read back.
    listed = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=pre + "/"):
        for o in page.get("Contents", []):
            listed[o["Key"]] = s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read()
    check("weed seed %d: the server keeps what was uploaded" % seed,
          sorted(listed.values()) == sorted(objects.values()), (len(listed), len(objects)))
    held = set(listed.values())
    where_held = {}
    for k, v in listed.items():
        where_held.setdefault(v, set()).add("s3://%s/%s" % (bucket, k))
    url = "s3://%s/%s" % (bucket, pre)

    def verify(args, want_union, label):
        p = subprocess.run([fastsum, "contained", "--json", *args], cwd=root, env=env_for(endpoint),
                           capture_output=True, timeout=120)
        r = records(p.stdout)
        wrong = []
        for rel, data in sources.items():
            path = "src/" + rel
            rec = r.get(path)
            ok = data in held or (want_union and data in local_arc.values())
            if rec is None or rec.get("contained") is not ok:
                wrong.append((path, len(data), ok, rec))
            elif ok and rec.get("archive") == url and rec.get("copy") not in where_held.get(data, ()):
                wrong.append((path, "copy holds other bytes", rec))
        missing = sum(1 for d in sources.values()
                      if not (d in held or (want_union and d in local_arc.values())))
        check("weed seed %d %s: every verdict is the oracle's" % (seed, label),
              not wrong and len(r) == len(sources), (wrong[:10], len(r), len(sources), p.stderr[-1500:]))
        check("weed seed %d %s: exit status" % (seed, label),
              p.returncode == (1 if missing else 0), (p.returncode, p.stderr[-1500:]))
        return missing

    t0 = time.monotonic()
    missing = verify(["src", "--in", url], False, "s3:// alone")
    verify(["src", "--in", url, "--in", "arc"], True, "s3:// + DIR")
    verify(["--download", "src", "--in", url], False, "--download")
    verify(["--s3-path-style", "src", "--in", url + "/"], False, "--s3-path-style, prefix/")
    p = subprocess.run([fastsum, "contained", "src", "--in", url], cwd=root, env=env_for(endpoint),
                       capture_output=True, timeout=120)
    check("weed seed %d text: one line a file not contained" % seed,
          p.stdout.count(b"\n") == missing, (p.stdout, missing))
    p = subprocess.run([fastsum, "contained", "-v", "src", "--in", url], cwd=root, env=env_for(endpoint),
                       capture_output=True, timeout=120)
    check("weed seed %d -v: one line a file" % seed, p.stdout.count(b"\n") == len(sources),
          (p.stdout.count(b"\n"), len(sources)))
    check("weed seed %d: some contained, some not, multipart both ways" % seed,
          0 < missing < len(sources) and any(len(d) > (5 << 20) and d in held for d in sources.values())
          and any(len(d) > (5 << 20) and d not in held for d in sources.values()))
    return time.monotonic() - t0


def run_all(fastsum, weed, check):
    fastsum = os.path.abspath(fastsum)
    with tempfile.TemporaryDirectory(prefix="s3c-") as tmp:
        fake_suite(fastsum, check, tmp)
        if weed:
            try:
                weed_suite(fastsum, os.path.abspath(weed), check, tmp)
            except Exception:
                import traceback
                check("weed suite ran", False, traceback.format_exc())


if __name__ == "__main__":
    PASSED, FAILED = [0], [0]

    def _check(name, ok, detail=""):
        if ok:
            PASSED[0] += 1
            if os.environ.get("S3C_VERBOSE"):
                print("ok: %s" % name, file=sys.stderr)
        else:
            FAILED[0] += 1
            print("FAIL: %s %s" % (name, detail), file=sys.stderr)

    started = time.monotonic()
    run_all(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "", _check)
    print("s3 contained: %d passed, %d failed (%.0f s)" % (PASSED[0], FAILED[0], time.monotonic() - started))
    sys.exit(1 if FAILED[0] else 0)
