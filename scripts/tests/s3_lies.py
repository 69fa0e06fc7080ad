"""What an S3 endpoint may lie about, against the fake endpoint
(s3_fake.py), run by s3_suite.py. Every expectation is computed here, independently of
fastsum (hashlib, zlib, and the CRC-64/NVME and CRC-32C of this file,
checked against their catalogue check values):

1. every digest S3 gives is compared: an object that is one of a published
   pair of 128-byte files with one MD5, the other in the local tree, is
   modified though its ETag agrees (its CRC-64/NVME, CRC-32C or CRC-32
   does not), in both orders and in --plan;
2. the claim cache is the endpoint's: what a lying endpoint said with
   --cache never answers for the honest one;
3. a lying server never keeps fastsum asking: continuation tokens that
   cycle, ever-new tokens with empty pages or with the same page, and part
   counts of -999999999 end in an error naming the prefix or the object,
   exit 2, in a few requests.

And what the hostile pass over these found (the issue's "hostile pass"):
a listing page cut short is never the last page; a header given twice
with two values is no answer; any server-side encryption but AES256 makes
the ETag opaque; a checksum S3 gives that cannot be computed (a composite
whose parts are not to be had) leaves the object unverifiable, never
decided by the MD5 beside it.
"""

import base64
import hashlib
import json
import os
import subprocess
import zlib

# Wang, Yu et al.'s pair (2004): two 128-byte blocks with one MD5.
COLLISION_A = bytes.fromhex(
    "d131dd02c5e6eec4693d9a0698aff95c2fcab58712467eab4004583eb8fb7f89"
    "55ad340609f4b30283e488832571415a085125e8f7cdc99fd91dbdf280373c5b"
    "d8823e3156348f5bae6dacd436c919c6dd53e2b487da03fd02396306d248cda0"
    "e99f33420f577ee8ce54b67080a80d1ec69821bcb6a8839396f9652b6ff72a70")
COLLISION_B = bytes.fromhex(
    "d131dd02c5e6eec4693d9a0698aff95c2fcab50712467eab4004583eb8fb7f89"
    "55ad340609f4b30283e4888325f1415a085125e8f7cdc99fd91dbd7280373c5b"
    "d8823e3156348f5bae6dacd436c919c6dd53e23487da03fd02396306d248cda0"
    "e99f33420f577ee8ce54b67080280d1ec69821bcb6a8839396f965ab6ff72a70")


def crc_reflected(data, poly, width):
    mask = (1 << width) - 1
    crc = mask
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (poly if crc & 1 else 0)
    return crc ^ mask


def crc64nvme(data):
    return crc_reflected(data, 0x9A6C9329AC4BC9B5, 64).to_bytes(8, "big")


def crc32c(data):
    return crc_reflected(data, 0x82F63B78, 32).to_bytes(4, "big")


def crc32(data):
    return zlib.crc32(data).to_bytes(4, "big")


assert crc64nvme(b"123456789").hex() == "ae8b14860a799888"
assert crc32c(b"123456789").hex() == "e3069283"
assert COLLISION_A != COLLISION_B
assert hashlib.md5(COLLISION_A).digest() == hashlib.md5(COLLISION_B).digest()


def b64(data):
    return base64.b64encode(data).decode()


def every_digest(fake, endpoint, tmp, check, run, Obj, write_tree):
    d = os.path.join(tmp, "collision")
    write_tree(d, {"coll": COLLISION_B})
    for name, crc in [("crc64nvme", crc64nvme), ("crc32c", crc32c), ("crc32", crc32)]:
        headers = {"x-amz-checksum-" + name: b64(crc(COLLISION_A)),
                   "x-amz-checksum-type": "FULL_OBJECT"}
        fake.objects = {b"p/coll": Obj(COLLISION_A, headers)}
        assert fake.objects[b"p/coll"].etag == hashlib.md5(COLLISION_B).hexdigest()
        for args in (["s3://b/p", d], [d, "s3://b/p"]):
            p = run(endpoint, *args)
            check("an MD5 collision beside S3's %s is a change %s" % (name, args),
                  p.returncode == 1 and p.stdout.strip().endswith(b"coll"),
                  (p.returncode, p.stdout, p.stderr))
        p = run(endpoint, "--plan", d, "s3://b/p")
        plan = json.loads(p.stdout or b"{}")
        sent = [(e.get("path"), e.get("change")) for e in plan.get("send", [])]
        check("--plan sends the colliding file (%s)" % name,
              p.returncode == 1 and sent == [("coll", "modified")], (p.returncode, plan, p.stderr))
        # The same bytes: every digest agrees.
        write_tree(d, {"coll": COLLISION_A})
        p = run(endpoint, "s3://b/p", d)
        check("the same bytes agree in MD5 and %s" % name, p.returncode == 0 and p.stdout == b"",
              (p.returncode, p.stdout, p.stderr))
        write_tree(d, {"coll": COLLISION_B})


