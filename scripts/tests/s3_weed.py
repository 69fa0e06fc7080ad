"""`fastsum diff s3://...` against SeaweedFS (a real S3 server), started
here on 127.0.0.1 with a fresh data directory; objects uploaded by boto3
+ awscrt in every layout S3 keeps a digest in; the verdicts compared with
an independent comparison of the local files (Python's)."""

import json
import os
import random
import signal
import subprocess
import time
import zlib

import boto3
from awscrt import checksums
from botocore.config import Config

BUCKET = "fastsum-test"
ALGOS = ["CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256"]


def full_b64(algo, data):
    import base64
    import hashlib
    value = {
        "CRC32": lambda: zlib.crc32(data).to_bytes(4, "big"),
        "CRC32C": lambda: checksums.crc32c(data).to_bytes(4, "big"),
        "CRC64NVME": lambda: checksums.crc64nvme(data).to_bytes(8, "big"),
        "SHA1": lambda: hashlib.sha1(data).digest(),
        "SHA256": lambda: hashlib.sha256(data).digest(),
    }[algo]()
    return base64.b64encode(value).decode()


def start(weed, tmp):
    base = random.Random(os.getpid()).randrange(20000, 40000, 20)
    data = os.path.join(tmp, "weed-data")
    os.makedirs(data)
    ports = dict(zip(["master.port", "master.port.grpc", "volume.port", "volume.port.grpc",
                      "filer.port", "filer.port.grpc", "s3.port", "admin.port",
                      "admin.port.grpc", "debug.port"], range(base, base + 10)))
    args = [weed, "mini", "-dir=" + data, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-master.telemetry=false", "-webdav=false", "-admin.ui=false",
            "-s3.port.iceberg=0", "-s3.port.lance=0", "-admin.port.legacy=0"]
    args += ["-%s=%d" % kv for kv in ports.items()]
    env = dict(os.environ, AWS_ACCESS_KEY_ID="AKTEST", AWS_SECRET_ACCESS_KEY="SKTEST123")
    log = open(os.path.join(tmp, "weed.log"), "wb")
    proc = subprocess.Popen(args, env=env, stdout=log, stderr=log, cwd=data)
    endpoint = "http://127.0.0.1:%d" % ports["s3.port"]
    return proc, endpoint


def client(endpoint, checksums_when="when_supported"):
    return boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id="AKTEST",
        aws_secret_access_key="SKTEST123", region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"},
                      request_checksum_calculation=checksums_when))


def wait_ready(s3, proc):
    for _ in range(120):
        if proc.poll() is not None:
            raise RuntimeError("weed exited")
        try:
            s3.create_bucket(Bucket=BUCKET)
            return
        except Exception:
            time.sleep(0.5)
    raise RuntimeError("weed did not answer in 60 s")


def upload(s3, plain, key, data, layout):
    algo, parts, ctype = layout
    if parts is None:
        if algo is None:
            plain.put_object(Bucket=BUCKET, Key=key, Body=data)
        else:
            s3.put_object(Bucket=BUCKET, Key=key, Body=data, ChecksumAlgorithm=algo)
        return
    sizes, at = [], 0
    while at < len(data) or not sizes:
        sizes.append(min(parts, len(data) - at))
        at += parts
    use = plain if algo is None else s3
    kw = {} if algo is None else {"ChecksumAlgorithm": algo, "ChecksumType": ctype}
    up = use.create_multipart_upload(Bucket=BUCKET, Key=key, **kw)
    done, at = [], 0
    for i, size in enumerate(sizes, 1):
        pkw = {} if algo is None else {"ChecksumAlgorithm": algo}
        r = use.upload_part(Bucket=BUCKET, Key=key, UploadId=up["UploadId"], PartNumber=i,
                            Body=data[at:at + size], **pkw)
        part = {"PartNumber": i, "ETag": r["ETag"]}
        if algo is not None:
            part["Checksum" + algo] = r["Checksum" + algo]
        done.append(part)
        at += size
    ckw = {}
    if ctype == "FULL_OBJECT":
        ckw = {"ChecksumType": "FULL_OBJECT", "Checksum" + algo: full_b64(algo, data)}
    use.complete_multipart_upload(Bucket=BUCKET, Key=key, UploadId=up["UploadId"],
                                  MultipartUpload={"Parts": done}, **ckw)


