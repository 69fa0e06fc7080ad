"""The S3 diff's speed row (run by scripts/bench/s3, which says how).

SeaweedFS started here on 127.0.0.1 (scripts/tests/s3_weed.py's start);
a prefix of N objects: the corpus tree's first N - 10 files plus 10
multipart files cut from big.bin (8 MiB parts, as the AWS CLI uploads),
uploaded by boto3 + awscrt with CRC-64/NVME (AWS's default checksum for
new uploads; full-object for the multipart ones). Then 1% of N changed,
a third of it same-size edits with the mtime put back (the case
`aws s3 sync` cannot see), and each tool timed with hyperfine and its
answer compared with Python's own list of what changed.

Usage: s3_bench.py CORPUS OUT FASTSUM WEED AWS RCLONE N RUNS"""

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402
import s3_weed  # noqa: E402

CORPUS, OUT, FASTSUM, WEED, AWS, RCLONE = map(os.path.abspath, sys.argv[1:7])
N, RUNS = int(sys.argv[7]), int(sys.argv[8])
BUCKET, PREFIX, PART = s3_weed.BUCKET, "site", 8 << 20
SITE = os.path.join(OUT, "site")


def tool_env(endpoint):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "RCLONE_"))}
    cfg = os.path.join(OUT, "aws-config")
    with open(cfg, "w") as f:
        f.write("[default]\nregion = us-east-1\ns3 =\n    addressing_style = path\n")
    env.update(AWS_ACCESS_KEY_ID="AKTEST", AWS_SECRET_ACCESS_KEY="SKTEST123",
               AWS_REGION="us-east-1", AWS_ENDPOINT_URL=endpoint, AWS_CONFIG_FILE=cfg,
               AWS_SHARED_CREDENTIALS_FILE="/nonexistent", AWS_EC2_METADATA_DISABLED="true",
               FASTSUM_RSH=os.path.join(HERE, "..", "tests", "s3_no_ssh"),
               RCLONE_CONFIG=os.path.join(OUT, "rclone.conf-none"),
               RCLONE_CONFIG_WEED_TYPE="s3", RCLONE_CONFIG_WEED_PROVIDER="SeaweedFS",
               RCLONE_CONFIG_WEED_ACCESS_KEY_ID="AKTEST",
               RCLONE_CONFIG_WEED_SECRET_ACCESS_KEY="SKTEST123",
               RCLONE_CONFIG_WEED_ENDPOINT=endpoint, RCLONE_CONFIG_WEED_REGION="us-east-1",
               RCLONE_CONFIG_WEED_FORCE_PATH_STYLE="true")
    return env


def make_site():
    """N files: the tree's first N - 10 and 10 of 9-24 MiB from big.bin."""
    if os.path.exists(SITE):
        shutil.rmtree(SITE)
    files = []
    for root, dirs, names in os.walk(os.path.join(CORPUS, "tree")):
        dirs.sort()
        files += [os.path.join(root, n) for n in sorted(names)]
    files.sort()
    tree = {}
    for src in files[:N - 10]:
        rel = os.path.relpath(src, CORPUS)
        with open(src, "rb") as f:
            tree[rel] = f.read()
    rng = random.Random(54)
    with open(os.path.join(CORPUS, "big.bin"), "rb") as f:
        for i in range(10):
            f.seek(i * (64 << 20))
            tree["big/part%02d.bin" % i] = f.read((9 << 20) + rng.randrange(15 << 20))
    for rel, data in tree.items():
        path = os.path.join(SITE, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return tree


def upload_all(endpoint, tree):
    s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="AKTEST",
                      aws_secret_access_key="SKTEST123", region_name="us-east-1",
                      config=Config(s3={"addressing_style": "path"}, max_pool_connections=16))

    def one(item):
        rel, data = item
        key = PREFIX + "/" + rel
        if len(data) > PART:
            s3_weed.upload(s3, s3, key, data, ("CRC64NVME", PART, "FULL_OBJECT"))
        else:
            s3.put_object(Bucket=BUCKET, Key=key, Body=data, ChecksumAlgorithm="CRC64NVME")

    started = time.monotonic()
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(one, tree.items()))
    return s3, time.monotonic() - started