def cache_of_an_endpoint(fake, liar, tmp, check, run, Obj, write_tree):
    d = os.path.join(tmp, "liar")
    write_tree(d, {"f": b"the file as it is here"})
    changed = b"the file as it is THERE"[:len(b"the file as it is here")]
    honest = {b"p/f": Obj(changed)}
    # The liar lists the same object (key, size, ETag, LastModified) and
    # claims the local file's SHA-256, its ETag made opaque by SSE-KMS.
    lie = Obj(changed, {"x-amz-checksum-sha256": b64(hashlib.sha256(b"the file as it is here").digest()),
                        "x-amz-server-side-encryption": "aws:kms"})
    fake.objects, liar.objects = honest, {b"p/f": lie}
    cache = os.path.join(tmp, "liar-cache.sqlite")
    lied = run("http://127.0.0.1:%d" % liar.port, "--cache=" + cache, "s3://b/p", d)
    check("the liar is believed where it is asked (its own claim)", lied.returncode == 0,
          (lied.returncode, lied.stdout, lied.stderr))
    honest_run = run("http://127.0.0.1:%d" % fake.port, "--cache=" + cache, "s3://b/p", d)
    check("the liar's cached claim never answers for the honest endpoint",
          honest_run.returncode == 1 and honest_run.stdout.strip().endswith(b"f"),
          (honest_run.returncode, honest_run.stdout, honest_run.stderr))


class Endless:
    """Listing pages made on demand: page i says the next token is i + 1."""

    def __init__(self, page):
        self.page = page

    def __getitem__(self, i):
        return self.page(i)


def bounded(fake, endpoint, tmp, check, run, Obj, write_tree, listing_xml):
    d = os.path.join(tmp, "bounded")
    write_tree(d, {"a": b"aaaa"})
    a = Obj(b"aaaa")
    fake.objects = {b"p/a": a}
    cases = {
        "a cycle of empty pages (A, B, A, B ...)": [listing_xml([], "1"), listing_xml([], "0")],
        "a cycle of tokens with keys": [listing_xml([(b"p/a", a)], "1"), listing_xml([], "2"),
                                        listing_xml([], "1")],
        "ever-new tokens, empty pages": Endless(lambda i: listing_xml([], str(i + 1))),
        "ever-new tokens, the same page": Endless(lambda i: listing_xml([(b"p/a", a)], str(i + 1))),
    }
    for name, pages in cases.items():
        fake.listing = pages
        fake.requests.clear()
        try:
            p = run(endpoint, "s3://b/p", d, timeout=60)
        except subprocess.TimeoutExpired:
            check("a lying listing ends: " + name, False, "still asking after 60 s")
            continue
        check("a lying listing ends in an error: " + name,
              p.returncode == 2 and p.stdout == b"" and b"s3://b/p" in p.stderr
              and len(fake.requests) < 20, (p.returncode, len(fake.requests), p.stderr))
    fake.listing = None
    md5 = hashlib.md5(b"aaaa").hexdigest()
    for name, obj in [
        ("a composite checksum of 999999999 parts",
         Obj(b"aaaa", {"x-amz-checksum-crc32": b64(crc32(b"x")) + "-999999999",
                       "x-amz-checksum-type": "COMPOSITE"}, attrs_parts=False)),
        ("a multipart ETag of 999999999 parts", Obj(b"aaaa", etag=md5 + "-999999999")),
    ]:
        fake.objects = {b"p/a": obj}
        fake.requests.clear()
        try:
            p = run(endpoint, "s3://b/p", d, timeout=60)
        except subprocess.TimeoutExpired:
            check("a lying part count ends: " + name, False, "still asking after 60 s")
            continue
        check("a lying part count is an error naming the object: " + name,
              p.returncode == 2 and b"s3://b/p/a" in p.stderr and b"10000" in p.stderr
              and fake.count("HEAD") < 5, (p.returncode, fake.count("HEAD"), p.stderr))


