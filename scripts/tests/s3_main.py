"""The main mode's S3 options and the client's timeouts,
against the fake endpoint (s3_fake.py), run by s3_suite.py:

- `fastsum -r --cache=PATH s3://...` keeps what S3 told in the claim cache
  `diff` uses: an unchanged re-run sends no HeadObject, and prints the
  same lines;
- `--s3-path-style` is taken by the main mode as by `diff`; several `-a`
  are refused by name (each line holds one digest S3 keeps);
- a `--download` body that trickles in for longer than the idle timeout,
  with a byte at least every idle period, is read whole; a body that
  stops halfway is an error naming the object (exit 2), never a digest;
- `--download` reads the version listed and only it (F5): every GET of a
  whole object carries `If-Match` with the listed ETag, an object replaced
  between the listing and the download is an error naming it (exit 2;
  the main mode's 1, as for any file it cannot read),
  never compared or hashed as the listed one, and a body longer or
  shorter than the listed size is an error, never a verdict;
- a listing that trickles in a byte at a time (a byte every 0.2 s, each
  gap well inside the idle timeout) is cut by the cap on a whole answer:
  exit 2 in seconds, never a wait as long as the server likes.
"""

import os
import time


def cache_and_path_style(fake, endpoint, tmp, check, run_main, Obj):
    data = {"a": b"alpha", "b/c": b"gamma" * 100}
    fake.objects = {b"m/" + k.encode(): Obj(v) for k, v in data.items()}
    cache = os.path.join(tmp, "main-cache.sqlite")
    fake.requests.clear()
    first = run_main(endpoint, "-r", "-a", "md5", "--cache=" + cache, "s3://b/m")
    heads = fake.count("HEAD")
    check("-r --cache s3://: first run answers", first.returncode == 0
          and first.stdout.count(b"\n") == 2, (first.returncode, first.stdout, first.stderr))
    fake.requests.clear()
    again = run_main(endpoint, "-r", "-a", "md5", "--cache=" + cache, "s3://b/m")
    check("-r --cache s3://: the re-run asks nothing per object", again.returncode == 0
          and fake.count("HEAD") == 0 and again.stdout == first.stdout,
          (heads, fake.requests, again.stdout, again.stderr))
    fake.requests.clear()
    plain = run_main(endpoint, "-r", "-a", "md5", "s3://b/m")
    check("-r s3:// without --cache asks again", fake.count("HEAD") >= 1
          and plain.stdout == first.stdout, (fake.requests, plain.stdout))
    two = run_main(endpoint, "-r", "-a", "md5", "-a", "crc32c", "s3://b/m")
    check("-r s3:// with two -a: refused by name, never one of them silently",
          two.returncode != 0 and two.stdout == b"" and b"more than one -a" in two.stderr,
          (two.returncode, two.stdout, two.stderr))
    styled = run_main(endpoint, "-r", "-a", "md5", "--s3-path-style", "s3://b/m")
    check("-r --s3-path-style s3://: taken, the same lines", styled.returncode == 0
          and styled.stdout == first.stdout, (styled.returncode, styled.stdout, styled.stderr))


def download_timeouts(fake, endpoint, tmp, check, run, Obj, write_tree):
    d = os.path.join(tmp, "trickle")
    body = bytes(range(256)) * 16  # 4 KiB
    write_tree(d, {"slow": body})
    kms = {"x-amz-server-side-encryption": "aws:kms"}
    fake.objects = {b"t/slow": Obj(body, kms, etag="0" * 32)}
    # 8 chunks 0.4 s apart: the last comes 2.8 s after the first, nearly
    # twice the 1.5 s idle timeout; a cap on the whole request of that
    # length (as the 60 s one this replaced) fails it.
    fake.trickle = {b"t/slow": (512, 0.4, None)}
    os.environ["FASTSUM_S3_IDLE_TIMEOUT"] = "1.5"
    try:
        started = time.monotonic()
        p = run(endpoint, "--download", "s3://b/t", d)
        took = time.monotonic() - started
        check("a steady slow --download body is read whole (longer than the idle timeout)",
              p.returncode == 0 and p.stdout == b"" and took > 2.5,
              (p.returncode, p.stdout, p.stderr, took))
        fake.trickle = {b"t/slow": (512, 0.05, 2048)}
        p = run(endpoint, "--download", "s3://b/t", d)
        check("a --download body that stalls halfway: exit 2, the object named, no verdict",
              p.returncode == 2 and b"s3://b/t/slow" in p.stderr and p.stdout == b"",
              (p.returncode, p.stdout, p.stderr))
    finally:
        del os.environ["FASTSUM_S3_IDLE_TIMEOUT"]
        fake.trickle = {}


