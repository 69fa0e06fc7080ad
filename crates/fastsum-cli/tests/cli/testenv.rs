//! The one helper every CLI test goes through: a temp directory, the real
//! `fastsum` binary, and the reference tool run side by side with the same
//! argv[0], arguments, working directory and standard input.

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What one run printed and how it ended.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub status: i32,
}

impl From<std::process::Output> for Outcome {
    fn from(out: std::process::Output) -> Self {
        Outcome {
            stdout: out.stdout,
            stderr: out.stderr,
            status: out.status.code().unwrap_or(-1),
        }
    }
}

/// Reads `pipe` to its end on a thread of its own (so that a child filling
/// one pipe never blocks on the other).
fn drain(mut pipe: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

impl Outcome {
    pub fn stdout_str(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    pub fn stderr_str(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// A scratch directory in which files are made and tools are run.
pub struct TestEnv {
    pub dir: tempfile::TempDir,
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl TestEnv {
    pub fn new() -> Self {
        TestEnv {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file whose name may be any bytes.
    pub fn file(&self, name: &[u8], contents: &[u8]) -> PathBuf {
        let p = self.path().join(OsStr::from_bytes(name));
        fs::write(&p, contents).expect("write test file");
        p
    }

    pub fn mkdir(&self, name: &str) -> PathBuf {
        let p = self.path().join(name);
        fs::create_dir_all(&p).expect("mkdir");
        p
    }

    /// The `fastsum` binary as a command named `argv0`, in this directory,
    /// in the C.UTF-8 locale, standard input closed: for a test that sets
    /// more (an environment variable, `PATH`) before running it.
    #[allow(dead_code)]
    pub fn command(&self, argv0: &str) -> Command {
        use std::os::unix::process::CommandExt as _;
        let mut cmd = Command::new(crate::testenv::fastsum_bin());
        cmd.arg0(argv0)
            .current_dir(self.path())
            .env("LC_ALL", "C.UTF-8")
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `fastsum` as `tool` (argv[0] = tool).
    pub fn fastsum(&self, tool: &str, args: &[&[u8]], stdin: &[u8]) -> Outcome {
        run(
            Path::new(crate::testenv::fastsum_bin()),
            tool,
            args,
            stdin,
            self.path(),
        )
    }

    /// Runs `fastsum` under its own name with `args`, killing it and failing
    /// the test if it has not finished within `limit` (a hang is a bug).
    pub fn fastsum_within(&self, limit: std::time::Duration, args: &[&[u8]]) -> Outcome {
        self.fastsum_within_as(None, limit, args)
    }

    /// [`TestEnv::fastsum_within`] as user and group `uid` if given (a test
    /// running as root uses it to meet permissions as anyone else does).
    pub fn fastsum_within_as(
        &self,
        uid: Option<u32>,
        limit: std::time::Duration,
        args: &[&[u8]],
    ) -> Outcome {
        // Another user may not reach the build's directory (a clone under
        // /root): it runs a copy from a directory anyone can enter.
        let copy = uid.map(|_| {
            use std::os::unix::fs::PermissionsExt as _;
            let dir = tempfile::tempdir().expect("temp dir");
            fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod");
            let exe = dir.path().join("fastsum");
            fs::copy(crate::testenv::fastsum_bin(), &exe).expect("copy fastsum");
            (dir, exe)
        });
        let exe = copy
            .as_ref()
            .map_or(Path::new(crate::testenv::fastsum_bin()), |c| &c.1);
        let mut cmd = Command::new(exe);
        if let Some(uid) = uid {
            use std::os::unix::process::CommandExt as _;
            cmd.uid(uid).gid(uid);
        }
        cmd.arg0("fastsum")
            .args(args.iter().map(|a| OsStr::from_bytes(a)))
            .current_dir(self.path())
            .env("LC_ALL", "C.UTF-8")
            .env_remove("RUST_BACKTRACE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // The copy just written can be "busy" for a moment: a child another
        // test thread forked while our write descriptor was open holds it
        // until that child execs (ETXTBSY). Retry briefly, as cargo does.
        let mut attempts = 0;
        let mut child = loop {
            match cmd.spawn() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempts < 100 => {
                    attempts += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                spawned => break spawned.expect("spawn fastsum"),
            }
        };
        let out = drain(child.stdout.take().expect("stdout"));
        let err = drain(child.stderr.take().expect("stderr"));
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            if start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                panic!("fastsum {args:?} did not finish within {limit:?}: it hung");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        Outcome {
            stdout: out.join().expect("stdout reader"),
            stderr: err.join().expect("stderr reader"),
            status: status.code().unwrap_or(-1),
        }
    }

    /// Runs the reference `tool` from PATH with the same argv[0].
    pub fn reference(&self, tool: &str, args: &[&[u8]], stdin: &[u8]) -> Outcome {
        run(&reference_path(tool), tool, args, stdin, self.path())
    }

    /// Runs both and asserts identical stdout, stderr and exit status.
    pub fn assert_same(&self, tool: &str, args: &[&[u8]], stdin: &[u8]) -> Outcome {
        let mut expected = self.reference(tool, args, stdin);
        if COREUTILS_TOOLS.contains(&tool) {
            expected.stdout = as_9_11(&expected.stdout);
        }
        let actual = self.fastsum(tool, args, stdin);
        if expected != actual {
            let shown: Vec<String> = args
                .iter()
                .map(|a| format!("{:?}", String::from_utf8_lossy(a)))
                .collect();
            panic!(
                "{tool} {} differs from the reference\n--- reference (status {})\nstdout: {:?}\nstderr: {:?}\n--- fastsum (status {})\nstdout: {:?}\nstderr: {:?}",
                shown.join(" "),
                expected.status,
                expected.stdout_str(),
                expected.stderr_str(),
                actual.status,
                actual.stdout_str(),
                actual.stderr_str()
            );
        }
        actual
    }
}

/// 9.10's `-c` verdict lines (`NAME: OK`, `NAME: FAILED`, `NAME: FAILED
/// open or read`) with the name quoted as coreutils 9.11 quotes it, the one
/// thing 9.11 changed for these programs (coreutils_911.rs
/// compares that quoting with the 9.11 programs themselves): 9.10's
/// escapes (a leading `\`, then `\\`, `\n`, `\r`) undone, the name
/// shell-quoted for the C.UTF-8 locale the tests run in.
fn as_9_11(stdout: &[u8]) -> Vec<u8> {
    let quoting = fastsum::output::quote::Quoting { utf8: true };
    let mut out = Vec::with_capacity(stdout.len());
    for line in stdout.split_inclusive(|&b| b == b'\n') {
        let verdict = [&b": FAILED open or read\n"[..], b": FAILED\n", b": OK\n"]
            .into_iter()
            .find(|v| line.ends_with(v));
        let Some(verdict) = verdict else {
            out.extend_from_slice(line);
            continue;
        };
        let name = &line[..line.len() - verdict.len()];
        let name = match name.strip_prefix(b"\\") {
            Some(escaped) => unescape(escaped),
            None => name.to_vec(),
        };
        out.extend_from_slice(&quoting.quotef(&name));
        out.extend_from_slice(verdict);
    }
    out
}

/// 9.10's `\\`, `\n`, `\r` back to the bytes they stand for.
fn unescape(escaped: &[u8]) -> Vec<u8> {
    let mut name = Vec::with_capacity(escaped.len());
    let mut bytes = escaped.iter();
    while let Some(&b) = bytes.next() {
        if b != b'\\' {
            name.push(b);
            continue;
        }
        match bytes.next() {
            Some(b'n') => name.push(b'\n'),
            Some(b'r') => name.push(b'\r'),
            Some(&other) => name.push(other),
            None => name.push(b'\\'),
        }
    }
    name
}

/// The hex digest of `bytes` by the reference `tool` (md5sum, sha1sum,
/// sha256sum ...) reading standard input: an expectation computed without
/// the code under test.
#[allow(dead_code)]
pub fn reference_hex(tool: &str, bytes: &[u8]) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new(reference_path(tool))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the reference tool runs");
    let mut stdin = child.stdin.take().expect("piped");
    let input = bytes.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("the reference tool ends");
    writer.join().expect("writer").expect("stdin written");
    assert!(out.status.success(), "{tool} failed");
    let text = String::from_utf8(out.stdout).expect("hex output");
    text.split_whitespace()
        .next()
        .expect("a digest")
        .to_string()
}

/// The `fastsum` under test: the one this suite was built with, or the
/// one `FASTSUM_TEST_BIN` names. scripts/tests/aarch64 names the release's
/// static aarch64 binary, which the kernel hands to qemu-user
/// (binfmt_misc): the suites run natively and the program they test is
/// the one a user of that architecture installs.
pub fn fastsum_bin() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        std::env::var("FASTSUM_TEST_BIN")
            .ok()
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_fastsum").to_string())
    })
}

/// The coreutils programs fastsum's personalities follow, as built by
/// `scripts/tests/gnu-reference` (release 9.10, not the system's).
pub const COREUTILS_TOOLS: [&str; 9] = [
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "sum",
];

/// Where the reference tool lives: coreutils' from `$FASTSUM_GNU_BIN` or
/// `target/coreutils-9.10/bin` (`scripts/tests/gnu-reference`), the others from
/// PATH (or ~/.cargo/bin, where `cargo install b3sum` puts b3sum). A test
/// that needs one checks [`lacks`] first, so that a missing tool is a skip
/// with its reason (a failure in CI, which installs them all).
pub fn reference_path(tool: &str) -> PathBuf {
    find_reference(tool).unwrap_or_else(|| {
        panic!(
            "reference tool {tool} is not installed (scripts/tests/install-peers; coreutils 9.10's: \
             scripts/tests/gnu-reference); the test should have asked testenv::lacks first"
        )
    })
}

/// [`reference_path`], or `None` when the tool is not there.
pub fn find_reference(tool: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let runnable = |p: &Path| {
        fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if COREUTILS_TOOLS.contains(&tool) {
        let dir = std::env::var_os("FASTSUM_GNU_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/coreutils-9.10/bin")
            });
        let candidate = dir.join(tool);
        return runnable(&candidate).then_some(candidate);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    if let Some(home) =
        std::env::var_os("FASTSUM_TEST_USER_HOME").or_else(|| std::env::var_os("HOME"))
    {
        dirs.push(Path::new(&home).join(".cargo/bin"));
    }
    dirs.into_iter().map(|d| d.join(tool)).find(|c| runnable(c))
}

fn run(exe: &Path, argv0: &str, args: &[&[u8]], stdin: &[u8], cwd: &Path) -> Outcome {
    let mut cmd = Command::new(exe);
    cmd.arg0(argv0)
        .args(args.iter().map(|a| OsStr::from_bytes(a)))
        .current_dir(cwd)
        .env("LC_ALL", "C.UTF-8")
        .env_remove("POSIXLY_CORRECT")
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", exe.display()));
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait");
    let _ = writer.join();
    out.into()
}

/// Runs `python3 -c script` with `input` on stdin (Python's json module is
/// the independent reader of fastsum's JSON); returns its stdout, failing
/// the test with Python's stderr if the script fails.
pub fn python(script: &str, input: &[u8]) -> String {
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 (installed by scripts/tests/install-peers)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("feed python");
    let out = child.wait_with_output().expect("wait for python");
    assert!(
        out.status.success(),
        "python failed on {:?}: {}",
        String::from_utf8_lossy(input),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("python prints UTF-8")
}

/// The GNU tools fastsum stands in for.
pub const GNU_TOOLS: [&str; 7] = [
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
];

/// Every tool fastsum stands in for.
pub const ALL_TOOLS: [&str; 9] = [
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "b3sum",
    "xxhsum",
];

/// File names that break naive tools.
pub const ODD_NAMES: [&[u8]; 10] = [
    b"plain.txt",
    b"with space",
    b"back\\slash",
    b"new\nline",
    b"carriage\rreturn",
    b"*star",
    b" leading space",
    b"trailing space ",
    b"non-utf8-\xff\xfe",
    b"quote's",
];

/// Deterministic bytes: BLAKE3's test pattern.
pub fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// Name-status output turned into `changes/EXPECTED`'s lines
/// (`kind\told\tnew`), without escapes (these names need none).
pub fn as_expected(out: &str) -> String {
    out.lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            match f[0] {
                "A" => format!("added\t\t{}\n", f[1]),
                "D" => format!("removed\t{}\t\n", f[1]),
                "M" => format!("modified\t{}\t{}\n", f[1], f[1]),
                "R" => format!("moved\t{}\t{}\n", f[1], f[2]),
                "T" => format!("typechange\t{}\t{}\n", f[1], f[1]),
                other => panic!("unknown status {other:?} in {line:?}"),
            }
        })
        .collect()
}

/// The corpus generator's `changes` part (scripts/bench/make-corpus, the
/// repository's own), small: two versions of a tree and the list of what
/// changed (computed by the generator, not by fastsum).
pub fn changes_corpus(env: &TestEnv) -> (PathBuf, String) {
    let generator = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/bench/make-corpus");
    let made = Command::new("python3")
        .arg(&generator)
        .arg(env.path())
        .args(["--only", "changes", "--scale", "0.02"])
        .output()
        .expect("python3 runs scripts/bench/make-corpus");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let top = env.path().join("changes");
    let expected = std::fs::read_to_string(top.join("EXPECTED")).unwrap();
    let expected: String = expected
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(expected.lines().count() > 10, "{expected}");
    (top, expected)
}

/// Runs `command` (a shell line) in `dir` on a pseudo-terminal through
/// util-linux's `script`, as a user at a terminal would: what the
/// terminal showed is the output's stdout. The terminal is 100x24 (a
/// pseudo-terminal `script` makes from a pipe is 0x0, where no bar is drawn).
pub fn on_a_terminal(dir: &Path, command: &str) -> std::process::Output {
    on_a_terminal_sized(dir, command, Some((24, 100)))
}

/// [`on_a_terminal`] on a terminal of `size` (rows, columns), or of the
/// 0x0 `script` leaves it at.
pub fn on_a_terminal_sized(
    dir: &Path,
    command: &str,
    size: Option<(u16, u16)>,
) -> std::process::Output {
    let command = match size {
        Some((rows, columns)) => format!("stty rows {rows} cols {columns}; {command}"),
        None => command.to_string(),
    };
    Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir)
        .env("TERM", "xterm")
        .env("COLUMNS", "100")
        .stdin(Stdio::null())
        .output()
        .expect("script (util-linux) runs fastsum on a pseudo-terminal")
}

/// Skips the calling test: says why on stderr and adds a line to the run's
/// list of skips (`$FASTSUM_SKIP_LOG`, which scripts/test prints at its
/// end). Where `FASTSUM_TESTS_REQUIRED=1` (CI, which provides everything)
/// a skip is a failure instead. The caller returns right after.
pub fn skip(reason: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a CLI test")
        .to_string();
    let line = format!("SKIPPED {test}: {reason}");
    assert!(
        std::env::var_os("FASTSUM_TESTS_REQUIRED").is_none_or(|v| v != "1"),
        "{line} (FASTSUM_TESTS_REQUIRED=1: every skip is a failure)"
    );
    eprintln!("{line}");
    if let Some(log) = std::env::var_os("FASTSUM_SKIP_LOG") {
        if let Ok(mut f) = fs::OpenOptions::new().create(true).append(true).open(log) {
            let _ = writeln!(f, "{line}");
        }
    }
}

/// A fixture only outside the repository gives (coreutils 9.11's reference
/// build, the SeaweedFS binary): `$FASTSUM_FIXTURES/rel`, a directory laid
/// out as the project's shared/ is (CI sets it). `None`, with the test
/// skipped and the reason said, when the variable is unset or the path is
/// not there.
pub fn fixture(rel: &str) -> Option<PathBuf> {
    let Some(root) = std::env::var_os("FASTSUM_FIXTURES") else {
        skip(&format!(
            "needs {rel}, found through FASTSUM_FIXTURES=DIR (unset; see CONTRIBUTING.md, \"Fixtures from outside\")"
        ));
        return None;
    };
    let path = Path::new(&root).join(rel);
    if path.exists() {
        return Some(path);
    }
    skip(&format!(
        "needs {rel}: {} is not there (FASTSUM_FIXTURES={})",
        path.display(),
        Path::new(&root).display()
    ));
    None
}

/// Whether any of `tools` (reference tools, as [`reference_path`] finds
/// them) is missing; if so the test is skipped, naming them and what
/// installs them. A test calls it first: `if lacks(&["b3sum"]) { return; }`.
pub fn lacks(tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| find_reference(t).is_none())
        .collect();
    if missing.is_empty() {
        return false;
    }
    skip(&format!(
        "reference tool(s) {} not found: scripts/tests/install-peers installs them (apt, as root) and \
         scripts/tests/gnu-reference builds coreutils 9.10's",
        missing.join(", ")
    ));
    true
}
