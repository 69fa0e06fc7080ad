//! `fastsum contained SOURCE... --in ARCHIVE...` against an oracle in
//! Python that reads every file's bytes (hashlib for the manifests, which
//! it writes itself), on seeded random trees with every trap: copies under
//! other names and depths, same size with other bytes, files that differ
//! in their first, last or a middle byte only (the edges equal), empty
//! files, hard links (inside the source, and to an archive file), symbolic
//! links (skipped, and one in the archive leading outside), names with a
//! newline or bytes that are not UTF-8. The archive as trees, and as each
//! manifest format beside a tree. Then the hostile cases, one each.

use crate::sshd::{self, sh_quote};
use crate::testenv;

use std::time::Duration;

use testenv::{Outcome, TestEnv};

/// Builds `src/`, `arc/`, `arc2/` and `outside/` from a seed, writes
/// `arc/`'s manifests (md5 lines, SHA256 BSD tags, fastsum JSON with sizes,
/// hashdeep), and prints, for each configuration, what an answer must be:
/// `missing HEX` / `contained HEX` per source file (sorted), then
/// `figures CF CB MF MB SKIPPED`.
const ORACLE: &str = r#"
import hashlib, json, os, random, sys
seed = int(sys.argv[1])
rnd = random.Random(seed)
for d in (b"src", b"arc", b"arc2", b"outside"):
    os.makedirs(d, exist_ok=True)
def read_bytes(p):
    with open(p, "rb") as f:
        return f.read()
