//! The first hour's frictions. `fastsum help`, the
//! subcommands first in `--help`, a quiet mode for every command, the
//! cache's settle window said, the links' own directory, hashdeep's
//! absolute names.

use crate::testenv;

use testenv::TestEnv;

/// `fastsum help` is `fastsum --help` (as `git help`, `cargo help`), and
/// `fastsum help SUB` is `fastsum SUB --help`; a file named `help` is
/// still hashed, after `--` or as `./help`.
#[test]
fn help_is_a_word_and_a_file_named_help_is_still_hashed() {
    let env = TestEnv::new();
    let help = env.fastsum("fastsum", &[b"--help"], b"");
    let word = env.fastsum("fastsum", &[b"help"], b"");
    assert_eq!(word.status, 0, "{}", word.stderr_str());
    assert_eq!(word.stdout_str(), help.stdout_str());
    for sub in ["diff", "dupes", "audit", "scrub", "cache", "bench"] {
        let asked = env.fastsum("fastsum", &[b"help", sub.as_bytes()], b"");
        let direct = env.fastsum("fastsum", &[sub.as_bytes(), b"--help"], b"");
        assert_eq!(asked.status, 0, "{sub}: {}", asked.stderr_str());
        assert_eq!(asked.stdout_str(), direct.stdout_str(), "{sub}");
    }
    let man = env.fastsum("fastsum", &[b"help", b"man"], b"");
    assert_eq!(man.status, 0);
    assert!(man.stdout_str().starts_with("fastsum man: "), "{man:?}");
    let bogus = env.fastsum("fastsum", &[b"help", b"nosuch"], b"");
    assert_eq!(bogus.status, 2);
    assert!(
        bogus.stderr_str().contains("no subcommand 'nosuch'"),
        "{}",
        bogus.stderr_str()
    );
    env.file(b"help", b"abc");
    // MD5("abc"), RFC 1321's test suite.
    let expected = "900150983cd24fb0d6963f7d28e17f72  help\n".to_owned();
    let dashed = env.fastsum("fastsum", &[b"--", b"help"], b"");
    assert_eq!((dashed.status, dashed.stdout_str()), (0, expected.clone()));
    let dotted = env.fastsum("fastsum", &[b"./help"], b"");
    assert_eq!(dotted.stdout_str(), expected.replace("  help", "  ./help"));
    // --help says how.
    assert!(
        help.stdout_str()
            .contains("fastsum -- help hashes the file help"),
        "{}",
        help.stdout_str()
    );
}

/// The subcommands come first in `--help`, before the options, within
/// a screen's first lines (they came ~100 lines down).
#[test]
fn help_lists_the_subcommands_first() {
    let env = TestEnv::new();
    let help = env.fastsum("fastsum", &[b"--help"], b"").stdout_str();
    let lines: Vec<&str> = help.lines().collect();
    let at = |prefix: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} in {help}"))
    };
    let subcommands = at("Subcommands:");
    assert!(subcommands < 6, "{help}");
    assert!(at("  diff ") < at("  -a, --algorithm"), "{help}");
    assert!(at("  help ") < 24, "{help}");
    assert!(lines[1].starts_with("  or:  fastsum SUBCOMMAND"), "{help}");
}

/// `dupes` counts hidden files where fclones leaves them out: its help
/// and the man page say so, and the way to count as fclones does
/// (`--exclude '.*'`) works as said.
#[test]
fn dupes_says_it_counts_hidden_files_and_how_not_to() {
    let env = TestEnv::new();
    let help = env
        .fastsum("fastsum", &[b"dupes", b"--help"], b"")
        .stdout_str();
    let said = help.replace('\n', " ");
    assert!(
        said.contains("fclones leaves them out unless --hidden"),
        "{help}"
    );
    let man = env.fastsum("fastsum", &[b"man"], b"").stdout_str();
    assert!(
        man.contains("fclones leaves them out unless \\-\\-hidden"),
        "{man}"
    );
    env.mkdir("t");
    env.mkdir("t/.git");
    env.file(b"t/a", b"same\n");
    env.file(b"t/.b", b"same\n");
    env.file(b"t/.git/c", b"same\n");
    let all = env.fastsum("fastsum", &[b"dupes", b"t"], b"").stdout_str();
    assert_eq!(
        all.lines().filter(|l| l.starts_with("  t/")).count(),
        3,
        "{all}"
    );
    let seen = env
        .fastsum("fastsum", &[b"dupes", b"--exclude", b".*", b"t"], b"")
        .stdout_str();
    assert!(!seen.contains("t/."), "{seen}");
}

