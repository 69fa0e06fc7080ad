"""S3's newer checksums against the fake endpoint, run by
s3_suite.py: ChecksumMD5, ChecksumSHA512, ChecksumXXHASH64,
ChecksumXXHASH3 and ChecksumXXHASH128 (headers x-amz-checksum-md5,
-sha512, -xxhash64, -xxhash3, -xxhash128), full-object and composite.
Every expected value comes from hashlib and the `xxhash` package, never
from fastsum: each is read and compared by `diff` (the same bytes agree, a
change of the same size is modified, even where the ETag is opaque and the
checksum is all there is), and printed by `-r s3://` in hex and in
--base64, as `fastsum -a ALGORITHM` prints the local file.
"""

import base64
import hashlib
import os
import random

import xxhash

# S3's name, fastsum's -a name, the digest of bytes (big-endian, as S3
# keeps CRCs and as xxhsum prints the canonical form).
KINDS = [
    ("md5", "md5", lambda b: hashlib.md5(b).digest()),
    ("sha512", "sha512", lambda b: hashlib.sha512(b).digest()),
    ("xxhash64", "xxh64", lambda b: xxhash.xxh64(b).digest()),
    ("xxhash3", "xxh3", lambda b: xxhash.xxh3_64(b).digest()),
    ("xxhash128", "xxh128", lambda b: xxhash.xxh3_128(b).digest()),
]

# xxhash's own check values: the library is the one S3 names.
assert xxhash.xxh64(b"").hexdigest() == "ef46db3751d8e999"
assert xxhash.xxh3_64(b"").hexdigest() == "2d06800538d394c2"
assert xxhash.xxh3_128(b"").hexdigest() == "99aa06d3014798d86001c324468d497f"


def b64(data):
    return base64.b64encode(data).decode()


def new_checksums(fake, endpoint, tmp, check, run, run_main, Obj, write_tree):
    rng = random.Random(634)
    part = 1 << 20
    data = rng.randbytes(2 * part + 12345)
    other = bytearray(data)
    other[part + 7] ^= 1
    other = bytes(other)
    parts = [part, part, len(data) - 2 * part]
    d = os.path.join(tmp, "newsums")
    for s3_name, ours, digest in KINDS:
        whole = digest(data)
        at, composite = 0, b""
        for p in parts:
            composite += digest(data[at:at + p])
            at += p
        composite = digest(composite)
        # The ETag made opaque (SSE-KMS): the checksum is all S3 says.
        kms = {"x-amz-server-side-encryption": "aws:kms"}
        forms = {
            "full-object": Obj(data, dict(kms, **{"x-amz-checksum-" + s3_name: b64(whole),
                                                  "x-amz-checksum-type": "FULL_OBJECT"})),
            "composite": Obj(data, dict(kms, **{"x-amz-checksum-" + s3_name: b64(composite) + "-3",
                                                "x-amz-checksum-type": "COMPOSITE"}), parts=parts),
        }
        for form, obj in forms.items():
            fake.objects = {b"p/f": obj}
            write_tree(d, {"f": data})
            p = run(endpoint, "s3://b/p", d)
            check("S3's %s %s agrees with the same bytes" % (form, s3_name),
                  p.returncode == 0 and p.stdout == b"", (p.returncode, p.stdout, p.stderr))
            write_tree(d, {"f": other})
            for args in (["s3://b/p", d], [d, "s3://b/p"]):
                p = run(endpoint, *args)
                check("S3's %s %s finds a change of one bit %s" % (form, s3_name, args),
                      p.returncode == 1 and p.stdout.strip().endswith(b"f"),
                      (p.returncode, p.stdout, p.stderr))
            # -r s3:// prints it as fastsum prints the file, hex and base64.
            write_tree(d, {"f": data})
            extra = ["--part-size", "1MiB"] if form == "composite" else []
            for b64_flag in ([], ["--base64"]):
                args = ["-a", ours, *extra, *b64_flag]
                listed = run_main(endpoint, "-r", *args, "s3://b/p")
                local = run_main(endpoint, *args, "f", cwd=d)
                expected = composite if form == "composite" else whole
                shown = b64(expected) if b64_flag else expected.hex()
                if form == "composite":
                    shown += "-3"
                line = listed.stdout.decode().strip()
                check("-r s3:// %s prints S3's %s %s" % (" ".join(args), form, s3_name),
                      listed.returncode == 0 and shown in line
                      and line.replace("s3://b/p/", "") == local.stdout.decode().strip(),
                      (listed.returncode, line, local.stdout, listed.stderr, shown))
        # One of them disagreeing beside an agreeing ETag is a change.
        fake.objects = {b"p/f": Obj(data, {"x-amz-checksum-" + s3_name: b64(digest(other)),
                                           "x-amz-checksum-type": "FULL_OBJECT"})}
        p = run(endpoint, "s3://b/p", d)
        check("an MD5 ETag that agrees never outvotes S3's %s that does not" % s3_name,
              p.returncode == 1, (p.returncode, p.stdout, p.stderr))