def trickled_listing(fake, endpoint, tmp, check, run, Obj, write_tree):
    d = os.path.join(tmp, "trickle-list")
    write_tree(d, {"x": b"x"})
    fake.objects = {b"l/x": Obj(b"x")}
    fake.trickle_listing = (1, 0.2)  # ~300 bytes: a minute
    os.environ["FASTSUM_S3_IDLE_TIMEOUT"] = "0.5"  # the cap: 2.5 s a try
    try:
        started = time.monotonic()
        p = run(endpoint, "s3://b/l", d)
        took = time.monotonic() - started
        check("a listing trickled a byte at a time: cut by the answer cap, exit 2",
              p.returncode == 2 and b"listing" in p.stderr and took < 40,
              (p.returncode, p.stdout, p.stderr, took))
    finally:
        del os.environ["FASTSUM_S3_IDLE_TIMEOUT"]
        fake.trickle_listing = None


def download_pinned(fake, endpoint, tmp, check, run, run_main, Obj, write_tree):
    d = os.path.join(tmp, "pinned")
    body = bytes(range(256)) * 16  # 4 KiB
    write_tree(d, {"o": body})
    kms = {"x-amz-server-side-encryption": "aws:kms"}
    listed = "1" * 32
    fresh = lambda: {b"v/o": Obj(body, kms, etag=listed)}
    fake.objects = fresh()
    fake.if_match.clear()
    p = run(endpoint, "--download", "s3://b/v", d)
    check("--download asks for the listed version (If-Match: its ETag) and finds it the same",
          p.returncode == 0 and p.stdout == b""
          and fake.if_match == [(b"v/o", '"%s"' % listed)],
          (p.returncode, p.stdout, p.stderr, fake.if_match))
    # Replaced after the listing by an object with the local file's bytes.
    # `diff`'s trouble is exit 2; the main mode's an unreadable file's, 1.
    for args, how, code in [(["diff", "--download", "s3://b/v", d], run, 2),
                            (["-r", "--download", "-a", "sha256", "s3://b/v"], run_main, 1)]:
        fake.objects = fresh()
        fake.swap_on_get = {b"v/o": Obj(body, kms, etag="2" * 32)}
        p = how(endpoint, *args[1:]) if how is run else how(endpoint, *args)
        check("%s: an object replaced since the listing is an error naming it, exit %d"
              % (" ".join(args[:2]), code),
              p.returncode == code and b"s3://b/v/o" in p.stderr and b"412" in p.stderr
              and p.stdout == b"", (p.returncode, p.stdout, p.stderr))
        fake.swap_on_get = {}
    # A body that is not the listed length: longer (the local bytes and
    # more) or shorter (cut where a prefix ends).
    for name, lie in [("longer", body + b"x"), ("shorter", body[:2048])]:
        for args, how, code in [(["diff", "--download", "s3://b/v", d], run, 2),
                                (["-r", "--download", "-a", "sha256", "s3://b/v"], run_main, 1)]:
            fake.objects = fresh()
            fake.body_override = {b"v/o": lie}
            p = how(endpoint, *args[1:]) if how is run else how(endpoint, *args)
            check("%s: a body %s than the listing says is an error, exit %d, no verdict"
                  % (" ".join(args[:2]), name, code),
                  p.returncode == code and b"s3://b/v/o" in p.stderr and b"listing 4096" in p.stderr
                  and p.stdout == b"", (p.returncode, p.stdout, p.stderr))
    fake.body_override = {}