/// `scripts/install-links` with no DIR makes the links in a directory of
/// their own (`~/.local/lib/fastsum/bin`), never beside fastsum in
/// `~/.cargo/bin` (where they shadowed the system's md5sum for whoever has
/// it first on PATH), and names what they would shadow.
#[test]
fn install_links_defaults_to_a_directory_of_its_own_and_names_the_shadowed() {
    let env = TestEnv::new();
    let home = env.mkdir("home");
    let cargo_bin = home.join(".cargo/bin");
    std::fs::create_dir_all(&cargo_bin).unwrap();
    std::os::unix::fs::symlink(crate::testenv::fastsum_bin(), cargo_bin.join("fastsum")).unwrap();
    let system = env.mkdir("system-bin");
    std::fs::write(system.join("md5sum"), b"#!/bin/sh\necho the system's\n").unwrap();
    std::fs::set_permissions(
        system.join("md5sum"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/install-links");
    let path = format!("{}:{}:/usr/bin:/bin", cargo_bin.display(), system.display());
    let out = std::process::Command::new(script)
        .env("HOME", &home)
        .env("PATH", &path)
        .output()
        .unwrap();
    let (said, warned) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{said}{warned}");
    let dir = home.join(".local/lib/fastsum/bin");
    assert!(
        said.starts_with(&format!("made {}\n", dir.display())),
        "{said}"
    );
    let fastsum = std::fs::canonicalize(crate::testenv::fastsum_bin()).unwrap();
    for name in ["md5sum", "sha256sum", "b3sum", "xxhsum"] {
        assert_eq!(std::fs::canonicalize(dir.join(name)).unwrap(), fastsum);
        assert!(!cargo_bin.join(name).exists(), "{name} beside fastsum");
    }
    // The first md5sum on PATH is named as what the links would shadow.
    assert!(
        warned.contains(&format!("  {}/md5sum\n", system.display())),
        "{warned}"
    );
    assert!(warned.contains("before these"), "{warned}");
    assert!(warned.contains("is not on PATH"), "{warned}");
}

/// `--cache-stats` says how many misses were too recent to keep, and the
/// window: `0 hits, 4986 misses` on a fresh copy, run after run within
/// the window, looked like a broken cache.
#[test]
fn cache_stats_say_how_many_files_were_too_recent_and_the_window() {
    let env = TestEnv::new();
    env.file(b"f", b"bytes");
    let stats = |settle: Option<&str>| {
        let mut command = env.command("fastsum");
        command.args(["--cache=c.sqlite", "--cache-stats", "f"]);
        match settle {
            Some(seconds) => command.env("FASTSUM_SETTLE_SECONDS", seconds),
            None => command.env_remove("FASTSUM_SETTLE_SECONDS"),
        };
        let out = command.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert_eq!(
        stats(Some("7")),
        "fastsum: cache: 0 hits, 1 miss, 0 racy re-reads, 5 bytes read; 1 file too recent \
         to keep (changed less than 7 s before the run; kept once unchanged that long)\n"
    );
    // The default: the kernel's dirty expiry plus its writeback interval
    // (30 s + 5 s unless tuned).
    let centis = |name: &str| -> u64 {
        std::fs::read_to_string(format!("/proc/sys/vm/{name}"))
            .map_or(0, |s| s.trim().parse().unwrap_or(0))
    };
    let window = (centis("dirty_expire_centisecs") + centis("dirty_writeback_centisecs")) / 100;
    if window > 0 && centis("dirty_writeback_centisecs") > 0 {
        let said = stats(None);
        assert!(
            said.contains(&format!("changed less than {window} s before the run")),
            "{said}"
        );
    }
    // Once settled it is kept, and the next run answers it: nothing too recent.
    std::thread::sleep(std::time::Duration::from_millis(2200));
    assert!(!stats(Some("2")).contains("too recent"));
    assert_eq!(
        stats(Some("2")),
        "fastsum: cache: 1 hit, 0 misses, 0 racy re-reads, 0 bytes read\n"
    );
}

/// `-q` silences notices, never errors, in every mode and subcommand:
/// `N symbolic links left out` on every `-r` run, the summaries of
/// dupes and a clean scrub, audit's links left out; with `-c` it keeps
/// GNU's meaning too (no OK lines). Under md5sum's name nothing changes:
/// `-q` unknown and `--quiet` refused outside `-c`, as coreutils does.
#[test]
fn quiet_silences_notices_never_errors_in_every_command() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/a", b"same\n");
    env.file(b"t/b", b"same\n");
    std::os::unix::fs::symlink("a", env.path().join("t/link")).unwrap();
    let loud = env.fastsum("fastsum", &[b"-r", b"t"], b"");
    assert!(
        loud.stderr_str().contains("1 symbolic link left out"),
        "{loud:?}"
    );
    for q in [&b"-q"[..], b"--quiet"] {
        let quiet = env.fastsum("fastsum", &[q, b"-r", b"t"], b"");
        assert_eq!((quiet.status, quiet.stderr_str()), (0, String::new()));
        assert_eq!(quiet.stdout, loud.stdout);
    }
    // Errors are still said, and still fail the run.
    let failed = env.fastsum("fastsum", &[b"-q", b"-r", b"t", b"missing"], b"");
    assert_eq!(failed.status, 1);
    assert!(
        failed
            .stderr_str()
            .contains("missing: No such file or directory"),
        "{failed:?}"
    );
    assert!(!failed.stderr_str().contains("left out"), "{failed:?}");
    // -c: GNU's --quiet (no OK lines), a mismatch still said.
    env.file(b"list", &loud.stdout);
    let checked = env.fastsum("fastsum", &[b"-q", b"-c", b"list"], b"");
    assert_eq!((checked.status, checked.stdout_str()), (0, String::new()));
    env.file(b"t/b", b"changed\n");
    let checked = env.fastsum("fastsum", &[b"-q", b"-c", b"list"], b"");
    assert_eq!(checked.status, 1);
    assert_eq!(checked.stdout_str(), "t/b: FAILED\n");
    env.file(b"t/b", b"same\n");
    // The personalities keep coreutils' refusals, byte for byte.
    if !testenv::lacks(&["md5sum"]) {
        env.assert_same("md5sum", &[b"-q", b"t/a"], b"");
        env.assert_same("md5sum", &[b"--quiet", b"t/a"], b"");
        env.assert_same("md5sum", &[b"--quiet", b"-c", b"list"], b"");
    }
    // The subcommands.
    let dupes = env.fastsum("fastsum", &[b"dupes", b"t"], b"");
    assert!(
        dupes.stderr_str().contains("1 group of 2 files"),
        "{dupes:?}"
    );
    let quiet = env.fastsum("fastsum", &[b"dupes", b"-q", b"t"], b"");
    assert_eq!(
        (quiet.stderr_str(), quiet.stdout),
        (String::new(), dupes.stdout)
    );
    let listed = env.fastsum("fastsum", &[b"-r", b"--format=hashdeep", b"t"], b"");
    env.file(b"t.hashdeep", &listed.stdout);
    let audit = env.fastsum("fastsum", &[b"audit", b"-P", b"t.hashdeep", b"t"], b"");
    assert!(audit.stderr_str().contains("left out"), "{audit:?}");
    let quiet = env.fastsum(
        "fastsum",
        &[b"audit", b"-q", b"-P", b"t.hashdeep", b"t"],
        b"",
    );
    assert_eq!(quiet.stderr_str(), "", "{quiet:?}");
    assert_eq!(quiet.status, audit.status);
    env.fastsum("fastsum", &[b"-r", b"--cache=c.db", b"t"], b"");
    std::thread::sleep(std::time::Duration::from_millis(2200));
    env.fastsum("fastsum", &[b"-r", b"--cache=c.db", b"t"], b"");
    let scrub = env.fastsum("fastsum", &[b"scrub", b"--cache=c.db", b"t"], b"");
    assert!(scrub.stderr_str().contains("0 corrupted"), "{scrub:?}");
    let quiet = env.fastsum("fastsum", &[b"scrub", b"-q", b"--cache=c.db", b"t"], b"");
    assert_eq!((quiet.status, quiet.stderr_str()), (0, String::new()));
    let tree = env.fastsum("fastsum", &[b"tree-digest", b"-q", b"t"], b"");
    assert_eq!((tree.status, tree.stderr_str()), (0, String::new()));
}

/// What the terminal showed of `command` run in `env` (100x24).
fn terminal(env: &TestEnv, command: &str) -> String {
    let out = testenv::on_a_terminal(env.path(), command);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// dupes' bar names its stage and counts the bytes a stage reads, known
/// from the sizes: `hashing: 0/2 files, ... /1.00 GiB`, never a whole
/// stage at `0/113100 files` with nothing moving.
#[test]
fn the_dupes_bar_names_the_stage_and_counts_its_bytes() {
    let env = TestEnv::new();
    std::fs::create_dir(env.path().join("d")).unwrap();
    for name in ["a", "b"] {
        let f = std::fs::File::create(env.path().join("d").join(name)).unwrap();
        f.set_len(512 << 20).unwrap();
    }
    let bin = crate::testenv::fastsum_bin();
    let shown = terminal(&env, &format!("{bin} dupes -j1 -a sm3 d > out"));
    assert!(shown.contains("hashing: "), "{shown:?}");
    assert!(shown.contains("/1.00 GiB at "), "no byte total: {shown:?}");
    assert!(!shown.contains("found so far"), "{shown:?}");
}

/// `-c`'s total is not shown while the list is still being read (it grew
/// in steps of a chunk of lines, 89% at 25% of the bytes): the files
/// done and found so far, no fraction, no ETA; and a list read whole in
/// one chunk has its total at once, in files and in bytes.
///
/// The slow file is 1 GiB in SM3 (5.3 s here, against MD5's 2.1 s, which
/// a fast machine on the portable path read in under the bar's 1 s delay
/// plus a refresh: CI saw no bar drawn at all).
#[test]
fn check_shows_no_fraction_until_the_list_is_read_to_its_end() {
    if testenv::lacks(&["cksum"]) {
        return;
    }
    let env = TestEnv::new();
    let slow = env.path().join("slow");
    std::fs::File::create(&slow)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let sm3 = |path: &std::path::Path| {
        let out = std::process::Command::new(testenv::reference_path("cksum"))
            .args(["-a", "sm3", "--untagged"])
            .arg(path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout[..64]).into_owned()
    };
    let digest = sm3(&slow);
    env.file(b"empty", b"");
    let empty = sm3(&env.path().join("empty"));
    // The slow file first, then more lines than one chunk holds (4096).
    let mut list = format!("SM3 (slow) = {digest}\n");
    env.mkdir("small");
    for i in 0..5000 {
        env.file(format!("small/{i}").as_bytes(), b"");
        list.push_str(&format!("SM3 (small/{i}) = {empty}\n"));
    }
    env.file(b"list", list.as_bytes());
    let bin = crate::testenv::fastsum_bin();
    let shown = terminal(&env, &format!("{bin} -c list > out"));
    // Frame by frame: once the last chunk is read (on a loaded machine,
    // while the slow file is still hashing) a total, its bytes and an ETA
    // are honest, so only frames from before the list's end are judged.
    let frames: Vec<&str> = shown.split(['\r', '\n']).collect();
    let reading: Vec<&&str> = frames
        .iter()
        .filter(|f| f.contains("found so far"))
        .collect();
    assert!(!reading.is_empty(), "no bar drawn: {shown:?}");
    for frame in reading {
        assert!(!frame.contains("ETA"), "{frame:?} in {shown:?}");
        assert!(!frame.contains("/1.00 GiB"), "a byte total: {frame:?}");
    }
    // A total of the first chunk alone is never shown.
    assert!(!shown.contains("/4096 files"), "{shown:?}");
    let out = std::fs::read_to_string(env.path().join("out")).unwrap();
    assert_eq!(out.lines().count(), 5001);
    assert_eq!(out.lines().filter(|l| l.ends_with(": OK")).count(), 5001);
    // One chunk: the total at once, and its bytes (the files' sizes).
    env.file(
        b"short",
        format!("SM3 (slow) = {digest}\nSM3 (small/0) = {empty}\n").as_bytes(),
    );
    let shown = terminal(&env, &format!("{bin} -c short > out"));
    assert!(shown.contains("/2 files"), "{shown:?}");
    assert!(shown.contains("/1.00 GiB at "), "no byte total: {shown:?}");
    assert!(!shown.contains("found so far"), "{shown:?}");
}

/// `--format=hashdeep` writes names as given, as `hashdeep -l` does;
/// hashdeep itself writes absolute ones, so its audit of a list made
/// from a relative root reports every file moved unless `-l`. --help says
/// so and both ways out, which the real hashdeep confirms: `-l -a` passes
/// on the relative list, and an absolute root gives hashdeep's own lines.
#[test]
fn hashdeep_lists_name_files_as_given_and_help_says_how_to_audit_them() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.mkdir("t/sub");
    env.file(b"t/a", b"a\n");
    env.file(b"t/sub/b", b"b\n");
    let help = env.fastsum("fastsum", &[b"--help"], b"").stdout_str();
    assert!(
        help.contains("names as given, as hashdeep -l writes them"),
        "{help}"
    );
    let hashdeep = |args: &[&str]| {
        let out = std::process::Command::new("hashdeep")
            .args(args)
            .current_dir(env.path())
            .output()
            .expect("hashdeep (scripts/tests/install-peers)");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let relative = env.fastsum("fastsum", &[b"-r", b"--format=hashdeep", b"t"], b"");
    env.file(b"relative.txt", &relative.stdout);
    assert!(
        relative.stdout_str().contains(",t/sub/b\n"),
        "{}",
        relative.stdout_str()
    );
    let (status, said) = hashdeep(&["-r", "-l", "-a", "-k", "relative.txt", "t"]);
    assert_eq!(status, Some(0), "{said}");
    // Without -l hashdeep compares absolute names: every file "moved".
    let (status, _) = hashdeep(&["-r", "-a", "-k", "relative.txt", "t"]);
    assert_eq!(status, Some(1));
    // An absolute root: hashdeep's own lines, and its audit passes.
    let root = env.path().join("t");
    let root = root.to_str().unwrap();
    let absolute = env.fastsum(
        "fastsum",
        &[
            b"-r",
            b"-a",
            b"md5",
            b"-a",
            b"sha256",
            b"--format=hashdeep",
            root.as_bytes(),
        ],
        b"",
    );
    env.file(b"absolute.txt", &absolute.stdout);
    let entries = |text: &str| {
        let mut lines: Vec<String> = text
            .lines()
            .filter(|l| !l.starts_with('%') && !l.starts_with('#'))
            .map(str::to_string)
            .collect();
        lines.sort();
        lines
    };
    let (_, theirs) = hashdeep(&["-r", root]);
    assert_eq!(entries(&absolute.stdout_str()), entries(&theirs));
    let (status, said) = hashdeep(&["-r", "-a", "-k", "absolute.txt", "t"]);
    assert_eq!(status, Some(0), "{said}");
}