def put(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
names = [b"a", b"b.txt", b"with space", b"new\nline", b"bad\xff\xfe", b"\xc3\xa9t\xc3\xa9", b"tab\there", b"back\\slash"]
def where(root):
    depth = rnd.randrange(0, 4)
    parts = [b"d%d" % rnd.randrange(3) for _ in range(depth)]
    name = rnd.choice(names) + b"-%d" % rnd.randrange(10**6)
    return os.path.join(root, *parts, name)
sizes = [1, 2, 100, 4095, 4096, 4097, 8191, 8192, 8193, 12345, 65536, 65537, 70000]
contents = [rnd.randbytes(rnd.choice(sizes)) for _ in range(rnd.randrange(12, 20))]
for c in contents:
    r = rnd.random()
    # In an archive (one, both, or none), and in the source.
    if r < 0.7:
        put(where(rnd.choice([b"arc", b"arc2"])), c)
    if r < 0.2:
        put(where(b"arc"), c)
    src = where(b"src")
    put(src, c)
    if rnd.random() < 0.3:
        put(where(b"src"), c)  # a second source copy
    t = rnd.random()
    flip = lambda at: c[:at] + bytes([c[at] ^ 1]) + c[at + 1:]
    if t < 0.2:
        put(where(b"src"), flip(len(c) - 1))  # last byte
    elif t < 0.4:
        put(where(b"src"), flip(0))  # first byte
    elif t < 0.6 and len(c) > 8192:
        put(where(b"src"), flip(len(c) // 2))  # edges equal
    elif t < 0.8:
        put(where(b"src"), rnd.randbytes(len(c)))  # same size
# Directories that could go whole, and one that cannot (deep down).
arcnow = sorted(os.path.join(d, f) for d, _, fs in os.walk(b"arc2") for f in fs)
for n, p in enumerate(arcnow[:5]):
    put(os.path.join(b"src/whole", b"x" * (n % 3), b"copy-%d" % n), read_bytes(p))
if arcnow:
    put(b"src/partly/kept", read_bytes(arcnow[0]))
    put(b"src/partly/deep/er/unique", b"unique %d\n" % seed)
# Empty files: in the source always, in an archive on some seeds.
put(b"src/empty-1", b"")
put(b"src/d0/empty-2", b"")
if seed % 2 == 0:
    put(b"arc2/none/empty", b"")
# Hard links: inside the source, and a source path of an archive file.
srcfiles = sorted(os.path.join(d, f) for d, _, fs in os.walk(b"src") for f in fs)
os.link(srcfiles[0], b"src/hardlink-of-first")
arcfiles = sorted(os.path.join(d, f) for d, _, fs in os.walk(b"arc") for f in fs)
if arcfiles:
    os.link(arcfiles[-1], b"src/hardlink-to-archive")
# Symbolic links: never followed; one in the archive leads outside.
put(b"outside/secret", b"secret bytes %d\n" % seed)
put(b"src/secret-copy", b"secret bytes %d\n" % seed)
os.symlink(b"../outside/secret", b"arc/link-out")
os.symlink(b"../src/secret-copy", b"src/d0/link-to-file" if os.path.isdir(b"src/d0") else b"src/link-to-file")
os.symlink(b"../arc", b"src/link-to-dir")

def regular(root):
    for d, dirs, files in os.walk(root):
        for f in dirs + files:
            p = os.path.join(d, f)
            st = os.lstat(p)
            if os.path.stat.S_ISREG(st.st_mode):
                yield p, st
def skipped(root):
    n = 0
    for d, dirs, files in os.walk(root):
        for f in dirs + files:
            m = os.lstat(os.path.join(d, f)).st_mode
            n += not (os.path.stat.S_ISREG(m) or os.path.stat.S_ISDIR(m))
    return n
def read(p):
    with open(p, "rb") as f:
        return f.read()

# The manifests of arc/, each entry as (algorithm, digest, size or None).
plain = lambda p: b"\n" not in p and b"\\" not in p and b"\r" not in p
files = sorted(regular(b"arc"))
entries = {}
with open(b"arc.md5", "wb") as f:
    for p, st in files:
        if plain(p):
            h = hashlib.md5(read(p)).hexdigest()
            f.write(h.encode() + b"  " + p + b"\n")
            entries.setdefault("md5", []).append(("md5", h, None))
with open(b"arc.sha256", "wb") as f:
    for p, st in files:
        if plain(p):
            h = hashlib.sha256(read(p)).hexdigest()
            f.write(b"SHA256 (" + p + b") = " + h.encode() + b"\n")
            entries.setdefault("sha256", []).append(("sha256", h, None))
def text(p):
    try:
        return p.decode("utf-8")
    except UnicodeDecodeError:
        return None
with open(b"arc.json", "w") as f:
    for p, st in files:
        if text(p) is not None:
            h = hashlib.sha256(read(p)).hexdigest()
            f.write(json.dumps({"path": text(p), "algorithm": "sha256", "digest": h, "size": st.st_size}) + "\n")
            entries.setdefault("json", []).append(("sha256", h, st.st_size))
with open(b"arc.hashdeep", "w") as f:
    f.write("%%%% HASHDEEP-1.0\n%%%% size,md5,sha256,filename\n## Invoked from: /\n## \n")
    for p, st in files:
        if text(p) is not None and plain(p):
            data = read(p)
            h = hashlib.sha256(data).hexdigest()
            f.write("%d,%s,%s,%s\n" % (st.st_size, hashlib.md5(data).hexdigest(), h, text(p)))
            # Read in its hardest column to forge, sha256 (finding 65/06).
            entries.setdefault("hashdeep", []).append(("sha256", h, st.st_size))

tree = lambda root: set(read(p) for p, _ in regular(root))
sources = sorted(regular(b"src"))
configs = {"trees": [("tree", b"arc"), ("tree", b"arc2")]}
for kind in ("md5", "sha256", "json", "hashdeep"):
    configs[kind] = [("manifest", kind), ("tree", b"arc2")]
for name, archives in configs.items():
    print("config", name)
    held = set()
    for a in archives:
        if a[0] == "tree":
            held |= tree(a[1])
    listed = [e for a in archives if a[0] == "manifest" for e in entries.get(a[1], [])]
    cf = cb = mf = mb = 0
    lines = []
    okmap = {}
    for p, st in sources:
        data = read(p)
        ok = data in held or any(
            hashlib.new(algo, data).hexdigest() == h and (size is None or size == len(data))
            for algo, h, size in listed)
        lines.append(("contained " if ok else "missing ") + p.hex())
        if ok:
            cf += 1; cb += len(data)
        else:
            mf += 1; mb += len(data)
        okmap[p] = ok
    for l in sorted(lines):
        print(l)
    print("figures", cf, cb, mf, mb, skipped(b"src"))
    # --dirs: every entry below a contained file (or a directory), one file at least.
    def below(d):
        files = nbytes = 0
        for dd, dirs, fs in os.walk(d):
            for f in dirs + fs:
                p = os.path.join(dd, f)
                m = os.lstat(p).st_mode
                if os.path.stat.S_ISDIR(m):
                    continue
                if not os.path.stat.S_ISREG(m) or not okmap[p]:
                    return None
                files += 1; nbytes += os.lstat(p).st_size
        return (files, nbytes) if files else None
    alldirs = [d for d, _, _ in os.walk(b"src")]
    whole = {d: below(d) for d in alldirs}
    top = [d for d in alldirs if whole[d] and not (d != b"src" and whole.get(os.path.dirname(d)))]
    for d in sorted(top, key=lambda d: (-whole[d][1], d)):
        print("dir", d.hex(), whole[d][0], whole[d][1])
"#;

/// fastsum's `--json` records in the oracle's shape (Python's json reads
/// them; `path_base64` gives a name's exact bytes).
const OURS: &str = r#"
import base64, json, sys
lines = []
cf = cb = mf = mb = 0
for line in sys.stdin:
    r = json.loads(line)
    p = base64.b64decode(r["path_base64"]) if "path_base64" in r else r["path"].encode()
    if "error" in r:
        lines.append("trouble " + p.hex()); continue
    lines.append(("contained " if r["contained"] else "missing ") + p.hex())
    if r["contained"]:
        cf += 1; cb += r["size"]
    else:
        mf += 1; mb += r["size"]
for l in sorted(lines):
    print(l)
print("figures", cf, cb, mf, mb, sys.argv[1])
"#;

/// fastsum's `--dirs --json` records in the oracle's shape, in order.
const OURS_DIRS: &str = r#"
import base64, json, sys
for line in sys.stdin:
    r = json.loads(line)
    p = base64.b64decode(r["path_base64"]) if "path_base64" in r else r["path"].encode()
    print("dir", p.hex(), r["files"], r["bytes"])
"#;

/// The `--in` arguments of each configuration the oracle prints.
fn archives_of(config: &str) -> Vec<&'static str> {
    match config {
        "trees" => vec!["arc", "arc2"],
        "md5" => vec!["arc.md5", "arc2"],
        "sha256" => vec!["arc.sha256", "arc2"],
        "json" => vec!["arc.json", "arc2"],
        "hashdeep" => vec!["arc.hashdeep", "arc2"],
        other => panic!("unknown configuration {other}"),
    }
}

fn run_python(env: &TestEnv, script: &str, args: &[&str], input: &[u8]) -> String {
    use std::io::Write as _;
    let mut child = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .current_dir(env.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("feed python");
    let out = child.wait_with_output().expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("python prints UTF-8")
}

fn fastsum(env: &TestEnv, args: &[&str]) -> Outcome {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    env.fastsum_within(Duration::from_secs(120), &args)
}

/// MD5 of `text`, by Python's hashlib.
fn md5_hex(env: &TestEnv, text: &str) -> String {
    let script = "import hashlib, sys; print(hashlib.md5(sys.stdin.buffer.read()).hexdigest())";
    run_python(env, script, &[], text.as_bytes())
        .trim()
        .to_string()
}

/// The figures of the summary line on stderr: contained files, bytes,
/// not contained files, bytes, skipped entries.
fn summary_figures(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("fastsum contained: ") && l.contains(" not contained ("))
        .unwrap_or_else(|| panic!("no summary line in {stderr}"));
    let number = |part: &str| -> u64 {
        let digits: String = part
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().expect("a number")
    };
    let parts: Vec<&str> = line
        .split(['(', ')', ','])
        .filter(|p| p.chars().any(|c| c.is_ascii_digit()))
        .collect();
    let numbers: Vec<u64> = parts[..4].iter().map(|p| number(p)).collect();
    let skipped = parts
        .iter()
        .find(|p| p.contains("skipped"))
        .map_or(0, |p| number(p));
    format!(
        "figures {} {} {} {} {skipped}",
        numbers[0], numbers[1], numbers[2], numbers[3]
    )
}

/// A remote archive for the differential test: the host (`user@127.0.0.1`
/// of the test's sshd), the transport line for `-e`, the method.
struct RemoteArc {
    host: String,
    rsh: String,
    method: &'static str,
}

/// A transport command line as `-e` takes it (each word single-quoted).
fn rsh_line(words: &[String]) -> String {
    let quoted: Vec<String> = words
        .iter()
        .map(|w| String::from_utf8(sh_quote(w.as_bytes())).unwrap())
        .collect();
    quoted.join(" ")
}

/// The test's OpenSSH server on 127.0.0.1, or why there is none.
fn test_sshd() -> Option<sshd::Sshd> {
    if testenv::lacks(&["python3", "ssh", "ssh-keygen"])
        || !std::path::Path::new("/usr/sbin/sshd").exists()
    {
        testenv::skip(
            "needs python3, ssh, ssh-keygen and /usr/sbin/sshd (a test server on 127.0.0.1)",
        );
        return None;
    }
    Some(sshd::start_sshd())
}

/// One seed: every configuration's answer, text and JSON, against the
/// oracle's; with `remote`, the trees' configuration only, `arc` read
/// on the host as HOST:/ABSOLUTE/arc.
fn differential(seed: u64) {
    differential_with(seed, None)
}

fn differential_with(seed: u64, remote: Option<&RemoteArc>) {
    let env = TestEnv::new();
    let arc_there = remote.map(|r| format!("{}:{}/arc", r.host, env.path().display()));
    let expected = run_python(&env, ORACLE, &[&seed.to_string()], b"");
    let mut configs = expected.split("config ").filter(|c| !c.is_empty());
    let (mut ran, mut listed) = (0, 0);
    for block in configs.by_ref() {
        let (name, all) = block.split_once('\n').expect("a configuration");
        let keep = |dirs: bool| {
            all.lines()
                .filter(|l| l.starts_with("dir ") == dirs)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        };
        let (want, want_dirs) = (keep(false), keep(true));
        let want = want.as_str();
        let figures = want.lines().last().expect("figures");
        let missing = want.lines().filter(|l| l.starts_with("missing ")).count();
        if remote.is_some() && name != "trees" {
            continue;
        }
        let mut args = vec!["contained", "src"];
        for archive in archives_of(name) {
            let archive = match (&arc_there, archive) {
                (Some(there), "arc") => there.as_str(),
                _ => archive,
            };
            args.extend(["--in", archive]);
        }
        if let Some(r) = remote {
            args.extend(["-e", &r.rsh, "--remote-method", r.method]);
        }
        // JSON: the exact sets, read back by Python.
        // (--verify on odd seeds: the bytes compared change no answer.)
        let mut json_args = args.clone();
        json_args.push("--json");
        if seed % 2 == 1 {
            json_args.push("--verify");
        }
        let json = fastsum(&env, &json_args);
        let skipped = figures.rsplit(' ').next().expect("skipped count");
        let ours = run_python(&env, OURS, &[skipped], &json.stdout);
        assert_eq!(ours, want, "seed {seed}, {name}: {}", json.stderr_str());
        // Text: one line per file not contained, whatever its name; the
        // summary's figures; the exit status.
        let text = fastsum(&env, &args);
        assert_eq!(
            text.stdout.iter().filter(|&&b| b == b'\n').count(),
            missing,
            "seed {seed}, {name}: {}",
            text.stdout_str()
        );
        assert_eq!(
            summary_figures(&text.stderr_str()),
            figures,
            "seed {seed}, {name}"
        );
        // A skipped entry (the oracle's links) is not known to be there.
        let want_status = i32::from(missing > 0 || skipped != "0");
        assert_eq!(text.status, want_status, "seed {seed}, {name}");
        assert_eq!(json.status, text.status);
        // --dirs: the directories that could go whole, largest first.
        let mut dirs_args = json_args.clone();
        dirs_args.push("--dirs");
        let dirs = fastsum(&env, &dirs_args);
        let ours = run_python(&env, OURS_DIRS, &[], &dirs.stdout);
        assert_eq!(ours, want_dirs, "seed {seed}, {name} --dirs");
        listed += want_dirs.lines().count();
        ran += 1;
    }
    assert_eq!(
        ran,
        if remote.is_some() { 1 } else { 5 },
        "every configuration was run"
    );
    assert!(listed > 0, "seed {seed}: no whole directory to find");
}

#[test]
fn contained_matches_the_oracle_on_seeded_random_trees() {
    if testenv::lacks(&["python3"]) {
        return testenv::skip("needs python3 for the oracle");
    }
    for seed in 1..=6 {
        differential(seed);
    }
}

/// A HOST:PATH archive (the test's sshd on 127.0.0.1) answers as the
/// same tree read here, by the oracle's account, whichever method
/// hashes it there: its symbolic links (one leading outside) hold
/// nothing, names with newlines and bytes that are not UTF-8 come back.
#[test]
fn contained_remote_archive_matches_the_oracle() {
    let Some(sshd) = test_sshd() else { return };
    for (seed, method) in [(1, "coreutils"), (2, "python"), (3, "perl")] {
        let remote = RemoteArc {
            host: sshd.host(),
            rsh: rsh_line(&sshd.ssh()),
            method,
        };
        differential_with(seed, Some(&remote));
    }
}

/// Hostile remotes: a remote tree's symbolic link leading outside holds
/// nothing; a name with a newline cannot forge a line; a listing cut
/// short, or a remote path that is missing, is trouble (exit 2), with no
/// answer at all;
/// `--remove` is refused.
#[test]
fn contained_remote_archive_hostile() {
    let Some(sshd) = test_sshd() else { return };
    let env = TestEnv::new();
    env.mkdir("src");
    env.mkdir("arc");
    env.mkdir("outside");
    env.file(b"src/secret", b"secret\n");
    env.file(b"src/kept", b"kept\n");
    env.file(b"src/new\nline", b"newline\n");
    env.file(b"arc/kept-copy", b"kept\n");
    env.file(b"arc/nl\ncopy", b"newline\n");
    env.file(b"outside/secret", b"secret\n");
    std::os::unix::fs::symlink("../outside/secret", env.path().join("arc/link")).expect("symlink");
    std::os::unix::fs::symlink("../outside", env.path().join("arc/dirlink")).expect("symlink");
    let there = format!("{}:{}/arc", sshd.host(), env.path().display());
    let rsh = rsh_line(&sshd.ssh());
    let out = fastsum(
        &env,
        &["contained", "-v", "src", "--in", &there, "-e", &rsh],
    );
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    let stdout = out.stdout_str();
    assert!(stdout.lines().any(|l| l == "src/secret"), "{stdout}");
    let copy = format!("contained\tsrc/kept\t{there}\t{there}/kept-copy");
    assert!(stdout.lines().any(|l| l == copy), "{stdout}");
    // The newline name is escaped: one line per file, three in all.
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    // --remove never acts on a remote's word, a local archive beside it
    // or not.
    for archives in [vec![there.as_str()], vec!["src", there.as_str()]] {
        for dry in [false, true] {
            let mut args = vec!["contained", "--remove", "src", "-e", &rsh];
            for archive in &archives {
                args.extend(["--in", archive]);
            }
            if dry {
                args.push("--dry-run");
            }
            let out = fastsum(&env, &args);
            assert_eq!(out.status, 2, "{args:?}: {}", out.stderr_str());
            assert!(out.stdout.is_empty(), "{}", out.stdout_str());
            assert!(
                out.stderr_str().contains("--remove refused: "),
                "{}",
                out.stderr_str()
            );
            assert!(
                out.stderr_str().contains("another host"),
                "{}",
                out.stderr_str()
            );
        }
    }
    assert!(env.path().join("src/kept").exists());
    // A connection that drops mid-listing (the host's answer cut short):
    // trouble, and no answer at all, never a shorter archive.
    let ssh = sshd.ssh().join(" ");
    let cut = rsh_line(&[
        "sh".into(),
        "-c".into(),
        format!("{ssh} \"$@\" | head -c 120"),
        "sh".into(),
    ]);
    let out = fastsum(&env, &["contained", "src", "--in", &there, "-e", &cut]);
    assert_eq!(out.status, 2, "{}", out.stderr_str());
    assert!(
        out.stdout.is_empty(),
        "no answer on a cut listing: {}",
        out.stdout_str()
    );
    assert!(
        out.stderr_str().contains("ended before the listing did"),
        "{}",
        out.stderr_str()
    );
    let missing = format!("{}:{}/no-such", sshd.host(), env.path().display());
    let out = fastsum(&env, &["contained", "src", "--in", &missing, "-e", &rsh]);
    assert_eq!(out.status, 2, "{}", out.stderr_str());
    assert!(
        out.stdout.is_empty(),
        "no answer without the archive: {}",
        out.stdout_str()
    );
    assert!(out.stderr_str().contains("no-such"), "{}", out.stderr_str());
}

/// A tree contained in itself, and in a copy: exit 0, nothing listed.
#[test]
fn contained_every_file_contained_exits_zero() {
    let env = TestEnv::new();
    env.mkdir("src/deep/er");
    env.mkdir("copy/x");
    env.file(b"src/deep/er/one", b"one\n");
    env.file(b"src/two", &testenv::pattern(70_000));
    env.file(b"copy/x/1", b"one\n");
    env.file(b"copy/2", &testenv::pattern(70_000));
    let out = fastsum(&env, &["contained", "src", "--in", "copy"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert!(out.stdout.is_empty());
    assert_eq!(summary_figures(&out.stderr_str()), "figures 2 70004 0 0 0");
    let v = fastsum(&env, &["contained", "-v", "src", "--in", "copy"]);
    assert_eq!(
        v.stdout_str(),
        "contained\tsrc/deep/er/one\tcopy\tcopy/x/1\ncontained\tsrc/two\tcopy\tcopy/2\n"
    );
}

/// A FIFO where a file was is skipped, never opened: the run does not
/// hang, and names it.
#[test]
fn contained_fifo_in_the_source_is_skipped_not_opened() {
    let env = TestEnv::new();
    env.mkdir("src");
    env.mkdir("arc");
    env.file(b"src/a", b"a\n");
    env.file(b"arc/a", b"a\n");
    let fifo = env.path().join("src/pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let out = fastsum(&env, &["contained", "src", "--in", "arc"]);
    // Exit 1: a FIFO is not known to be in the archive (finding 65/12).
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert!(out.stdout.is_empty(), "{}", out.stdout_str());
    assert!(
        out.stderr_str().contains("src/pipe: skipped: a fifo"),
        "{}",
        out.stderr_str()
    );
    assert_eq!(summary_figures(&out.stderr_str()), "figures 1 2 0 0 1");
}

/// A source file rewritten (same size) while it is read is trouble: exit
/// 2, named, and neither contained nor not contained.
#[test]
fn contained_file_rewritten_during_the_read_is_trouble() {
    let env = TestEnv::new();
    env.mkdir("src");
    env.mkdir("arc");
    let big = testenv::pattern(48 << 20);
    env.file(b"src/big", &big);
    env.file(b"arc/copy", &big);
    env.file(b"src/small", b"small\n");
    env.file(b"arc/small", b"small\n");
    // A writer that changes a byte somewhere every millisecond, the size
    // kept, until it is stopped.
    let writer = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import os, random, time\nf = os.open('src/big', os.O_WRONLY)\nn = 0\nwhile True:\n    \
             os.pwrite(f, bytes([n % 256]), random.randrange(48 << 20)); n += 1; time.sleep(0.001)\n",
        )
        .current_dir(env.path())
        .spawn()
        .expect("python3");
    let mut writer = KillOnDrop(writer);
    // Started when the first byte is written (the file's mtime moves).
    let before = std::fs::metadata(env.path().join("src/big"))
        .and_then(|m| m.modified())
        .ok();
    let start = std::time::Instant::now();
    while std::fs::metadata(env.path().join("src/big"))
        .and_then(|m| m.modified())
        .ok()
        == before
    {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the writer never wrote"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = fastsum(&env, &["contained", "--json", "src", "--in", "arc"]);
    let _ = writer.0.kill();
    let stdout = out.stdout_str();
    assert_eq!(out.status, 2, "{stdout} {}", out.stderr_str());
    assert!(
        out.stderr_str().contains("src/big: "),
        "{}",
        out.stderr_str()
    );
    assert!(
        stdout.contains(r#"{"path":"src/small","size":6,"contained":true"#),
        "{stdout}"
    );
    assert!(
        !stdout.contains(r#""path":"src/big","size""#),
        "a verdict for a file that changed: {stdout}"
    );
    assert!(stdout.contains(r#"{"path":"src/big","error":"#), "{stdout}");
}

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A file that cannot be read (as an unprivileged user) is trouble, named
/// with its cause; the rest is still answered.
#[test]
fn contained_unreadable_file_is_trouble_named_with_its_cause() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = TestEnv::new();
    env.mkdir("src");
    env.mkdir("arc");
    env.file(b"src/locked", b"locked\n");
    env.file(b"arc/same-size", b"LOCKED\n");
    env.file(b"src/open", b"open\n");
    env.file(b"arc/open", b"open\n");
    env.file(b"src/gone", b"gone\n");
    let uid = unprivileged_uid();
    for dir in ["", "src", "arc"] {
        std::fs::set_permissions(env.path().join(dir), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
    for file in ["src/open", "arc/open", "src/gone", "arc/same-size"] {
        std::fs::set_permissions(
            env.path().join(file),
            std::fs::Permissions::from_mode(0o644),
        )
        .expect("chmod");
    }
    std::fs::set_permissions(
        env.path().join("src/locked"),
        std::fs::Permissions::from_mode(0o000),
    )
    .expect("chmod");
    let args: [&[u8]; 4] = [b"contained", b"src", b"--in", b"arc"];
    let out = env.fastsum_within_as(uid, Duration::from_secs(60), &args);
    let stderr = out.stderr_str();
    assert_eq!(out.status, 2, "{stderr}");
    assert!(stderr.contains("src/locked: Permission denied"), "{stderr}");
    // Answered: gone is not contained, open is; locked neither.
    assert_eq!(out.stdout_str(), "src/gone\n");
    assert_eq!(summary_figures(&stderr), "figures 1 5 1 5 0");
    // Sizes first: an unreadable file of a size the other side lacks is
    // never opened (no trouble), on either side.
    env.file(b"src/never-read-20-bytes", b"twenty bytes, yes!!\n");
    env.file(b"arc/never-read-21-bytes", b"twenty-one bytes, yes\n");
    for file in ["src/never-read-20-bytes", "arc/never-read-21-bytes"] {
        std::fs::set_permissions(
            env.path().join(file),
            std::fs::Permissions::from_mode(0o000),
        )
        .expect("chmod");
    }
    let out = env.fastsum_within_as(uid, Duration::from_secs(60), &args);
    let stderr = out.stderr_str();
    assert!(!stderr.contains("never-read"), "{stderr}");
    assert_eq!(out.stdout_str(), "src/gone\nsrc/never-read-20-bytes\n");
    for file in ["src/never-read-20-bytes", "arc/never-read-21-bytes"] {
        std::fs::remove_file(env.path().join(file)).expect("rm");
    }
    // --dirs: a directory with a file in trouble below is never listed.
    env.mkdir("src/lockdir");
    env.mkdir("src/onlyok");
    env.file(b"src/lockdir/fine", b"open\n");
    env.file(b"src/onlyok/fine", b"open\n");
    std::fs::rename(
        env.path().join("src/locked"),
        env.path().join("src/lockdir/locked"),
    )
    .expect("move");
    for dir in ["src/lockdir", "src/onlyok"] {
        std::fs::set_permissions(env.path().join(dir), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
    let args: [&[u8]; 5] = [b"contained", b"--dirs", b"src", b"--in", b"arc"];
    let out = env.fastsum_within_as(uid, Duration::from_secs(60), &args);
    assert_eq!(out.status, 2, "{}", out.stderr_str());
    assert!(out
        .stderr_str()
        .contains("src/lockdir/locked: Permission denied"));
    assert_eq!(out.stdout_str(), "5 bytes, 1 file\tsrc/onlyok\n");
}

/// Root reads anything: the unreadable test runs as nobody then.
fn unprivileged_uid() -> Option<u32> {
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| {
        use std::os::unix::fs::MetadataExt as _;
        m.uid() == 0
    });
    root.then_some(65534)
}

/// A name holding a newline and what looks like a report line cannot
/// forge one: one line per file not contained, escaped.
#[test]
fn contained_newline_name_cannot_forge_a_report_line() {
    let env = TestEnv::new();
    env.mkdir("src");
    env.mkdir("arc");
    env.file(b"src/other", b"kept\n");
    env.file(b"arc/other", b"kept\n");
    env.mkdir("src/x\nsrc");
    env.file(b"src/x\nsrc/other", b"not kept\n");
    env.file(b"src/y\nfastsum contained: 9 files contained", b"neither\n");
    let out = fastsum(&env, &["contained", "src", "--in", "arc"]);
    assert_eq!(out.status, 1);
    let lines: Vec<&str> = out.stdout_str().leak().lines().collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines.iter().all(|l| l.starts_with('\\')), "{lines:?}");
    assert!(!lines.contains(&"src/other"), "{lines:?}");
    assert_eq!(
        out.stderr_str().matches("fastsum contained: ").count(),
        1,
        "{}",
        out.stderr_str()
    );
}

/// A manifest that lists a digest under a size the file does not have
/// holds nothing of that size: the file is not contained (and not read).
#[test]
fn contained_manifest_that_lies_about_a_size_holds_nothing() {
    let env = TestEnv::new();
    env.mkdir("src");
    env.file(b"src/hello", b"hello\n");
    let md5 = md5_hex(&env, "hello\n");
    let list =
        format!("{{\"path\":\"h\",\"algorithm\":\"md5\",\"digest\":\"{md5}\",\"size\":5}}\n");
    env.file(b"lie.json", list.as_bytes());
    let out = fastsum(&env, &["contained", "src", "--in", "lie.json"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "src/hello\n");
    // The truth about the size: contained.
    let truth = list.replace("\"size\":5", "\"size\":6");
    env.file(b"true.json", truth.as_bytes());
    let out = fastsum(&env, &["contained", "-v", "src", "--in", "true.json"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "contained\tsrc/hello\ttrue.json\th\n");
}

/// Malformed lines are trouble named by line (exit 2, the rest still
/// answered); a list that is no list at all is a clear error.
#[test]
fn contained_malformed_manifest_lines_are_trouble() {
    let env = TestEnv::new();
    env.mkdir("src");
    env.file(b"src/hello", b"hello\n");
    env.file(b"src/other", b"other\n");
    let md5 = md5_hex(&env, "hello\n");
    env.file(
        b"bad.md5",
        format!("{md5}  h\nthis is no line\n").as_bytes(),
    );
    let out = fastsum(&env, &["contained", "src", "--in", "bad.md5"]);
    let stderr = out.stderr_str();
    assert_eq!(out.status, 2, "{stderr}");
    assert!(stderr.contains("bad.md5: line 2: "), "{stderr}");
    assert_eq!(out.stdout_str(), "src/other\n");
    env.file(b"garbage", b"\x00\x01 not a list\n");
    let out = fastsum(&env, &["contained", "src", "--in", "garbage"]);
    assert_eq!(out.status, 2);
    assert!(
        out.stderr_str().starts_with("fastsum contained: garbage"),
        "{}",
        out.stderr_str()
    );
    assert!(out.stdout.is_empty(), "no answer without the archive");
    let out = fastsum(&env, &["contained", "src", "--in", "no-such-archive"]);
    assert_eq!(out.status, 2);
    assert!(
        out.stderr_str().contains("No such file or directory"),
        "{}",
        out.stderr_str()
    );
}

/// A symbolic link in the archive that leads outside holds nothing: the
/// file outside is not the archive's.
#[test]
fn contained_symlink_in_the_archive_leading_outside_holds_nothing() {
    let env = TestEnv::new();
    env.mkdir("src");
    env.mkdir("arc");
    env.mkdir("outside");
    env.file(b"outside/secret", b"secret\n");
    env.file(b"src/secret", b"secret\n");
    std::os::unix::fs::symlink("../outside/secret", env.path().join("arc/link")).expect("symlink");
    std::os::unix::fs::symlink("../outside", env.path().join("arc/dirlink")).expect("symlink");
    let out = fastsum(&env, &["contained", "-v", "src", "--in", "arc"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "src/secret\n");
}

/// Every regular file under `root` as sorted hex paths, with the SHA-256
/// of its bytes (Python: the independent view of what is on disk).
const LISTING: &str = r#"
import hashlib, os, sys
out = []
for d, dirs, files in os.walk(sys.argv[1].encode()):
    for f in dirs + files:
        p = os.path.join(d, f)
        if os.path.stat.S_ISREG(os.lstat(p).st_mode):
            out.append(p.hex() + " " + hashlib.sha256(open(p, "rb").read()).hexdigest())
for l in sorted(out):
    print(l)
"#;

fn listing(env: &TestEnv, root: &str) -> String {
    run_python(env, LISTING, &[root], b"")
}

/// --remove on seeded random trees: a dry run says exactly what the run
/// then does; afterwards the source holds exactly the oracle's files not
/// contained, and the archives are as they were, byte for byte.
#[test]
fn contained_remove_leaves_exactly_the_files_not_contained() {
    if testenv::lacks(&["python3"]) {
        return testenv::skip("needs python3 for the oracle");
    }
    for seed in [3, 4] {
        let env = TestEnv::new();
        let expected = run_python(&env, ORACLE, &[&seed.to_string()], b"");
        let trees = expected
            .split("config ")
            .find(|c| c.starts_with("trees\n"))
            .expect("the trees configuration");
        let missing: Vec<&str> = trees
            .lines()
            .filter_map(|l| l.strip_prefix("missing "))
            .collect();
        let contained = trees
            .lines()
            .filter(|l| l.starts_with("contained "))
            .count();
        let archives = (listing(&env, "arc"), listing(&env, "arc2"));
        let before = listing(&env, "src");
        let args = [
            "contained",
            "--remove",
            "src",
            "--in",
            "arc",
            "--in",
            "arc2",
        ];
        let mut dry_args = args.to_vec();
        dry_args.push("--dry-run");
        let dry = fastsum(&env, &dry_args);
        assert_eq!(listing(&env, "src"), before, "a dry run touches nothing");
        let run = fastsum(&env, &args);
        assert_eq!(
            run.status,
            i32::from(!missing.is_empty()),
            "{}",
            run.stderr_str()
        );
        let said = dry.stdout_str().replace("would remove: ", "remove: ");
        assert_eq!(
            said,
            run.stdout_str(),
            "seed {seed}: the dry run said otherwise"
        );
        assert_eq!(
            run.stdout.iter().filter(|&&b| b == b'\n').count(),
            contained
        );
        let left: Vec<String> = listing(&env, "src")
            .lines()
            .map(|l| l.split(' ').next().expect("a path").to_string())
            .collect();
        let mut want: Vec<String> = missing.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(left, want, "seed {seed}: what is left");
        assert_eq!((listing(&env, "arc"), listing(&env, "arc2")), archives);
        // Nothing contained is left: a second run removes nothing more.
        let again = fastsum(&env, &args);
        assert!(again.stdout.is_empty(), "{}", again.stdout_str());
    }
}

/// A source that is, lies in, or holds an archive is refused whole, as is
/// a manifest archive: exit 2, said, nothing touched.
#[test]
fn contained_remove_refuses_overlapping_operands_and_manifests() {
    let env = TestEnv::new();
    env.mkdir("arc/sub");
    env.mkdir("src");
    env.file(b"arc/sub/a", b"a\n");
    env.file(b"arc/b", b"a\n");
    env.file(b"src/a", b"a\n");
    env.file(b"list.md5", b"60b725f10c9c85c70d97880dfe8191b3  a\n");
    std::os::unix::fs::symlink("arc", env.path().join("arc-link")).expect("symlink");
    let before = (listing(&env, "arc"), listing(&env, "src"));
    // Refused before anything is read: a manifest that is not there and
    // a bucket behind an endpoint nobody serves are refused for what they
    // are, not found missing or unreachable first.
    let cases: [(&[&str], &str); 8] = [
        (&["arc/sub", "--in", "arc"], "overlap"),
        (&["arc", "--in", "arc"], "overlap"),
        (&["arc-link", "--in", "arc"], "overlap"),
        (&["arc", "--in", "arc/sub"], "overlap"),
        (&["src", "--in", "list.md5"], "is a manifest"),
        (&["src", "--in", "missing.md5"], "is a manifest"),
        (
            &["src", "--in", "arc", "--in", "missing.md5"],
            "is a manifest",
        ),
        (&["src", "--in", "s3://b/p"], "is in S3"),
    ];
    for (operands, why) in cases {
        for dry in [false, true] {
            let mut args = vec!["contained", "--remove"];
            args.extend_from_slice(operands);
            if dry {
                args.push("--dry-run");
            }
            let out = fastsum(&env, &args);
            assert_eq!(out.status, 2, "{args:?}");
            assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout_str());
            assert!(
                out.stderr_str().contains("--remove refused: "),
                "{}",
                out.stderr_str()
            );
            assert!(out.stderr_str().contains(why), "{}", out.stderr_str());
            // Nothing was looked for: no count of what was found.
            assert!(
                !out.stderr_str().contains("contained ("),
                "{}",
                out.stderr_str()
            );
        }
    }
    assert_eq!((listing(&env, "arc"), listing(&env, "src")), before);
}

/// A source path that is a hard link of its archive copy is removed (the
/// archive still names the inode: its bytes stay), two such paths too.
#[test]
fn contained_remove_takes_a_hard_link_of_the_archive_copy_and_keeps_the_bytes() {
    let env = TestEnv::new();
    env.mkdir("arc");
    env.mkdir("src");
    env.file(b"arc/copy", &testenv::pattern(9000));
    std::fs::hard_link(env.path().join("arc/copy"), env.path().join("src/link1")).expect("link");
    std::fs::hard_link(env.path().join("arc/copy"), env.path().join("src/link2")).expect("link");
    env.file(b"src/plain", &testenv::pattern(9000));
    let out = fastsum(&env, &["contained", "--remove", "src", "--in", "arc"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
    assert_eq!(
        out.stdout_str(),
        "remove: src/link1\nremove: src/link2\nremove: src/plain\n"
    );
    assert_eq!(
        std::fs::read(env.path().join("arc/copy")).expect("kept"),
        testenv::pattern(9000)
    );
    assert_eq!(
        std::fs::read_dir(env.path().join("src"))
            .expect("src")
            .count(),
        0
    );
}

/// Unmounts a bind mount when the test ends, however it ends.
struct Unmount(std::path::PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// One directory seen by two paths (a bind mount): as the whole source,
/// refused; below the source (an archive's directory mounted inside it),
/// refused whole too (per file, a hard link pair of the archive slipped
/// through).
#[test]
fn contained_remove_never_takes_the_archive_entry_seen_through_a_bind_mount() {
    let env = TestEnv::new();
    env.mkdir("arc/sub");
    env.mkdir("view");
    env.mkdir("src/sub");
    env.file(b"arc/sub/a", b"a\n");
    env.file(b"src/own", b"a\n");
    let bind = |from: &str, to: &str| {
        std::process::Command::new("mount")
            .args(["--bind", from, to])
            .current_dir(env.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !bind("arc", "view") {
        return testenv::skip("cannot bind-mount (needs CAP_SYS_ADMIN)");
    }
    let _view = Unmount(env.path().join("view"));
    let out = fastsum(&env, &["contained", "--remove", "view", "--in", "arc"]);
    assert_eq!(out.status, 2, "{}", out.stderr_str());
    assert!(out.stderr_str().contains("overlap"), "{}", out.stderr_str());
    assert!(bind("arc/sub", "src/sub"), "the second bind mount");
    let _sub = Unmount(env.path().join("src/sub"));
    let out = fastsum(&env, &["contained", "--remove", "src", "--in", "arc"]);
    assert_eq!(out.status, 2, "{}", out.stderr_str());
    assert!(
        out.stderr_str().contains(
            "--remove refused: the source src and an archive share the directory src/sub"
        ),
        "{}",
        out.stderr_str()
    );
    assert_eq!(out.stdout_str(), "");
    assert!(env.path().join("src/own").exists(), "nothing is removed");
    assert_eq!(
        std::fs::read(env.path().join("arc/sub/a")).expect("kept"),
        b"a\n"
    );
}

/// `--cache`: the second run reads no whole file on either side (`fastsum
/// cache stats` counts hits and no misses) and answers as the first; an
/// archive copy rewritten in place with bytes of its size is read again
/// and no longer holds the source file: the cache is never stale.
#[test]
fn contained_cache_answers_unchanged_files_and_is_never_stale() {
    let env = TestEnv::new();
    env.mkdir("src/d");
    env.mkdir("arc/e");
    let (one, two) = (testenv::pattern(300_000), testenv::pattern(90_000));
    env.file(b"src/d/one", &one);
    env.file(b"src/two", &two);
    env.file(b"arc/e/one-copy", &one);
    env.file(b"arc/two-copy", &two);
    // Entries are stored only for files older than the racy window.
    std::thread::sleep(Duration::from_millis(2300));
    let stats = || {
        let out = fastsum(&env, &["cache", "--cache", "c.sqlite", "stats"]);
        assert_eq!(out.status, 0, "{}", out.stderr_str());
        out.stdout_str()
    };
    let args = ["contained", "--cache=c.sqlite", "src", "--in", "arc"];
    let first = fastsum(&env, &args);
    assert_eq!(first.status, 0, "{}", first.stderr_str());
    assert!(stats().contains(" 0 hits"), "{}", stats());
    let second = fastsum(&env, &args);
    assert_eq!(second.status, 0, "{}", second.stderr_str());
    let warm = stats();
    assert!(
        warm.contains(" 0 misses") && !warm.contains(" 0 hits"),
        "{warm}"
    );
    // Same size, other bytes, mtime put back: only the ctime says so.
    let copy = env.path().join("arc/e/one-copy");
    let mtime = std::fs::metadata(&copy).unwrap().modified().unwrap();
    let mut changed = one.clone();
    changed[150_000] ^= 0x55;
    std::fs::write(&copy, &changed).unwrap();
    let f = std::fs::File::options().write(true).open(&copy).unwrap();
    f.set_modified(mtime).unwrap();
    drop(f);
    let after = fastsum(&env, &args);
    assert_eq!(after.status, 1, "{}", after.stderr_str());
    assert_eq!(after.stdout_str(), "src/d/one\n");
}

/// `--cache` with a manifest archive (the offline disk's catalogue): the
/// source files are answered in the manifest's own algorithm, so the
/// second run reads no file (`cache stats`: hits, 0 misses) and answers
/// as the first; a source file rewritten in place (same size, mtime put
/// back) is read again and is no longer contained. The list is written by
/// coreutils' sha256sum, not by fastsum.
#[test]
fn contained_cache_answers_the_sources_against_a_manifest_and_is_never_stale() {
    if testenv::lacks(&["sha256sum"]) {
        return;
    }
    let env = TestEnv::new();
    env.mkdir("src/d");
    env.mkdir("arc");
    let (one, two) = (testenv::pattern(300_000), testenv::pattern(90_000));
    env.file(b"src/d/one", &one);
    env.file(b"src/two", &two);
    env.file(b"arc/one-copy", &one);
    env.file(b"arc/two-copy", &two);
    let listed = std::process::Command::new(testenv::reference_path("sha256sum"))
        .current_dir(env.path())
        .args(["arc/one-copy", "arc/two-copy"])
        .output()
        .unwrap();
    assert!(listed.status.success(), "{listed:?}");
    env.file(b"arc.sha256", &listed.stdout);
    std::fs::remove_dir_all(env.path().join("arc")).unwrap();
    // Entries are stored only for files older than the racy window.
    std::thread::sleep(Duration::from_millis(2300));
    let stats = || {
        let out = fastsum(&env, &["cache", "--cache", "c.sqlite", "stats"]);
        assert_eq!(out.status, 0, "{}", out.stderr_str());
        out.stdout_str()
    };
    let args = [
        "contained",
        "-a",
        "sha256",
        "--cache=c.sqlite",
        "src",
        "--in",
        "arc.sha256",
    ];
    let first = fastsum(&env, &args);
    assert_eq!(first.status, 0, "{}", first.stderr_str());
    assert!(stats().contains(" 0 hits"), "{}", stats());
    let second = fastsum(&env, &args);
    assert_eq!(second.status, 0, "{}", second.stderr_str());
    let warm = stats();
    assert!(
        warm.contains(" 0 misses") && !warm.contains(" 0 hits"),
        "{warm}"
    );
    let one_path = env.path().join("src/d/one");
    let mtime = std::fs::metadata(&one_path).unwrap().modified().unwrap();
    let mut changed = one.clone();
    changed[150_000] ^= 0x55;
    std::fs::write(&one_path, &changed).unwrap();
    let f = std::fs::File::options()
        .write(true)
        .open(&one_path)
        .unwrap();
    f.set_modified(mtime).unwrap();
    drop(f);
    let after = fastsum(&env, &args);
    assert_eq!(after.status, 1, "{}", after.stderr_str());
    assert_eq!(after.stdout_str(), "src/d/one\n");
}

/// A list of CRC32 (or any CRC, or a digest under 64 bits) cannot say two
/// files hold the same bytes: a colliding pair, found here by Python's
/// zlib in about a second, is refused whole (exit 2, the list named),
/// never called contained. Hostile finding 65/01.
#[test]
fn contained_a_list_of_weak_checksums_is_refused_not_believed() {
    if testenv::lacks(&["python3"]) {
        return testenv::skip("needs python3 to find a CRC32 collision");
    }
    let env = TestEnv::new();
    env.mkdir("src");
    let find = "import zlib\nseen = {}\ni = 0\nwhile True:\n    s = b'file-%d' % i\n    \
                c = zlib.crc32(s)\n    if c in seen:\n        \
                open('archived', 'wb').write(seen[c]); open('src/b', 'wb').write(s); break\n    \
                seen[c] = s\n    i += 1\n";
    run_python(&env, find, &[], b"");
    assert_ne!(
        std::fs::read(env.path().join("archived")).unwrap(),
        std::fs::read(env.path().join("src/b")).unwrap()
    );
    for algorithm in ["crc32", "crc32c", "xxh32", "crc64nvme"] {
        let list = fastsum(&env, &["-a", algorithm, "--tag", "archived", "src/b"]);
        assert_eq!(list.status, 0, "{}", list.stderr_str());
        std::fs::write(env.path().join("arc.list"), &list.stdout).unwrap();
        let out = fastsum(&env, &["contained", "-v", "src", "--in", "arc.list"]);
        assert_eq!(out.status, 2, "{algorithm}: {}", out.stdout_str());
        assert!(out.stdout.is_empty(), "{algorithm}: {}", out.stdout_str());
        assert!(
            out.stderr_str().contains("arc.list") && out.stderr_str().contains("cannot tell"),
            "{algorithm}: {}",
            out.stderr_str()
        );
    }
    // The same pair in a list of MD5s: told apart.
    let list = fastsum(&env, &["-a", "md5", "archived"]);
    std::fs::write(env.path().join("arc.md5"), &list.stdout).unwrap();
    let out = fastsum(&env, &["contained", "src", "--in", "arc.md5"]);
    assert_eq!(out.status, 1, "{}", out.stderr_str());
    assert_eq!(out.stdout_str(), "src/b\n");
}

/// A manifest given as a pipe or a FIFO (read twice, it cannot be) is
/// refused with the reason at once, never waited on nor called empty.
/// Hostile finding 65/08.
#[test]
fn contained_a_manifest_that_is_a_fifo_is_refused_without_waiting() {
    let env = TestEnv::new();
    env.mkdir("src");
    env.file(b"src/a", b"a\n");
    let fifo = env.path().join("list.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let out = fastsum(&env, &["contained", "src", "--in", "list.fifo"]);
    assert_eq!(out.status, 2, "{}", out.stderr_str());
    assert!(
        out.stderr_str().contains("list.fifo: not a regular file"),
        "{}",
        out.stderr_str()
    );
}

/// `--dirs` never says a directory could go whole when its files' copies
/// are themselves: a source inside its archive is refused (as for
/// `--remove`), and a source that is a bind mount of the archive's own
/// directory lists nothing. Hostile finding 65/13.
#[test]
fn contained_dirs_never_lists_a_directory_whose_copies_are_itself() {
    let env = TestEnv::new();
    env.mkdir("arc/sub");
    env.mkdir("src");
    env.file(b"arc/sub/u", b"unique\n");
    let out = fastsum(&env, &["contained", "--dirs", "arc/sub", "--in", "arc"]);
    assert_eq!(out.status, 2, "{}", out.stderr_str());
    assert!(out.stdout.is_empty(), "{}", out.stdout_str());
    assert!(
        out.stderr_str().contains("--dirs refused") && out.stderr_str().contains("overlap"),
        "{}",
        out.stderr_str()
    );
    let bound = std::process::Command::new("mount")
        .args(["--bind", "arc/sub", "src"])
        .current_dir(env.path())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !bound {
        return testenv::skip("cannot bind-mount (needs CAP_SYS_ADMIN)");
    }
    let _src = Unmount(env.path().join("src"));
    let out = fastsum(&env, &["contained", "--dirs", "src", "--in", "arc"]);
    assert!(out.stdout.is_empty(), "{}", out.stdout_str());
}

/// `--dirs` never lists a directory holding what the walk did not see: a
/// file an exclude left out, or a mount point under --one-file-system.
/// Hostile finding 65/07.
#[test]
fn contained_dirs_counts_what_the_walk_left_out() {
    let env = TestEnv::new();
    env.mkdir("arc");
    env.mkdir("src/d/e");
    env.mkdir("src/empty");
    env.file(b"arc/a", b"a\n");
    env.file(b"src/d/a", b"a\n");
    env.file(b"src/d/e/a", b"a\n");
    env.file(b"src/d/notes.tmp", b"only here\n");
    let out = fastsum(
        &env,
        &[
            "contained",
            "--dirs",
            "src",
            "--in",
            "arc",
            "--exclude",
            "*.tmp",
        ],
    );
    assert_eq!(out.stdout_str(), "2 bytes, 1 file\tsrc/d/e\n");
    std::fs::remove_file(env.path().join("src/d/notes.tmp")).unwrap();
    let out = fastsum(&env, &["contained", "--dirs", "src", "--in", "arc"]);
    assert_eq!(
        out.stdout_str(),
        "4 bytes, 2 files\tsrc\n",
        "an empty directory spoils nothing"
    );
    env.mkdir("src/d/mnt");
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "tmpfs", "src/d/mnt"])
        .current_dir(env.path())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        return testenv::skip("cannot mount a tmpfs (needs CAP_SYS_ADMIN)");
    }
    let _mnt = Unmount(env.path().join("src/d/mnt"));
    std::fs::write(env.path().join("src/d/mnt/x"), b"on another fs\n").unwrap();
    let out = fastsum(
        &env,
        &[
            "contained",
            "--dirs",
            "--one-file-system",
            "src",
            "--in",
            "arc",
        ],
    );
    assert_eq!(out.stdout_str(), "2 bytes, 1 file\tsrc/d/e\n");
}

/// Wang and Yu's pair (2004): two 128-byte blocks with one MD5.
const COLLISION: [&str; 2] = [
    "d131dd02c5e6eec4693d9a0698aff95c2fcab58712467eab4004583eb8fb7f89\
     55ad340609f4b30283e488832571415a085125e8f7cdc99fd91dbdf280373c5b\
     d8823e3156348f5bae6dacd436c919c6dd53e2b487da03fd02396306d248cda0\
     e99f33420f577ee8ce54b67080a80d1ec69821bcb6a8839396f9652b6ff72a70",
    "d131dd02c5e6eec4693d9a0698aff95c2fcab50712467eab4004583eb8fb7f89\
     55ad340609f4b30283e4888325f1415a085125e8f7cdc99fd91dbd7280373c5b\
     d8823e3156348f5bae6dacd436c919c6dd53e23487da03fd02396306d248cda0\
     e99f33420f577ee8ce54b67080280d1ec69821bcb6a8839396f965ab6ff72a70",
];

/// `arc/coll` and `src/coll`, the two halves of [`COLLISION`] (one MD5,
/// other bytes); the archive's half returned.
fn collision_in_src_and_arc() -> (TestEnv, Vec<u8>) {
    let env = TestEnv::new();
    env.mkdir("src");
    env.mkdir("arc");
    let (a, b) = (unhex(COLLISION[0]), unhex(COLLISION[1]));
    assert_ne!(a, b);
    env.file(b"arc/coll", &a);
    env.file(b"src/coll", &b);
    (env, a)
}

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// A hashdeep list of md5 and sha256 (in either order) whose md5 is a
/// collision of the source file's: its sha256 decides, and the file is not
/// contained. Hostile finding 65/06: only the first column was read.
#[test]
fn contained_a_hashdeep_list_is_never_decided_by_its_md5_alone() {
    if testenv::lacks(&["md5sum", "sha256sum"]) {
        return testenv::skip("needs md5sum and sha256sum for the list");
    }
    let (env, a) = collision_in_src_and_arc();
    let digest = |tool: &str, path: &str| {
        let out = std::process::Command::new(tool)
            .arg(path)
            .current_dir(env.path())
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()[..if tool == "md5sum" { 32 } else { 64 }].to_string()
    };
    let (md5a, md5b) = (digest("md5sum", "arc/coll"), digest("md5sum", "src/coll"));
    assert_eq!(md5a, md5b, "the pair collides");
    let sha = digest("sha256sum", "arc/coll");
    for (columns, line) in [
        ("md5,sha256", format!("128,{md5a},{sha},/arc/coll")),
        ("sha256,md5", format!("128,{sha},{md5a},/arc/coll")),
    ] {
        let list = format!("%%%% HASHDEEP-1.0\n%%%% size,{columns},filename\n##\n{line}\n");
        env.file(b"arc.hd", list.as_bytes());
        let out = fastsum(&env, &["contained", "src", "--in", "arc.hd"]);
        assert_eq!(out.status, 1, "{columns}: {}", out.stderr_str());
        assert_eq!(out.stdout_str(), "src/coll\n", "{columns}");
    }
    // The same list holds the archive's own bytes.
    env.file(b"src/coll", &a);
    let out = fastsum(&env, &["contained", "src", "--in", "arc.hd"]);
    assert_eq!(out.status, 0, "{}", out.stderr_str());
}

/// A list fastsum writes with several digests a file (`-a md5 -a sha256`
/// as tagged lines in either order, `--json` with `"digests"`) of the
/// archive's half of the MD5 pair: `contained` and `diff` decide by its
/// SHA-256, so the source's colliding half is neither contained nor
/// unchanged; `-a md5` still reads the MD5 when asked. Hostile finding
/// 65/F1: the first algorithm decided, and the colliding file was
/// contained and unchanged, exit 0.
#[test]
fn contained_and_diff_compare_a_several_digest_list_by_each_digest() {
    let (env, a) = collision_in_src_and_arc();
    for (list, args) in [
        (
            "md5-first.tag",
            &["-r", "-a", "md5", "-a", "sha256", "arc"][..],
        ),
        ("sha-first.tag", &["-r", "-a", "sha256", "-a", "md5", "arc"]),
        (
            "both.json",
            &["-r", "--json", "-a", "md5", "-a", "sha256", "arc"],
        ),
    ] {
        let made = fastsum(&env, args);
        assert_eq!(made.status, 0, "{list}: {}", made.stderr_str());
        assert!(
            made.stdout_str().to_lowercase().contains("sha256"),
            "{list}"
        );
        env.file(list.as_bytes(), &made.stdout);
        let out = fastsum(&env, &["contained", "src", "--in", list]);
        assert_eq!(out.status, 1, "{list}: {}", out.stderr_str());
        assert_eq!(out.stdout_str(), "src/coll\n", "{list}");
        let diff = fastsum(&env, &["diff", list, "src"]);
        assert_eq!(diff.status, 1, "{list}: {}", diff.stderr_str());
        assert_eq!(diff.stdout_str(), "M\tcoll\n", "{list}");
        // Asked for by name, the MD5 decides (and is fooled, as md5sum is).
        let md5 = fastsum(&env, &["contained", "-a", "md5", "src", "--in", list]);
        assert_eq!(md5.status, 0, "{list}: {}", md5.stderr_str());
    }
    // The archive's own bytes are contained and unchanged by every list.
    env.file(b"src/coll", &a);
    for list in ["md5-first.tag", "sha-first.tag", "both.json"] {
        let out = fastsum(&env, &["contained", "src", "--in", list]);
        assert_eq!(out.status, 0, "{list}: {}", out.stderr_str());
        let diff = fastsum(&env, &["diff", list, "src"]);
        assert_eq!(
            (diff.status, diff.stdout_str()),
            (0, String::new()),
            "{list}"
        );
    }
}

/// A list of several digests a file is compared by every one of them:
/// a pair that collides in the strongest (MD5 beside XXH128, a CRC) but
/// not in another is told apart by `contained`, `diff` and `audit`, as
/// `-c` tells it (one line FAILED). The hardest to forge alone passed it,
/// exit 0, while `-c` of the same list failed.
#[test]
fn a_several_digest_list_is_compared_by_every_digest() {
    let (env, a) = collision_in_src_and_arc();
    let lists = [
        (
            "md5-xxh.tag",
            &["-r", "-a", "md5", "-a", "xxh128", "arc"][..],
        ),
        ("crc-md5.tag", &["-r", "-a", "crc32c", "-a", "md5", "arc"]),
        (
            "xxh-md5.json",
            &["-r", "--json", "-a", "xxh128", "-a", "md5", "arc"],
        ),
        // BLAKE2b of several lengths: each is compared (the hardest to
        // forge alone decided, and passed the pair beside a wrong XXH128).
        (
            "b2s.json",
            &[
                "-r",
                "--json",
                "-a",
                "md5",
                "-a",
                "xxh128",
                "-a",
                "blake2b-8",
                "-a",
                "blake2b-16",
                "arc",
            ],
        ),
        (
            "b2s.tag",
            &[
                "-r",
                "-a",
                "md5",
                "-a",
                "blake2b-128",
                "-a",
                "blake2b-8",
                "arc",
            ],
        ),
        (
            "crc-md5.json",
            &["-r", "--json", "-a", "md5", "-a", "crc", "arc"],
        ),
    ];
    // cksum's CRC as a checksum line is read by nothing (`-c` passed the
    // pair on its MD5 line alone): refused, --json named.
    let refused = fastsum(&env, &["-r", "-a", "md5", "-a", "crc", "arc"]);
    assert_eq!(refused.status, 2);
    assert!(refused.stdout.is_empty());
    assert!(
        refused
            .stderr_str()
            .contains("crc's numbers cannot be checked from a checksum line")
            && refused.stderr_str().contains("give --json"),
        "{}",
        refused.stderr_str()
    );
    for (list, args) in lists {
        let made = fastsum(&env, args);
        assert_eq!(made.status, 0, "{list}: {}", made.stderr_str());
        env.file(list.as_bytes(), &made.stdout);
        let out = fastsum(&env, &["contained", "src", "--in", list]);
        assert_eq!(
            (out.status, out.stdout_str()),
            (1, "src/coll\n".into()),
            "{list}: {}",
            out.stderr_str()
        );
        let diff = fastsum(&env, &["diff", list, "src"]);
        assert_eq!(
            (diff.status, diff.stdout_str()),
            (1, "M\tcoll\n".into()),
            "{list}: {}",
            diff.stderr_str()
        );
        // The list's paths are arc/...: audit the tree they name, with
        // the other file of the pair in place.
        env.file(b"arc/coll", &unhex(COLLISION[1]));
        let audit = fastsum(&env, &["audit", list, "."]);
        assert_ne!(audit.status, 0, "{list}: {}", audit.stdout_str());
        assert!(
            audit.stdout_str().contains("Files modified: 1\n"),
            "{list}: {}",
            audit.stdout_str()
        );
        let check = fastsum(&env, &["-c", list]);
        assert_eq!(check.status, 1, "{list}: -c agrees: {}", check.stdout_str());
        env.file(b"arc/coll", &a);
        let audit = fastsum(&env, &["audit", list, "."]);
        let said = audit.stdout_str();
        assert!(
            said.contains("Files matched: 1\n") && said.contains("Files modified: 0\n"),
            "{list}: {said}"
        );
    }
    // The archive's own bytes are contained and unchanged by every list.
    env.file(b"src/coll", &a);
    for (list, _) in lists {
        let out = fastsum(&env, &["contained", "src", "--in", list]);
        assert_eq!(out.status, 0, "{list}: {}", out.stderr_str());
        let diff = fastsum(&env, &["diff", list, "src"]);
        assert_eq!(
            (diff.status, diff.stdout_str()),
            (0, String::new()),
            "{list}"
        );
    }
}

/// A list of several digests a file read as a reader of it would expect
/// (helper-30's findings 3-5): one digest given twice is its line's
/// problem, named as such; `diff` reads a sorted list twice alike (a
/// record refused by the first read was let through by the second, and
/// the list called "changed while it was read"); `scrub --manifest`
/// compares by the `-a` given, as `diff` and `contained` do.
#[test]
fn a_several_digest_list_is_read_alike_by_every_pass_and_every_command() {
    let env = TestEnv::new();
    env.mkdir("arc");
    env.mkdir("src");
    env.file(b"arc/a", b"a\n");
    env.file(b"arc/b", b"bb\n");
    env.file(b"src/a", b"a\n");
    env.file(b"src/b", b"bb\n");
    let tagged = fastsum(&env, &["-r", "-a", "md5", "-a", "xxh128", "arc"]).stdout_str();
    let lines: Vec<&str> = tagged.lines().collect();
    assert_eq!(lines.len(), 4, "{tagged}");
    // arc/a's XXH128 line twice.
    let repeated = [lines[0], lines[1], lines[1], lines[2], lines[3]].join("\n") + "\n";
    env.file(b"rep.tag", repeated.as_bytes());
    let out = fastsum(&env, &["contained", "src", "--in", "rep.tag"]);
    assert_eq!(out.status, 2, "{}", out.stderr_str());
    assert!(
        out.stderr_str().contains(
            "rep.tag: line 3: its xxh128 digest is given twice (lines 2 and 3), and no md5 line"
        ),
        "{}",
        out.stderr_str()
    );
    let diff = fastsum(&env, &["diff", "rep.tag", "src"]);
    assert_eq!(diff.status, 2, "{}", diff.stderr_str());
    assert!(
        diff.stderr_str().contains("given twice"),
        "{}",
        diff.stderr_str()
    );

    // A record beside a digest fastsum cannot compute, refused by the
    // first read of a sorted list: the second read refuses it too.
    let json = fastsum(&env, &["-r", "--json", "-a", "md5", "-a", "xxh128", "arc"]).stdout_str();
    let (first, second) = json.split_once('\n').unwrap();
    assert!(second.contains("\"path\":\"arc/b\""), "{json}");
    let unknown = second.replacen("\"},", "\",\"tiger\":\"00\"},", 1);
    assert_ne!(unknown, second, "{second}");
    env.file(b"tiger.json", format!("{first}\n{unknown}").as_bytes());
    let diff = fastsum(&env, &["diff", "tiger.json", "src"]);
    let said = diff.stderr_str();
    assert_eq!(diff.status, 2, "{said}");
    assert!(
        said.contains("tiger.json: line 2: its tiger digests cannot be computed here"),
        "{said}"
    );
    assert!(!said.contains("changed while it was read"), "{said}");
    // Named by -a, the record is read by that digest alone, in both reads.
    let md5 = fastsum(&env, &["diff", "-a", "md5", "tiger.json", "src"]);
    assert_eq!(
        (md5.status, md5.stdout_str()),
        (0, String::new()),
        "{}",
        md5.stderr_str()
    );

    // scrub --manifest of a stamped md5+xxh128 list whose xxh128 of src/a
    // is wrong: corrupted by both digests or by xxh128, verified by md5
    // (the files settled first: a file too fresh is listed unstamped).
    crate::scrub::settle();
    let stamped = fastsum(
        &env,
        &[
            "-r", "--json", "--stamps", "-a", "md5", "-a", "xxh128", "src",
        ],
    );
    let stamped = stamped.stdout_str();
    let at = stamped.find("\"xxh128\":\"").unwrap() + 10;
    let xxh = stamped[at..at + 32].to_string();
    let wrong: String = xxh.chars().rev().collect();
    assert_ne!(wrong, xxh);
    assert!(stamped.contains(&xxh), "{stamped}");
    env.file(
        b"stamped.json",
        stamped.replacen(&xxh, &wrong, 1).as_bytes(),
    );
    for (asked, status, corrupted) in [
        (&[][..], 1, true),
        (&["-a", "xxh128"][..], 1, true),
        (&["-a", "md5"][..], 0, false),
    ] {
        let mut args = vec!["scrub"];
        args.extend(asked);
        args.extend(["--manifest", "stamped.json"]);
        let out = fastsum(&env, &args);
        assert_eq!(out.status, status, "{asked:?}: {}", out.stderr_str());
        assert_eq!(
            out.stdout_str().contains("corrupted\tsrc/a"),
            corrupted,
            "{asked:?}: {}",
            out.stdout_str()
        );
    }
    // A digest the list does not give is refused by its name.
    let out = fastsum(
        &env,
        &["scrub", "-a", "sha256", "--manifest", "stamped.json"],
    );
    assert_eq!(out.status, 2);
    assert!(
        out.stderr_str()
            .contains("its digests are md5 and xxh128, not the sha256 asked for"),
        "{}",
        out.stderr_str()
    );
}

/// Operands that overlap (a directory and one inside it, one given
/// twice, a file inside a directory operand) reach one entry by two
/// paths: it is one file, answered and counted once. Hostile finding
/// 65/11: its bytes were counted twice.
#[test]
fn contained_overlapping_operands_count_each_file_once() {
    let env = TestEnv::new();
    env.mkdir("src/sub");
    env.mkdir("arc");
    env.file(b"src/a", b"a\n");
    env.file(b"src/sub/b", b"bb\n");
    env.file(b"src/sub/c", b"not there\n");
    env.file(b"arc/a", b"a\n");
    env.file(b"arc/b", b"bb\n");
    for operands in [
        &["src", "src/sub"][..],
        &["src/sub", "src"],
        &["src", "src"],
        &["src", "./src/sub/c", "src/sub/b"],
    ] {
        let mut args = vec!["contained"];
        args.extend(operands);
        args.extend(["--in", "arc"]);
        let out = fastsum(&env, &args);
        assert_eq!(out.status, 1, "{operands:?}: {}", out.stderr_str());
        assert_eq!(
            summary_figures(&out.stderr_str()),
            "figures 2 5 1 10 0",
            "{operands:?}: {}",
            out.stderr_str()
        );
        assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 1);
    }
    // Two hard links are two entries: each counted.
    std::fs::hard_link(env.path().join("src/a"), env.path().join("src/a2")).unwrap();
    let out = fastsum(&env, &["contained", "src", "src", "--in", "arc"]);
    assert_eq!(summary_figures(&out.stderr_str()), "figures 3 7 1 10 0");
}

/// A symbolic link (or FIFO) in the source is not known to be in the
/// archive: the run exits 1, `-q` too, and never says 0 with nothing
/// printed. Hostile finding 65/12.
#[test]
fn contained_a_skipped_entry_keeps_exit_zero_from_saying_everything_is_there() {
    let env = TestEnv::new();
    env.mkdir("src");
    env.mkdir("arc");
    env.file(b"src/a", b"a\n");
    env.file(b"arc/a", b"a\n");
    let all = fastsum(&env, &["contained", "-q", "src", "--in", "arc"]);
    assert_eq!(all.status, 0, "{}", all.stderr_str());
    std::os::unix::fs::symlink("a", env.path().join("src/link")).unwrap();
    for quiet in [&[][..], &["-q"]] {
        let mut args = vec!["contained"];
        args.extend(quiet);
        args.extend(["src", "--in", "arc"]);
        let out = fastsum(&env, &args);
        assert_eq!(out.status, 1, "{quiet:?}: {}", out.stderr_str());
        assert!(out.stdout.is_empty());
    }
}

/// `--remove --json` (and with `--dry-run`) writes a record per file,
/// never the text lines; a file not removed is a record with its error.
/// Hostile finding 65/14.
#[test]
fn contained_remove_json_writes_records() {
    if testenv::lacks(&["python3"]) {
        return testenv::skip("needs python3 to read the records");
    }
    let env = TestEnv::new();
    env.mkdir("src");
    env.mkdir("arc");
    env.file(b"src/a", b"a\n");
    env.file(b"src/new\nline", b"bb\n");
    env.file(b"src/kept", b"kept\n");
    env.file(b"arc/a", b"a\n");
    env.file(b"arc/b", b"bb\n");
    let check = "import json, sys\nkey = sys.argv[1]\n\
                 recs = [json.loads(l) for l in sys.stdin.read().splitlines()]\n\
                 print(sorted((r['path'], r[key]) for r in recs))\n";
    let dry = fastsum(
        &env,
        &[
            "contained",
            "--json",
            "--remove",
            "--dry-run",
            "src",
            "--in",
            "arc",
        ],
    );
    assert_eq!(dry.status, 1, "{}", dry.stderr_str());
    let seen = run_python(&env, check, &["would_remove"], &dry.stdout);
    assert_eq!(seen, "[('src/a', True), ('src/new\\nline', True)]\n");
    assert!(env.path().join("src/a").exists());
    let run = fastsum(
        &env,
        &["contained", "--json", "--remove", "src", "--in", "arc"],
    );
    assert_eq!(run.status, 1, "{}", run.stderr_str());
    let seen = run_python(&env, check, &["removed"], &run.stdout);
    assert_eq!(seen, "[('src/a', True), ('src/new\\nline', True)]\n");
    assert!(!env.path().join("src/a").exists());
    assert!(env.path().join("src/kept").exists());
}

/// A manifest that lists one path with two digests says two things of one
/// file: neither entry holds anything, the list is named as trouble (exit
/// 2), and its other entries stand. Hostile finding 65/15.
#[test]
fn contained_a_path_listed_with_two_digests_is_believed_in_neither() {
    let env = TestEnv::new();
    env.mkdir("src");
    env.file(b"src/a", b"a\n");
    env.file(b"src/b", b"b\n");
    env.file(b"src/c", b"c\n");
    let md5 = |text: &str| md5_hex(&env, text);
    let list = format!(
        "{}  x\n{}  x\n{}  y\n{}  y\n",
        md5("a\n"),
        md5("b\n"),
        md5("c\n"),
        md5("c\n")
    );
    env.file(b"arc.md5", list.as_bytes());
    let out = fastsum(&env, &["contained", "-v", "src", "--in", "arc.md5"]);
    assert_eq!(out.status, 2, "{}", out.stderr_str());
    assert!(
        out.stderr_str().contains("arc.md5") && out.stderr_str().contains("two digests"),
        "{}",
        out.stderr_str()
    );
    // y is listed twice with one digest: it stands; x holds neither.
    assert_eq!(
        out.stdout_str(),
        "src/a\nsrc/b\ncontained\tsrc/c\tarc.md5\ty\n"
    );
}