def hostile_pass(fake, endpoint, tmp, check, run, run_main, Obj, write_tree, listing_xml):
    d = os.path.join(tmp, "hostile63")
    # F1: the page stops after its first object, no IsTruncated, no end tag.
    write_tree(d, {"a": b"aaaa", "b": b"bbbb", "c": b"cccc"})
    objs = [(b"p/" + k, Obj(k * 4)) for k in (b"a", b"b", b"c")]
    whole = listing_xml(objs).decode()
    cut = whole[:whole.index("</Contents>") + len("</Contents>")].encode()
    fake.objects = dict(objs)
    fake.listing = [cut]
    for args in (["s3://b/p", d], ["--plan", d, "s3://b/p"]):
        p = run(endpoint, *args, timeout=60)
        check("a listing cut short is an error, never the last page %s" % args[0],
              p.returncode == 2 and b"only_old" not in p.stdout and b"cut short" in p.stderr,
              (p.returncode, p.stdout, p.stderr))
    p = run_main(endpoint, "-r", "s3://b/p")
    check("-r s3:// of a listing cut short: an error, no lines", p.returncode != 0 and p.stdout == b""
          and b"cut short" in p.stderr,
          (p.returncode, p.stdout, p.stderr))
    fake.listing = None
    # F2: the local file holds A, the bucket B (one MD5): a header twice.
    d = os.path.join(tmp, "hostile63-x")
    write_tree(d, {"x": COLLISION_A})
    for name, extra in [
        ("a CRC-64/NVME twice", [("x-amz-checksum-crc64nvme", b64(crc64nvme(COLLISION_B))),
                                 ("x-amz-checksum-crc64nvme", b64(crc64nvme(COLLISION_A)))]),
        ("the encryption twice", [("x-amz-server-side-encryption", "aws:kms"),
                                  ("x-amz-server-side-encryption", "AES256")]),
        ("the checksum type twice", [("x-amz-checksum-crc32", b64(crc32(COLLISION_B))),
                                     ("x-amz-checksum-type", "FULL_OBJECT"),
                                     ("x-amz-checksum-type", "COMPOSITE")]),
    ]:
        fake.objects = {b"p/x": Obj(COLLISION_B, extra=extra)}
        p = run(endpoint, "s3://b/p", d, timeout=60)
        check("a header given twice is no answer: " + name,
              p.returncode == 2 and b"twice" in p.stderr, (p.returncode, p.stdout, p.stderr))
    # F4: an encryption fastsum does not know makes the ETag opaque.
    for sse in ["AWS:KMS", "aws:fsx", "something-new"]:
        fake.objects = {b"p/x": Obj(COLLISION_B, {"x-amz-server-side-encryption": sse})}
        p = run(endpoint, "s3://b/p", d, timeout=60)
        check("the ETag under encryption %r is no MD5" % sse,
              p.returncode == 1 and p.stdout.startswith(b"?"), (p.returncode, p.stdout, p.stderr))
    fake.objects = {b"p/x": Obj(COLLISION_B, {"x-amz-server-side-encryption": "AES256"})}
    p = run(endpoint, "s3://b/p", d, timeout=60)
    check("under AES256 the ETag is the MD5 (and collides)", p.returncode == 0,
          (p.returncode, p.stdout, p.stderr))
    # F3: a checksum that cannot be placed beside a colliding MD5 ETag.
    for name, headers in [
        ("a composite SHA-256 of 2 parts", {"x-amz-checksum-sha256": b64(hashlib.sha256(b"x").digest()) + "-2",
                                            "x-amz-checksum-type": "COMPOSITE"}),
        ("a composite without -N", {"x-amz-checksum-sha256": b64(hashlib.sha256(b"x").digest()),
                                    "x-amz-checksum-type": "COMPOSITE"}),
        ("a CRC-64/NVME of 1 part", {"x-amz-checksum-crc64nvme": b64(crc64nvme(COLLISION_B)) + "-1"}),
    ]:
        fake.objects = {b"p/x": Obj(COLLISION_B, headers)}
        p = run(endpoint, "s3://b/p", d, timeout=60)
        check("a checksum that cannot be computed leaves it unverifiable: " + name,
              p.returncode == 1 and p.stdout.startswith(b"?"), (p.returncode, p.stdout, p.stderr))