def edit(tree):
    """1% of N changed: a third same-size edits with the mtime put back (one
    of them multipart), a third size changes, the rest added or removed."""
    rng = random.Random(55)
    count = max(N // 100, 6)
    same, grown = (count + 2) // 3, count // 3
    added = (count - same - grown + 1) // 2
    removed = count - same - grown - added
    small = sorted(k for k, v in tree.items() if v and not k.startswith("big/"))
    picked = rng.sample(small, same - 1 + grown + removed)
    want = set()
    for rel in picked[:same - 1] + ["big/part03.bin"]:
        path = os.path.join(SITE, rel)
        st = os.stat(path)
        with open(path, "r+b") as f:
            f.seek(len(tree[rel]) // 2)
            f.write(bytes([tree[rel][len(tree[rel]) // 2] ^ 1]))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        want.add(("M", rel, "same-size"))
    for rel in picked[same - 1:same - 1 + grown]:
        with open(os.path.join(SITE, rel), "ab") as f:
            f.write(rng.randbytes(rng.randrange(1, 500)))
        want.add(("M", rel, "size"))
    for rel in picked[same - 1 + grown:]:
        os.remove(os.path.join(SITE, rel))
        want.add(("D", rel, "removed"))
    for i in range(added):
        rel = "new/n%03d.dat" % i
        os.makedirs(os.path.join(SITE, "new"), exist_ok=True)
        with open(os.path.join(SITE, rel), "wb") as f:
            f.write(rng.randbytes(rng.randrange(1, 20000)))
        want.add(("A", rel, "added"))
    return want


def found_by(name, stdout, before):
    """What a tool's output says changed, as (kind, key) pairs; and its
    lines that are neither a change nor a match (errors, unverifiable)."""
    got, other = set(), []
    for line in stdout.decode(errors="replace").splitlines():
        if name.startswith("fastsum"):
            kind, _, rel = line.partition("\t")
            if kind in ("A", "D", "M"):
                got.add((kind, rel))
            elif line:
                other.append(line)
        elif name == "aws":
            parts = line.split()
            if line.startswith("(dryrun) upload:"):
                rel = os.path.relpath(parts[2], SITE)
                got.add(("M" if rel in before else "A", rel))
            elif line.startswith("(dryrun) delete:"):
                got.add(("D", parts[2].split("/" + PREFIX + "/", 1)[1]))
            elif line:
                other.append(line)
        else:
            mark, _, rel = line.partition(" ")
            kinds = {"+": "A", "-": "D", "*": "M"}
            if mark in kinds:
                got.add((kinds[mark], rel))
            elif mark != "=":
                other.append(line)
    return got, other


def free(base):
    """Whether the ten ports from base are free on 127.0.0.1 now."""
    for port in range(base, base + 10):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                return False
    return True


def start_weed(tmp):
    """weed mini on 127.0.0.1 as scripts/tests/s3_weed.py starts it, on
    ten ports found free (its choice by pid can meet another engineer's
    server), tried again if weed still loses a port to someone."""
    names = ["master.port", "master.port.grpc", "volume.port", "volume.port.grpc",
             "filer.port", "filer.port.grpc", "s3.port", "admin.port", "admin.port.grpc",
             "debug.port"]
    env = dict(os.environ, AWS_ACCESS_KEY_ID="AKTEST", AWS_SECRET_ACCESS_KEY="SKTEST123")
    for attempt in range(5):
        data = os.path.join(tmp, "try%d" % attempt)
        os.makedirs(data)
        base = random.randrange(20000, 40000, 20)
        while not free(base):
            base = random.randrange(20000, 40000, 20)
        args = [WEED, "mini", "-dir=" + data, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                "-master.telemetry=false", "-webdav=false", "-admin.ui=false",
                "-s3.port.iceberg=0", "-s3.port.lance=0", "-admin.port.legacy=0"]
        args += ["-%s=%d" % (name, base + i) for i, name in enumerate(names)]
        with open(os.path.join(data, "weed.log"), "wb") as log:
            proc = subprocess.Popen(args, env=env, stdout=log, stderr=log, cwd=data)
        endpoint = "http://127.0.0.1:%d" % (base + names.index("s3.port"))
        try:
            s3_weed.wait_ready(s3_weed.client(endpoint), proc)
            return proc, endpoint
        except RuntimeError:
            if proc.poll() is None:
                proc.kill()
    raise RuntimeError("weed did not start in 5 tries (%s)" % tmp)


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def hyperfine(name, env, commands, prepare=None):
    path = os.path.join(OUT, name + ".json")
    args = ["hyperfine", "-N", "-i", "-w", "1", "-r", str(RUNS), "--export-json", path]
    if prepare:
        args += ["--prepare", prepare]
    before = load()
    subprocess.run(args + commands, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(path) as f:
        results = json.load(f)["results"]
    return results, "%s/%s" % (before, load())


def short(cmd):
    for long, name in ((FASTSUM, "fastsum"), (AWS, "aws"), (RCLONE, "rclone"), (OUT + "/", "")):
        cmd = cmd.replace(long, name)
    return cmd


def cache_files(path):
    """The cache's files: the local digests' and (PATH.s3) what S3 told."""
    return [p + tail for p in (path, path + ".s3") for tail in ("", "-wal", "-shm")]


def timing(env, cmds, cache):
    aws_median = None
    print("| command | median (s) | CPU (s) | / aws | load before/after |")
    print("|---|---:|---:|---:|---|")
    # The cache filled once, on the edited tree: the re-run's state.
    subprocess.run(cmds["fastsum --cache (re-run)"].split(), env=env, capture_output=True)
    rows, load_ = hyperfine("tools", env, [cmds[k] for k in ("aws", "fastsum", "fastsum --cache (re-run)", "rclone")])
    fresh = cache + "-fresh"
    fill, load2 = hyperfine("fill", env, [cmds["fastsum"].replace(" diff ", " diff --cache=%s " % fresh)],
                            prepare="rm -f " + " ".join(cache_files(fresh)))
    for r, ld in [(r, load_) for r in rows] + [(r, load2) for r in fill]:
        if r["command"].startswith(AWS):
            aws_median = r["median"]
        cpu = r["user"] + r["system"]
        cmd = r["command"]
        what = ("first run, the cache filled (emptied before each run)" if "-fresh" in cmd
                else "re-run, the cache warm" if "--cache" in cmd
                else "first run, no cache" if cmd.startswith(FASTSUM) else "")
        print("| `%s` %s | %.3f | %.2f | %.2f | %s |" % (short(cmd), what, r["median"], cpu,
                                                     r["median"] / aws_median, ld))
    where, load3 = hyperfine("where", env, [
        "%s s3 ls --recursive s3://%s/%s/" % (AWS, BUCKET, PREFIX),
        "%s lsf -R weed:%s/%s" % (RCLONE, BUCKET, PREFIX),
        "%s -a crc64nvme -r %s" % (FASTSUM, SITE),
        "%s -a md5 -r %s" % (FASTSUM, SITE)])
    print()
    print("Where the time goes (listing alone; local hashing alone), load %s:" % load3)
    print()
    for r in where:
        print("- `%s`: %.3f s (CPU %.2f s)" % (short(r["command"]), r["median"],
                                               r["user"] + r["system"]))


def server_cpu(pid):
    """The server's CPU seconds so far (user + sys, all its threads)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def correctness(env, cmds, want, before, pid):
    print("| tool | exit | same-size edits | size changes | added | removed | false alarms "
          "| wall (s) | server CPU (s) | other lines |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    combined = os.path.join(OUT, "rclone-combined.txt")
    for label, name in (("fastsum", "fastsum"), ("fastsum --cache (first: fills it)",
                        "fastsum --cache (re-run)"), ("fastsum --cache (re-run)",
                        "fastsum --cache (re-run)"), ("aws", "aws"), ("rclone", "rclone")):
        cpu, started = server_cpu(pid), time.monotonic()
        p = subprocess.run(cmds[name].split(), env=env, capture_output=True, timeout=900)
        took, cpu = time.monotonic() - started, server_cpu(pid) - cpu
        out = p.stdout
        if name == "rclone":
            with open(combined, "rb") as f:
                out = f.read()
        got, other = found_by(name, out, before)
        row = []
        for what in ("same-size", "size", "added", "removed"):
            these = {(k, r) for k, r, w in want if w == what}
            row.append("%d/%d" % (len(these & got), len(these)))
        wrong = got - {(k, r) for k, r, _ in want}
        note = "; ".join(sorted(set(other)))[:300]
        if name == "rclone":
            note = "; ".join(line.split(PREFIX + ": ", 1)[-1]
                             for line in p.stderr.decode(errors="replace").splitlines()
                             if "could not be" in line or "differences found" in line
                             and "Failed" not in line)
        print("| %s | %d | %s | %d | %.2f | %.2f | %s |" % (
            label, p.returncode, " | ".join(row), len(wrong), took, cpu, note.replace("|", "/")))


def main():
    os.makedirs(OUT, exist_ok=True)
    tmp = os.path.join(OUT, "weed")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    proc, endpoint = start_weed(tmp)
    try:
        tree = make_site()
        _, took = upload_all(endpoint, tree)
        size = sum(len(v) for v in tree.values())
        print("%d objects, %.0f MB (10 multipart, 8 MiB parts), CRC-64/NVME; uploaded by boto3 "
              "(16 threads) in %.0f s" % (len(tree), size / 1e6, took))
        want = edit(tree)
        print("changed: %d (%d same-size with the mtime put back, one multipart), "
              "load %s" % (len(want), sum(1 for w in want if w[2] == "same-size"), load()))
        subprocess.run(["sh", "-c", "find %s -type f -print0 | xargs -0 cat > /dev/null" % SITE])
        env = tool_env(endpoint)
        url = "s3://%s/%s" % (BUCKET, PREFIX)
        cache = os.path.join(OUT, "claims.sqlite")
        for f in cache_files(cache):
            if os.path.exists(f):
                os.remove(f)
        cmds = {
            "fastsum": "%s diff %s %s" % (FASTSUM, url, SITE),
            "fastsum --cache (re-run)": "%s diff --cache=%s %s %s" % (FASTSUM, cache, url, SITE),
            "aws": "%s s3 sync %s %s --dryrun --delete" % (AWS, SITE, url),
            "rclone": "%s check %s weed:%s/%s --combined %s" % (
                RCLONE, SITE, BUCKET, PREFIX, os.path.join(OUT, "rclone-combined.txt")),
        }
        print()
        correctness(env, cmds, want, set(tree), proc.pid)
        print()
        timing(env, cmds, cache)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


main()
