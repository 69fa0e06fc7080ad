//! Differential tests: the reference tools on this machine (GNU coreutils
//! 9.1, b3sum 1.8, xxhsum 0.8.1) and fastsum, invoked under the same name,
//! must print the same bytes on stdout and stderr and exit the same way.

use crate::testenv;

use testenv::{pattern, TestEnv, ALL_TOOLS, GNU_TOOLS, ODD_NAMES};

/// A directory with every odd name, a subdirectory and some sizes.
fn populated() -> TestEnv {
    let env = TestEnv::new();
    for (i, name) in ODD_NAMES.iter().enumerate() {
        env.file(name, &pattern(i * 97));
    }
    env.file(b"empty", b"");
    env.file(b"big", &pattern(300_000));
    env.mkdir("dir");
    env
}

fn names_and_trouble() -> Vec<&'static [u8]> {
    let mut args: Vec<&[u8]> = ODD_NAMES.to_vec();
    args.extend([&b"empty"[..], b"big", b"dir", b"missing", b"miss ing:x"]);
    args
}

#[test]
fn hashing_odd_names_missing_files_and_directories() {
    if crate::testenv::lacks(&[
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "b3sum",
        "xxhsum",
    ]) {
        return;
    }
    let env = populated();
    let names = names_and_trouble();
    for tool in ALL_TOOLS {
        env.assert_same(tool, &names, b"");
        let mut tagged = vec![&b"--tag"[..]];
        tagged.extend(&names);
        env.assert_same(tool, &tagged, b"");
    }
    for tool in GNU_TOOLS {
        for flag in [&b"-z"[..], b"-b", b"-t", b"--binary", b"--zero"] {
            let mut args = vec![flag];
            args.extend(&names);
            env.assert_same(tool, &args, b"");
        }
        env.assert_same(tool, &[b"--tag", b"-z", b"plain.txt", b"new\nline"], b"");
        env.assert_same(tool, &[b"--", b"-", b"plain.txt"], b"from stdin");
    }
}

#[test]
fn standard_input() {
    if crate::testenv::lacks(&[
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "b3sum",
        "xxhsum",
    ]) {
        return;
    }
    let env = populated();
    let input = pattern(70_000);
    for tool in ALL_TOOLS {
        env.assert_same(tool, &[], &input);
        env.assert_same(tool, &[b"-"], &input);
        env.assert_same(tool, &[], b"");
    }
    for tool in GNU_TOOLS {
        env.assert_same(tool, &[b"-", b"-"], &input);
        env.assert_same(tool, &[b"--tag", b"-"], &input);
    }
}

#[test]
fn xxhsum_variants() {
    if crate::testenv::lacks(&["xxhsum"]) {
        return;
    }
    let env = populated();
    let names = names_and_trouble();
    for flags in [
        &[&b"-H0"[..]][..],
        &[b"-H1"],
        &[b"-H2"],
        &[b"-H3"],
        &[b"-H32"],
        &[b"-H64"],
        &[b"-H128"],
        &[b"--little-endian"],
        &[b"--tag", b"--little-endian", b"-H2"],
        &[b"-H3", b"--little-endian"],
        &[b"--quiet"],
    ] {
        let mut args = flags.to_vec();
        args.extend(&names);
        env.assert_same("xxhsum", &args, b"");
        env.assert_same("xxhsum", flags, b"stdin bytes");
    }
    for bad in [&[&b"-H9"[..]][..], &[b"-x"], &[b"-Hx", b"plain.txt"]] {
        env.assert_same("xxhsum", bad, b"");
    }
    // Options end at the first name; a later "-" is a file name to xxhsum.
    env.assert_same("xxhsum", &[b"plain.txt", b"-H2", b"-"], b"");
}

#[test]
fn b2sum_lengths() {
    if crate::testenv::lacks(&["b2sum"]) {
        return;
    }
    let env = populated();
    for len in ["8", "128", "256", "512", "0", "+256", " 64"] {
        env.assert_same("b2sum", &[b"-l", len.as_bytes(), b"plain.txt", b"big"], b"");
        env.assert_same(
            "b2sum",
            &[b"--tag", b"--length", len.as_bytes(), b"plain.txt"],
            b"",
        );
    }
    // A minus sign is read as 9.11 reads it, not as 9.10 (compared with
    // 9.11 itself in coreutils_911::command_lines_are_read_as_9_11).
    for bad in ["12", "abc", "1024", "", "0x10"] {
        env.assert_same("b2sum", &[b"-l", bad.as_bytes(), b"plain.txt"], b"");
    }
}

