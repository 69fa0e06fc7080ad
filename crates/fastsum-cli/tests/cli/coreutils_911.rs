//! coreutils 9.11 quotes the names in `--check`'s OK/FAILED
//! lines as a shell would need them (`'sp ace': FAILED`, `"quo'te": OK`,
//! `'new'$'\n''line': FAILED`, bytes beyond ASCII escaped in the C locale
//! only). fastsum's personalities are run beside the 9.11 programs in
//! `$FASTSUM_FIXTURES/reference/coreutils-9.11/bin` on the same lists,
//! under both locales, and must print the same bytes; without that
//! fixture (a user's clone) the tests are skipped, with the reason.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::testenv::TestEnv;

/// The 9.11 reference programs, from the fixtures (else skipped).
fn reference_bin() -> Option<PathBuf> {
    crate::testenv::fixture("reference/coreutils-9.11/bin/md5sum")
        .and_then(|md5sum| md5sum.parent().map(Path::to_path_buf))
}

/// Names that need no quoting, and every kind that does.
const NAMES: &[&[u8]] = &[
    b"plain",
    b"a,b@c%d+e-f.g_h]i",
    b"a~b",
    b"a#b",
    b"a{b}",
    b"-dash",
    b"sp ace",
    b"quo'te",
    b"both'\"q",
    b"it's here",
    b"it's:colon",
    b"'",
    b"dq\"te",
    b"new\nline",
    b"new\nline'q",
    b"end\n",
    b"\nstart",
    b"ta\tb",
    b"cr\rx",
    b"back\\slash",
    b"back\\sl ash'",
    b"\\",
    b"st*r",
    b"~tilde",
    b"#hash",
    b"{",
    b"}",
    b"x=y",
    b"a$b",
    b"a!b",
    b"a:b",
    b"a;b&c|d<e>f",
    b"(p)[q]^r`s`",
    b"?q",
    b"q'?",
    b"ctl\x01x\x7fy",
    b"bell\x07vt\x0bff\x0cbs\x08",
    b"caf\xc3\xa9",
    b"caf\xc3\xa9'",
    b"c1 \xc2\x85x",
    b"bad\xffbyte",
    b"cut\xc3",
    b"\xe2\x80\x98curly\xe2\x80\x99",
];

/// `tool` (fastsum's personality, or the reference at `exe`) with `args`
/// in `dir`, under `locale`: stdout, stderr, status.
fn run(
    exe: &Path,
    tool: &str,
    args: &[&[u8]],
    dir: &Path,
    locale: &str,
) -> (Vec<u8>, Vec<u8>, i32) {
    let out = Command::new(exe)
        .arg0(tool)
        .args(args.iter().map(|a| OsStr::from_bytes(a)))
        .current_dir(dir)
        .env("LC_ALL", locale)
        .env_remove("POSIXLY_CORRECT")
        .stdin(Stdio::null())
        .output()
        .expect("the program runs");
    (out.stdout, out.stderr, out.status.code().unwrap_or(-1))
}

fn assert_same(bin: &Path, env: &TestEnv, tool: &str, args: &[&[u8]], locale: &str) {
    let fastsum = Path::new(crate::testenv::fastsum_bin());
    let expected = run(&bin.join(tool), tool, args, env.path(), locale);
    let actual = run(fastsum, tool, args, env.path(), locale);
    assert_eq!(
        (
            String::from_utf8_lossy(&actual.0),
            String::from_utf8_lossy(&actual.1),
            actual.2
        ),
        (
            String::from_utf8_lossy(&expected.0),
            String::from_utf8_lossy(&expected.1),
            expected.2
        ),
        "{tool} {args:?} under LC_ALL={locale}: fastsum (left) and coreutils 9.11 (right) differ"
    );
    assert_eq!(
        actual, expected,
        "{tool} {args:?} under LC_ALL={locale}: bytes differ"
    );
}

/// Every name in a list the reference writes; then a third of the files
/// changed (FAILED) and a third removed (FAILED open or read, or nothing
/// with --ignore-missing); checked by both, quietly too, in both locales.
fn check_lines_as_9_11(tool: &str, make: &[&[u8]]) {
    let Some(bin) = reference_bin() else { return };
    let env = TestEnv::new();
    for name in NAMES {
        env.file(name, name);
    }
    let mut args: Vec<&[u8]> = make.to_vec();
    args.push(b"--");
    args.extend_from_slice(NAMES);
    let (list, err, status) = run(&bin.join(tool), tool, &args, env.path(), "C");
    assert_eq!(status, 0, "{}", String::from_utf8_lossy(&err));
    env.file(b"LIST", &list);
    for (i, name) in NAMES.iter().enumerate() {
        match i % 3 {
            1 => drop(env.file(name, b"changed")),
            2 => std::fs::remove_file(env.path().join(OsStr::from_bytes(name))).expect("rm"),
            _ => {}
        }
    }
    for locale in ["C", "C.UTF-8"] {
        for extra in [&[][..], &[&b"--ignore-missing"[..]], &[b"--quiet"]] {
            let mut args: Vec<&[u8]> = vec![b"-c"];
            args.extend_from_slice(extra);
            args.push(b"LIST");
            assert_same(&bin, &env, tool, &args, locale);
        }
    }
}