def layouts():
    out = [(None, None, None)] + [(a, None, None) for a in ALGOS]
    for part in (5 << 20,):
        out.append((None, part, None))
        # CRC-64/NVME is full-object only, as on AWS.
        out += [(a, part, "COMPOSITE") for a in ALGOS if a != "CRC64NVME"]
        out += [(a, part, "FULL_OBJECT") for a in ("CRC32", "CRC32C", "CRC64NVME")]
    return out


def expected(before, after):
    """The changes from the bucket (before) to the tree (after), by Python."""
    lines = set()
    for k in before.keys() | after.keys():
        if k not in after:
            lines.add("D\t" + k)
        elif k not in before:
            lines.add("A\t" + k)
        elif before[k] != after[k]:
            lines.add("M\t" + k)
    return lines


def suite(weed, tmp, run, check, run_main):
    proc, endpoint = start(weed, tmp)
    try:
        s3, plain = client(endpoint), client(endpoint, "when_required")
        wait_ready(s3, proc)
        rng = random.Random(int(os.environ.get("FASTSUM_S3_SEED", "54")))
        tree = os.path.join(tmp, "site")
        files = {}
        for i, layout in enumerate(layouts()):
            multipart = layout[1] is not None
            # Multipart: two or three parts of 5 MiB (SeaweedFS, as S3,
            # wants 5 MiB parts but the last), one of them a single part.
            size = [rng.randrange(0, 4000), 5 << 20, (10 << 20) + rng.randrange(1, 9999)][
                (i % 2 + 1) if multipart else 0]
            key = "d%d/f%02d-%s" % (i % 3, i, "-".join(str(x) for x in layout))
            files[key] = rng.randbytes(size)
            upload(s3, plain, "site/" + key, files[key], layout)
        s3.put_object(Bucket=BUCKET, Key="site-sibling/x", Body=b"never")
        for key, data in files.items():
            path = os.path.join(tree, key)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        url = "s3://%s/site" % BUCKET
        p = run(endpoint, url, tree)
        check("weed: every layout's digest equals the local one (no change)",
              p.returncode == 0 and p.stdout == b"", (p.returncode, p.stdout, p.stderr))
        lines_against_local(endpoint, tree, url, files, check, run_main)
        after = dict(files)
        for key in sorted(files):
            path = os.path.join(tree, key)
            what = rng.randrange(4)
            if what == 0 and files[key]:
                st = os.stat(path)
                data = bytearray(files[key])
                data[rng.randrange(len(data))] ^= 0x55
                with open(path, "wb") as f:
                    f.write(data)
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
                after[key] = bytes(data)
            elif what == 1:
                os.remove(path)
                del after[key]
        for i in range(3):
            key = "new/n%d" % i
            after[key] = rng.randbytes(rng.randrange(0, 3000))
            os.makedirs(os.path.join(tree, "new"), exist_ok=True)
            with open(os.path.join(tree, key), "wb") as f:
                f.write(after[key])
        want = expected(files, after)
        p = run(endpoint, url, tree)
        got = set(p.stdout.decode().splitlines())
        check("weed: diff equals Python's comparison", got == want and p.returncode == 1,
              (sorted(got ^ want), p.stderr))
        check("weed: same-size edits found", any(line.startswith("M") for line in got))
        p = run(endpoint, "--plan", url, tree)
        plan = json.loads(p.stdout)
        send = {e["path"] for e in plan["send"]}
        only_old = {e["path"] for e in plan["only_old"]}
        check("weed: --plan equals Python's comparison",
              send == {line[2:] for line in want if line[0] in "AM"}
              and only_old == {line[2:] for line in want if line[0] == "D"}
              and plan["complete"] and plan["plan"] == 1, plan)
        p = run(endpoint, tree, url)
        flip = {"A": "D", "D": "A", "M": "M"}
        check("weed: DIR s3:// is the other order",
              set(p.stdout.decode().splitlines()) == {flip[x[0]] + x[1:] for x in want}, p.stdout)
        # Every object a same-size edit, its mtime put back: each layout's
        # digest must tell (what `aws s3 sync` never sees).
        edited = set()
        for key, data in after.items():
            if key.startswith("new/") or not data:
                continue
            path = os.path.join(tree, key)
            st = os.stat(path)
            with open(path, "r+b") as f:
                f.seek(len(data) // 2)
                f.write(bytes([data[len(data) // 2] ^ 1]))
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            edited.add("M\t" + key)
        p = run(endpoint, url, tree)
        got = set(p.stdout.decode().splitlines())
        check("weed: a same-size edit in every layout is found", edited <= got, sorted(edited - got))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def lines_against_local(endpoint, tree, url, files, check, run_main):
    """`fastsum -r s3://` on SeaweedFS: every line it prints is the line
    `fastsum -r` prints of the local copy (the server's part sizes make
    the composite and multipart digests: 2 parts of 5 MiB and a tail),
    and every object without one is named on stderr."""
    def lines(p):
        return set(p.stdout.decode().splitlines())

    for args in (["-a", "crc64nvme"], ["-a", "crc32c", "--part-size", "5MiB"],
                 ["-a", "sha256", "--part-size", "5MiB", "--base64"],
                 ["-a", "s3etag", "--part-size", "5MiB"], ["-a", "crc32"]):
        s3 = run_main(endpoint, "-r", *args, url)
        local = run_main(endpoint, "-r", *args, ".", cwd=tree)
        local_lines = {x.replace(" (./", " (").replace("  ./", "  ") for x in lines(local)}
        printed, named = lines(s3), s3.stderr.decode().count(url + "/")
        check("weed -r %s: each line is the local one" % " ".join(args),
              printed and printed <= local_lines and len(printed) + named == len(files),
              (sorted(printed - local_lines), s3.stderr))
    parts_of_5mib(endpoint, os.path.dirname(tree), check, run_main)
    s3 = run_main(endpoint, "-r", url)
    listed = os.path.join(tree, "..", "s3.list")
    with open(listed, "wb") as f:
        f.write(s3.stdout)
    c = run_main(endpoint, "-c", listed, cwd=tree)
    named = s3.stderr.decode().count(url + "/")
    check("weed -r s3:// (best digests): its lines check the local copy",
          c.returncode == 0 and c.stdout.count(b": OK") + named == len(files)
          and c.stdout.count(b": OK") > len(files) // 2, (c.stdout, s3.stderr))
    s3 = run_main(endpoint, "-r", "--download", "-a", "sha256", url)
    local = run_main(endpoint, "-r", "-a", "sha256", ".", cwd=tree)
    check("weed -r --download -a sha256: every object, as the local copy",
          s3.returncode == 0 and lines(s3) == {x.replace(" (./", " (") for x in lines(local)},
          (s3.stderr, len(lines(s3))))


def parts_of_5mib(endpoint, tmp, check, run_main):
    """Multipart uploads by boto3 of 2 parts of 5 MiB and a tail: the
    multipart ETag and each composite checksum `fastsum -r s3://` prints
    (from the part sizes the server gives) equal `fastsum -r --part-size
    5MiB` of the same bytes; asked with another part size, none is given."""
    s3, plain = client(endpoint), client(endpoint, "when_required")
    rng = random.Random(55)
    tree = os.path.join(tmp, "parts")
    os.makedirs(tree)
    layouts = {"etag": (None, 5 << 20, None)}
    layouts.update({a.lower(): (a, 5 << 20, "COMPOSITE") for a in ("CRC32", "CRC32C", "SHA1", "SHA256")})
    for name, layout in layouts.items():
        data = rng.randbytes((10 << 20) + rng.randrange(1, 99999))
        upload(s3, plain, "parts/" + name, data, layout)
        with open(os.path.join(tree, name), "wb") as f:
            f.write(data)
    url = "s3://%s/parts" % BUCKET
    for name in layouts:
        algorithm = {"etag": "s3etag"}.get(name, name)
        for base64 in ([], ["--base64"]):
            args = ["-a", algorithm, "--part-size", "5MiB", *base64]
            s3_lines = run_main(endpoint, "-r", *args, url).stdout.decode().splitlines()
            local = run_main(endpoint, *args, name, cwd=tree).stdout.decode().splitlines()
            mine = [x for x in s3_lines if "(%s)" % name in x]
            check("weed: %s of 3 parts, from the server's part sizes" % " ".join(args),
                  mine == local and local[0].endswith("-3"), (mine, local))
    p = run_main(endpoint, "-r", "-a", "s3etag", "--part-size", "8MiB", url)
    check("weed: asked for 8 MiB parts, uploads of 5 MiB give none",
          p.stdout == b"" and p.returncode == 1
          and p.stderr.count(b"of it, not S3ETAG/8MiB") == 5, p.stderr)