#[test]
fn b3sum_modes() {
    if crate::testenv::lacks(&["b3sum"]) {
        return;
    }
    let env = populated();
    for args in [
        &[&b"--no-names"[..], b"plain.txt", b"big"][..],
        &[b"--length", b"100", b"plain.txt"],
        &[b"-l", b"8", b"--tag", b"plain.txt"],
        &[b"--seek", b"7", b"--length", b"9", b"plain.txt"],
        &[
            b"--derive-key",
            b"fastsum test context",
            b"plain.txt",
            b"big",
        ],
        &[b"--raw", b"plain.txt"],
        &[b"--raw", b"plain.txt", b"big"],
        &[b"--no-mmap", b"--num-threads", b"1", b"big"],
    ] {
        env.assert_same("b3sum", args, b"");
    }
    let key = [7u8; 32];
    env.assert_same("b3sum", &[b"--keyed", b"plain.txt"], &key);
    env.assert_same("b3sum", &[b"--keyed", b"plain.txt"], &key[..31]);
}

/// Check files made by the reference tool, then damaged in every way the
/// check mode must handle.
fn check_lists(env: &TestEnv, tool: &str, tag_flag: &[u8]) -> Vec<String> {
    let files: Vec<&[u8]> = vec![
        b"plain.txt",
        b"with space",
        b"back\\slash",
        b"new\nline",
        b"carriage\rreturn",
        b"empty",
        b"big",
        b"quote's",
    ];
    let mut args = vec![];
    if !tag_flag.is_empty() {
        args.push(tag_flag);
    }
    args.extend(&files);
    let good = env.reference(tool, &args, b"").stdout;
    let base = if tag_flag.is_empty() {
        "list"
    } else {
        "taglist"
    };
    let mut made = Vec::new();
    let mut write = |suffix: &str, bytes: &[u8]| {
        let name = format!("{base}-{suffix}");
        env.file(name.as_bytes(), bytes);
        made.push(name);
    };
    write("good", &good);
    let text = String::from_utf8_lossy(&good).into_owned();
    write("crlf", text.replace('\n', "\r\n").as_bytes());
    write(
        "upper",
        text.to_uppercase()
            .replace("PLAIN.TXT", "plain.txt")
            .as_bytes(),
    );
    let mut damaged = good.clone();
    damaged.extend_from_slice(b"this line is garbage\n\n# a comment\n");
    damaged.extend_from_slice(
        text.lines()
            .next()
            .unwrap_or_default()
            .replace("plain.txt", "missing-file")
            .as_bytes(),
    );
    damaged.extend_from_slice(b"\n");
    damaged.extend_from_slice(
        text.lines()
            .next()
            .unwrap_or_default()
            .replace("plain.txt", "dir")
            .as_bytes(),
    );
    write("damaged", &damaged);
    let first = text.lines().next().unwrap_or_default().to_string();
    write(
        "only-missing",
        first.replace("plain.txt", "gone").as_bytes(),
    );
    write("no-newline", first.as_bytes());
    write("garbage", b"nothing to see here\n");
    write("empty", b"");
    made
}

const CHECK_OPTIONS: [&[&[u8]]; 9] = [
    &[],
    &[b"--quiet"],
    &[b"--status"],
    &[b"--strict"],
    &[b"-w"],
    &[b"--ignore-missing"],
    &[b"--quiet", b"--strict", b"--warn"],
    &[b"--ignore-missing", b"--quiet"],
    &[b"--status", b"--warn"],
];

#[test]
fn gnu_check_mode() {
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
    let env = populated();
    for tool in GNU_TOOLS {
        // Change a file after listing it, so the lists hold one mismatch.
        let mut lists = check_lists(&env, tool, b"");
        lists.extend(check_lists(&env, tool, b"--tag"));
        env.file(b"quote's", b"changed after listing");
        for options in CHECK_OPTIONS {
            for list in &lists {
                let mut args = vec![&b"-c"[..]];
                args.extend_from_slice(options);
                args.push(list.as_bytes());
                env.assert_same(tool, &args, b"");
            }
            let mut args = vec![&b"--check"[..]];
            args.extend_from_slice(options);
            let list = std::fs::read(env.path().join("list-damaged")).unwrap();
            env.assert_same(tool, &args, &list);
            args.push(b"-");
            env.assert_same(tool, &args, &list);
        }
        env.assert_same(tool, &[b"-c", b"nonexistent-list"], b"");
        env.assert_same(tool, &[b"-c", b"dir"], b"");
        env.assert_same(
            tool,
            &[b"-c", b"list-good", b"nonexistent-list", b"list-damaged"],
            b"",
        );
        env.file(b"quote's", &pattern(9 * 97));
    }
}