#[test]
fn md5sum_quotes_check_lines_as_9_11() {
    if crate::testenv::lacks(&[
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "cksum",
        "sum",
        "b3sum",
        "xxhsum",
    ]) {
        return;
    }
    check_lines_as_9_11("md5sum", &[]);
}

#[test]
fn sha_sums_and_b2sum_quote_check_lines_as_9_11() {
    if crate::testenv::lacks(&[
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "cksum",
        "sum",
        "b3sum",
        "xxhsum",
    ]) {
        return;
    }
    check_lines_as_9_11("sha1sum", &[]);
    check_lines_as_9_11("sha256sum", &[b"--tag"]);
    check_lines_as_9_11("sha512sum", &[]);
    check_lines_as_9_11("b2sum", &[b"-l", b"128"]);
}

#[test]
fn cksum_quotes_check_lines_as_9_11() {
    if crate::testenv::lacks(&[
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "cksum",
        "sum",
        "b3sum",
        "xxhsum",
    ]) {
        return;
    }
    check_lines_as_9_11("cksum", &[b"-a", b"sha256"]);
    check_lines_as_9_11("cksum", &[b"-a", b"blake2b", b"-l", b"256"]);
}

/// Every `--version` names the coreutils release the personalities
/// follow, 9.11 (with no reference programs needed); a personality's line
/// keeps coreutils' shape (`NAME (PACKAGE) VERSION`-like, one line) and
/// fastsum's own first line starts with `fastsum VERSION`, which the
/// remote side's probe looks for.
#[test]
fn every_version_line_names_coreutils_9_11() {
    let env = TestEnv::new();
    let v = env!("CARGO_PKG_VERSION");
    let own = env.fastsum("fastsum", &[b"--version"], b"");
    assert_eq!(own.status, 0);
    let first = own.stdout_str().lines().next().unwrap_or("").to_string();
    assert_eq!(
        first,
        format!("fastsum {v} (compatible with GNU coreutils 9.11)")
    );
    for tool in [
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "cksum",
        "sum",
    ] {
        let out = env.fastsum(tool, &[b"--version"], b"");
        assert_eq!(out.status, 0, "{tool}");
        assert_eq!(
            out.stdout_str(),
            format!("{tool} (fastsum {v}) compatible with GNU coreutils 9.11\n"),
            "{tool}"
        );
    }
}

/// Command lines the option parser could read otherwise than 9.11 does,
/// each beside the reference (a hostile pass over the parser found the
/// first five kinds): `-l` with a minus sign (minus zero is zero, any
/// other negative number out of range, with its cause), an ambiguous
/// prefix given `=VALUE` (named whole), a byte that is no option (written
/// as that byte), and the neighbours of each.
#[test]
fn command_lines_are_read_as_9_11() {
    let Some(bin) = reference_bin() else { return };
    let env = TestEnv::new();
    env.file(b"f", b"hello\n");
    let lengths: &[&[u8]] = &[
        b"-0",
        b"-00",
        b" -0",
        b"-0 ",
        b"-8",
        b"-1",
        b"-",
        b" -8",
        b"+-8",
        b"-+0",
        b"-08",
        b"-99999999999999999999",
        b"99999999999999999999",
        b"0",
        b"8",
        b"+8",
        b" 8",
    ];
    for length in lengths {
        for (tool, before) in [("b2sum", &[][..]), ("cksum", &[&b"-a"[..], b"blake2b"][..])] {
            let mut args: Vec<&[u8]> = before.to_vec();
            args.extend_from_slice(&[b"-l", length, b"f"]);
            assert_same(&bin, &env, tool, &args, "C");
        }
    }
    let options: &[&[u8]] = &[
        b"--st=1",
        b"--t=8",
        b"--b=8",
        b"--s=1",
        b"--st",
        b"--sta=x",
        b"-\xc3",
        b"--\xc3",
        b"--st\xc3=1",
        b"--tag=",
        b"--c=x",
        b"--q",
    ];
    for option in options {
        for tool in ["md5sum", "sha1sum", "b2sum", "cksum", "sum"] {
            assert_same(&bin, &env, tool, &[option, b"f"], "C");
        }
    }
    // A value in a message is quoted with C escapes inside (gnulib's
    // `quote`): control bytes, backslashes, the closing mark, and bytes
    // the locale cannot print.
    let values: &[&[u8]] = &[
        b"8\n",
        "é".as_bytes(),
        b"a\\b",
        b"it's",
        b"t\tb",
        b"\x7f",
        b"\x01",
        "8’".as_bytes(),
        b"\xff",
        b"\xc3\xa9\xff",
        "８".as_bytes(),
        "\u{200b}".as_bytes(),
    ];
    for value in values {
        for locale in ["C", "C.UTF-8"] {
            assert_same(&bin, &env, "b2sum", &[b"-l", value, b"f"], locale);
            assert_same(&bin, &env, "cksum", &[b"-a", value, b"f"], locale);
        }
    }
}