#[test]
fn gnu_check_line_edge_cases() {
    if crate::testenv::lacks(&["md5sum", "b2sum"]) {
        return;
    }
    let env = populated();
    let md5 = "900150983cd24fb0d6963f7d28e17f72";
    env.file(b"abc", b"abc");
    let lines = [
        format!("{md5}  abc\n"),
        format!("{md5} *abc\n"),
        format!("{md5} abc\n"),
        format!("{md5}\tabc\n"),
        format!("  {md5}  abc\n"),
        format!("\\{md5}  abc\n"),
        format!("\\{md5}  a\\\\bc\n"),
        format!("\\{md5}  ab\\c\n"),
        format!("MD5 (abc) = {md5}\n"),
        format!("MD5(abc)= {md5}\n"),
        format!("MD5 (abc)={md5}\n"),
        format!("MD5  (abc) = {md5}\n"),
        format!("MD5 (abc) = {}\n", md5.to_uppercase()),
        format!("MD5 (abc) = {md5}0\n"),
        format!("{md5}0  abc\n"),
        format!("{}  abc\n", &md5[1..]),
        format!("{md5}  -\n"),
        format!("{md5} abc\n{md5}  abc\n"),
        format!("{md5}  abc\n{md5} abc\n"),
        format!("\\MD5 (a\\nb) = {md5}\n"),
        format!("{md5}  \n"),
        format!("{md5}   abc\n"),
        "\n\n\n".to_string(),
        "#only a comment\n".to_string(),
    ];
    for line in &lines {
        env.file(b"edge", line.as_bytes());
        env.assert_same("md5sum", &[b"-c", b"edge"], b"");
        env.assert_same("md5sum", &[b"-c", b"-w", b"--strict", b"edge"], b"");
        env.assert_same("md5sum", &[b"-c"], line.as_bytes());
    }
    let b2 = env
        .reference("b2sum", &[b"-l", b"64", b"abc"], b"")
        .stdout_str();
    let b2_tag = env
        .reference("b2sum", &[b"--tag", b"-l", b"128", b"abc"], b"")
        .stdout_str();
    for line in [
        b2.clone(),
        b2_tag.clone(),
        b2_tag.replace("BLAKE2b-128", "BLAKE2b-0x80"),
        b2_tag.replace("BLAKE2b-128", "BLAKE2b-12"),
    ] {
        env.file(b"edge", line.as_bytes());
        env.assert_same("b2sum", &[b"-c", b"-w", b"edge"], b"");
    }
}

#[test]
fn b3sum_check_mode() {
    if crate::testenv::lacks(&["b3sum"]) {
        return;
    }
    let env = populated();
    let files: Vec<&[u8]> = vec![
        b"plain.txt",
        b"with space",
        b"back\\slash",
        b"new\nline",
        b"empty",
        b"big",
    ];
    let good = env.reference("b3sum", &files, b"").stdout;
    let mut tag_args = vec![&b"--tag"[..]];
    tag_args.extend(&files);
    let tagged = env.reference("b3sum", &tag_args, b"").stdout;
    env.file(b"good", &good);
    env.file(b"tagged", &tagged);
    let mut bad = good.clone();
    bad.extend_from_slice(b"garbage\n\n");
    bad.extend_from_slice(
        String::from_utf8_lossy(&good)
            .lines()
            .next()
            .unwrap()
            .replace("plain.txt", "missing")
            .as_bytes(),
    );
    bad.push(b'\n');
    env.file(b"bad", &bad);
    env.file(
        b"upper",
        String::from_utf8_lossy(&good).to_uppercase().as_bytes(),
    );
    env.file(b"plain.txt", b"changed");
    for list in [&b"good"[..], b"tagged", b"bad", b"upper", b"nonexistent"] {
        env.assert_same("b3sum", &[b"-c", list], b"");
        env.assert_same("b3sum", &[b"--check", b"--quiet", list], b"");
    }
    env.assert_same("b3sum", &[b"-c"], &good);
    env.assert_same("b3sum", &[b"-c", b"good", b"nonexistent", b"bad"], b"");
}

#[test]
fn xxhsum_check_mode() {
    if crate::testenv::lacks(&["xxhsum"]) {
        return;
    }
    let env = populated();
    let files: Vec<&[u8]> = vec![b"plain.txt", b"with space", b"empty", b"big"];
    let mut lists = Vec::new();
    for (i, flags) in [
        &[&b"-H0"[..]][..],
        &[b"-H1"],
        &[b"-H2"],
        &[b"-H3"],
        &[b"--tag", b"-H2"],
        &[b"--little-endian"],
    ]
    .iter()
    .enumerate()
    {
        let mut args = flags.to_vec();
        args.extend(&files);
        let listing = env.reference("xxhsum", &args, b"").stdout;
        let name = format!("xlist{i}");
        env.file(name.as_bytes(), &listing);
        lists.push(name);
    }
    let mut bad = std::fs::read(env.path().join("xlist1")).unwrap();
    bad.extend_from_slice(b"garbage line\n0123456789abcdef  missing\n");
    env.file(b"xbad", &bad);
    lists.push("xbad".into());
    env.file(b"big", b"changed after listing");
    for options in [
        &[][..],
        &[&b"-q"[..]],
        &[b"--status"],
        &[b"--strict"],
        &[b"--warn"],
        &[b"-w", b"--strict"],
        &[b"--little-endian"],
    ] {
        for list in &lists {
            let mut args = vec![&b"-c"[..]];
            args.extend_from_slice(options);
            args.push(list.as_bytes());
            env.assert_same("xxhsum", &args, b"");
        }
    }
    env.assert_same("xxhsum", &[b"-c", b"nonexistent"], b"");
    env.assert_same(
        "xxhsum",
        &[b"-c"],
        &std::fs::read(env.path().join("xlist0")).unwrap(),
    );
}

#[test]
fn usage_errors_and_help() {
    if crate::testenv::lacks(&[
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "b3sum",
        "xxhsum",
    ]) {
        return;
    }
    let env = populated();
    let cases: [&[&[u8]]; 17] = [
        &[b"--bogus"],
        &[b"-x", b"plain.txt"],
        &[b"--s"],
        &[b"--t", b"plain.txt"],
        &[b"--tag=1"],
        &[b"-c", b"--tag", b"list"],
        &[b"-c", b"-z", b"list"],
        &[b"-c", b"-b", b"list"],
        &[b"--quiet", b"plain.txt"],
        &[b"--status", b"plain.txt"],
        &[b"--warn", b"plain.txt"],
        &[b"--strict", b"plain.txt"],
        &[b"--ignore-missing", b"plain.txt"],
        &[b"--tag", b"-t", b"plain.txt"],
        &[b"--help"],
        &[b"--he"],
        &[b"plain.txt", b"--bogus"],
    ];
    for tool in GNU_TOOLS {
        for args in cases {
            env.assert_same(tool, args, b"");
        }
    }
    for args in [
        &[&b"--bogus"[..]][..],
        &[b"--quiet", b"plain.txt"],
        &[b"-c", b"--tag", b"x"],
        &[b"--help"],
        &[b"-h"],
        &[b"--keyed"],
    ] {
        env.assert_same("b3sum", args, b"");
    }
    for args in [&[&b"--help"[..]][..], &[b"-h"], &[b"-x"], &[b"-H5"]] {
        env.assert_same("xxhsum", args, b"");
    }
}

#[test]
fn xxhsum_messages_carry_names_as_their_bytes() {
    if crate::testenv::lacks(&["xxhsum"]) {
        return;
    }
    // Names that are not UTF-8 once came out as U+FFFD in
    // messages; xxhsum 0.8.1 prints their bytes.
    let env = TestEnv::new();
    env.file(b"n\xff.txt", b"abc");
    std::fs::create_dir(
        env.path()
            .join(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"e\xfd")),
    )
    .unwrap();
    env.file(b"g\xfa", b"garbage\n");
    let listed = env.reference("xxhsum", &[b"n\xff.txt"], b"").stdout;
    env.file(b"list", &listed);
    let mut missing = listed.clone();
    missing.extend_from_slice(b"44bc2cf5ad770999  m\xfe\n");
    env.file(b"l\xfb", &missing);
    for args in [
        &[&b"n\xff.txt"[..], b"m\xfe", b"e\xfd"][..],
        &[b"-c", b"list", b"m\xfe"],
        &[b"-c", b"l\xfb"],
        &[b"-c", b"g\xfa"],
        &[b"-c", b"-w", b"g\xfa"],
        &[b"--tag", b"-H2", b"n\xff.txt"],
    ] {
        env.assert_same("xxhsum", args, b"");
    }
}
