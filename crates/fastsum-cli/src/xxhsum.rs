//! The xxhsum personality: xxhsum 0.8.1 (`cli/xxhsum.c`), byte for byte.
//!
//! Its conventions differ from coreutils' and are kept as they are: options
//! end at the first file name; standard input is named `stdin`; messages
//! have their own wording (and trailing spaces); the check summary goes to
//! stdout; a read error ends the whole run; stdout is fully buffered.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use fastsum::error::os_message;
use fastsum::manifest::xxhsum as manifest;
use fastsum::{Algorithm, Digest, FileHasher};

use crate::term::output::{Buffering, Output};

/// xxhsum's longest accepted check line, `MAX_LINE_LENGTH` (32 KiB) less
/// the byte its buffer keeps for the terminating NUL.
const MAX_LINE: usize = 32 * 1024 - 1;

struct Run {
    exe: String,
    out: Output,
    hasher: FileHasher,
    log_level: i32,
}

impl Run {
    /// A message on stderr; names in it are their bytes, as xxhsum
    /// prints them (never made valid UTF-8).
    fn log(&mut self, message: impl AsRef<[u8]>) {
        self.out.err_raw(message.as_ref());
    }

    fn bad_usage(&mut self) -> i32 {
        self.log("Wrong parameters\n\n");
        self.usage();
        1
    }

    fn usage(&mut self) {
        let exe = self.exe.clone();
        // xxhsum's own banner, kept byte for byte in usage output (scripts
        // compare it); `--version` says what this really is.
        self.log(format!("{exe} 0.8.1 by Yann Collet \n"));
        self.log("Print or verify checksums using fast non-cryptographic algorithm xxHash \n\n");
        self.log(format!("Usage: {exe} [options] [files] \n\n"));
        self.log("When no filename provided or when '-' is provided, uses stdin as input. \n");
        self.log("Options: \n");
        self.log("  -H#         algorithm selection: 0,1,2,3 or 32,64,128 (default: 1) \n");
        self.log("  -c, --check read xxHash checksum from [files] and check them \n");
        self.log("  -h, --help  display a long help page about advanced options \n");
    }

    fn usage_advanced(&mut self) {
        self.usage();
        self.log("Advanced :\n");
        self.log("  -V, --version        Display version information \n");
        self.log("      --tag            Produce BSD-style checksum lines \n");
        self.log("      --little-endian  Checksum values use little endian convention (default: big endian) \n");
        self.log("  -b                   Run benchmark \n");
        self.log("  -b#                  Bench only algorithm variant # \n");
        self.log("  -i#                  Number of times to run the benchmark (default: 3) \n");
        self.log("  -q, --quiet          Don't display version header in benchmark mode \n");
        self.log("\n");
        self.log("The following four options are useful only when verifying checksums (-c): \n");
        self.log("  -q, --quiet          Don't print OK for each successfully verified file \n");
        self.log("      --status         Don't output anything, status code shows success \n");
        self.log("      --strict         Exit non-zero for improperly formatted checksum lines \n");
        self.log("      --warn           Warn about improperly formatted checksum lines \n");
    }

    /// xxhsum's reaction to a read error: a message, then exit(1) (which
    /// still flushes stdout).
    fn read_failure(&mut self) -> ! {
        self.log("Error: a failure occurred reading the input file.\n");
        let _ = self.out.finish();
        std::process::exit(1);
    }

    fn hash(&mut self, algorithm: Algorithm, reader: &mut dyn Read) -> Digest {
        match self.hasher.hash_reader(algorithm, reader) {
            Ok(d) => d,
            Err(_) => self.read_failure(),
        }
    }
}

/// `XSUM_readU32FromChar`: digits with an optional K/M (KiB, KB, MiB, MB)
/// suffix. `None` on overflow.
fn read_u32(s: &[u8], pos: &mut usize) -> Option<u32> {
    let mut result: u32 = 0;
    while let Some(&c) = s.get(*pos).filter(|c| c.is_ascii_digit()) {
        result = result.checked_mul(10)?.checked_add(u32::from(c - b'0'))?;
        *pos += 1;
    }
    if let Some(&unit @ (b'K' | b'M')) = s.get(*pos) {
        result = result.checked_mul(1024)?;
        if unit == b'M' {
            result = result.checked_mul(1024)?;
        }
        *pos += 1;
        if s.get(*pos) == Some(&b'i') {
            *pos += 1;
        }
        if s.get(*pos) == Some(&b'B') {
            *pos += 1;
        }
    }
    Some(result)
}

/// Runs the xxhsum personality; returns the exit status.
pub fn run(program: &[u8], args: &[Vec<u8>]) -> i32 {
    let exe = String::from_utf8_lossy(program.rsplit(|&b| b == b'/').next().unwrap_or(program))
        .into_owned();
    let mut algorithm = Algorithm::Xxh64;
    for (needle, a) in [
        ("xxh32sum", Algorithm::Xxh32),
        ("xxh64sum", Algorithm::Xxh64),
        ("xxh128sum", Algorithm::Xxh128),
    ] {
        if exe.contains(needle) {
            algorithm = a;
        }
    }
    let mut run = Run {
        exe,
        out: Output::new(Buffering::Full),
        hasher: FileHasher::new(),
        log_level: 2,
    };
    let (mut check, mut strict, mut status_only, mut warn) = (false, false, false, false);
    let (mut explicit_stdin, mut little_endian, mut tagged) = (false, false, false);
    let mut files_start = None;

    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_slice();
        match arg {
            b"--check" => check = true,
            b"--quiet" => run.log_level -= 1,
            b"--little-endian" => little_endian = true,
            b"--strict" => strict = true,
            b"--status" => status_only = true,
            b"--warn" => warn = true,
            b"--tag" => tagged = true,
            b"--help" => {
                run.usage_advanced();
                return 0;
            }
            b"--version" => {
                let exe = run.exe.clone();
                run.log(format!(
                    "{exe} 0.8.1 (fastsum {}) \n",
                    env!("CARGO_PKG_VERSION")
                ));
                return 0;
            }
            b"--benchmark-all" | b"--bench-all" => return unsupported_benchmark(&mut run),
            b"--" => {
                if i + 1 < args.len() {
                    files_start = Some(i + 1);
                }
                break;
            }
            _ if arg.first() != Some(&b'-') => {
                files_start = Some(i);
                break;
            }
            _ => {
                if arg.len() == 1 {
                    explicit_stdin = true;
                }
                let mut pos = 1;
                while pos < arg.len() {
                    match arg[pos] {
                        b'V' => {
                            let exe = run.exe.clone();
                            run.log(format!(
                                "{exe} 0.8.1 (fastsum {}) \n",
                                env!("CARGO_PKG_VERSION")
                            ));
                            return 0;
                        }
                        b'h' => {
                            run.usage_advanced();
                            return 0;
                        }
                        b'H' => {
                            pos += 1;
                            let Some(n) = read_u32(arg, &mut pos) else {
                                return numeric_too_large(&mut run);
                            };
                            match n {
                                0 | 32 => algorithm = Algorithm::Xxh32,
                                1 | 64 => algorithm = Algorithm::Xxh64,
                                2 | 128 => algorithm = Algorithm::Xxh128,
                                3 => algorithm = Algorithm::Xxh3,
                                _ => return run.bad_usage(),
                            }
                        }
                        b'c' => {
                            check = true;
                            pos += 1;
                        }
                        b'w' => {
                            warn = true;
                            pos += 1;
                        }
                        b'b' => return unsupported_benchmark(&mut run),
                        b'i' | b'B' => {
                            pos += 1;
                            if read_u32(arg, &mut pos).is_none() {
                                return numeric_too_large(&mut run);
                            }
                        }
                        b'q' => {
                            pos += 1;
                            run.log_level -= 1;
                        }
                        _ => return run.bad_usage(),
                    }
                }
            }
        }
        i += 1;
    }

    // SAFETY: isatty only inspects the descriptor number.
    let stdin_is_console = unsafe { libc::isatty(0) } == 1;
    if files_start.is_none() && stdin_is_console && !explicit_stdin {
        return run.bad_usage();
    }
    let files = files_start.map(|s| &args[s..]).unwrap_or(&[]);
    let status = if check {
        let quiet = run.log_level < 2;
        let mut ok = true;
        if files.is_empty() {
            ok &= check_file(
                &mut run,
                None,
                little_endian,
                strict,
                status_only,
                warn,
                quiet,
            );
        }
        for f in files {
            ok &= check_file(
                &mut run,
                Some(f),
                little_endian,
                strict,
                status_only,
                warn,
                quiet,
            );
        }
        i32::from(!ok)
    } else {
        let mut failed = false;
        if files.is_empty() {
            failed |= !hash_file(&mut run, None, algorithm, tagged, little_endian);
        } else {
            for f in files {
                failed |= !hash_file(&mut run, Some(f), algorithm, tagged, little_endian);
            }
            if run.log_level >= 2 {
                run.log(format!("\r{:70}\r", ""));
            }
        }
        i32::from(failed)
    };
    match run.out.finish() {
        Ok(()) => status,
        // xxhsum 0.8.1 ignores a failed write and exits 0 with nothing
        // written; fastsum says so, in xxhsum's own error style.
        Err(e) => {
            run.log(format!(
                "Error: write error: {} \n",
                fastsum::error::os_message(&e)
            ));
            1
        }
    }
}

fn unsupported_benchmark(run: &mut Run) -> i32 {
    run.log("Error: benchmark mode is not part of fastsum's xxhsum; use 'fastsum bench' \n");
    1
}

fn numeric_too_large(run: &mut Run) -> i32 {
    run.log("Error: numeric value too large \n");
    1
}

fn hash_file(
    run: &mut Run,
    name: Option<&Vec<u8>>,
    algorithm: Algorithm,
    tagged: bool,
    little_endian: bool,
) -> bool {
    let (digest, shown): (Digest, &[u8]) = match name {
        None => {
            let stdin = io::stdin();
            let mut lock = stdin.lock();
            (run.hash(algorithm, &mut lock), b"stdin")
        }
        Some(name) => {
            let path = &*fastsum::name::path(name);
            if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
                run.log([b"xxhsum: ", name.as_slice(), b": Is a directory \n"].concat());
                return false;
            }
            let mut file = match File::open(path) {
                Ok(f) => f,
                Err(e) => {
                    run.log(
                        [
                            b"Error: Could not open '",
                            name.as_slice(),
                            format!("': {}. \n", os_message(&e)).as_bytes(),
                        ]
                        .concat(),
                    );
                    return false;
                }
            };
            (run.hash(algorithm, &mut file), name.as_slice())
        }
    };
    manifest::write_line(
        run.out.stdout_buf(),
        algorithm,
        &digest,
        shown,
        tagged,
        little_endian,
    );
    run.out.commit();
    true
}

fn check_file(
    run: &mut Run,
    name: Option<&Vec<u8>>,
    little_endian: bool,
    strict: bool,
    status_only: bool,
    warn: bool,
    quiet: bool,
) -> bool {
    let shown: &[u8] = name.map_or(&b"stdin"[..], |n| n.as_slice());
    let reader: Box<dyn Read> = match name {
        None => Box::new(io::stdin()),
        Some(n) => match File::open(&*fastsum::name::path(n)) {
            Ok(f) => Box::new(f),
            Err(e) => {
                run.log(
                    [
                        b"Error: Could not open '",
                        shown,
                        format!("': {}\n", os_message(&e)).as_bytes(),
                    ]
                    .concat(),
                );
                return false;
            }
        },
    };
    let mut reader = BufReader::new(reader);
    let (mut proper, mut improper, mut mismatched, mut unreadable) = (0u64, 0u64, 0u64, 0u64);
    let mut quit = false;
    let mut line = Vec::new();
    let mut line_number = 0u64;
    loop {
        line_number += 1;
        line.clear();
        // A read error reads as end of file to xxhsum's fgetc loop.
        let n = reader.read_until(b'\n', &mut line).unwrap_or(0);
        if n == 0 {
            break;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if line.len() >= MAX_LINE {
            run.log(
                [
                    shown,
                    format!(":{line_number}: Error: Line too long.\n").as_bytes(),
                ]
                .concat(),
            );
            quit = true;
            break;
        }
        let Some(entry) = manifest::parse_line(&line, little_endian) else {
            improper += 1;
            if warn {
                run.log(
                    [
                        shown,
                        format!(":{line_number}: Error: Improperly formatted checksum line.\n")
                            .as_bytes(),
                    ]
                    .concat(),
                );
            }
            continue;
        };
        proper += 1;
        let file_name = entry.name.to_vec();
        let actual = if file_name == b"stdin" {
            let stdin = io::stdin();
            let mut lock = stdin.lock();
            Ok(run.hash(entry.algorithm, &mut lock))
        } else {
            match File::open(&*fastsum::name::path(&file_name)) {
                Ok(mut f) => Ok(run.hash(entry.algorithm, &mut f)),
                Err(e) => Err(e),
            }
        };
        match actual {
            Err(e) => {
                unreadable += 1;
                if !status_only {
                    let m = [
                        shown,
                        format!(":{line_number}: Could not open or read '").as_bytes(),
                        &file_name,
                        format!("': {}.\n", os_message(&e)).as_bytes(),
                    ]
                    .concat();
                    run.out.out(&m);
                }
            }
            Ok(digest) => {
                let ok = digest == entry.expected;
                if !ok {
                    mismatched += 1;
                }
                if (!ok || !quiet) && !status_only {
                    let buf = run.out.stdout_buf();
                    buf.extend_from_slice(&file_name);
                    buf.extend_from_slice(if ok { b": OK\n" } else { b": FAILED\n" });
                    run.out.commit();
                }
            }
        }
    }
    if proper == 0 {
        run.log(
            [
                shown,
                b": no properly formatted xxHash checksum lines found\n",
            ]
            .concat(),
        );
    } else if !status_only {
        if improper != 0 {
            let m = format!(
                "{improper} {} improperly formatted\n",
                if improper == 1 {
                    "line is"
                } else {
                    "lines are"
                }
            );
            run.out.out(m.as_bytes());
        }
        if unreadable != 0 {
            let m = format!(
                "{unreadable} listed {} could not be read\n",
                if unreadable == 1 { "file" } else { "files" }
            );
            run.out.out(m.as_bytes());
        }
        if mismatched != 0 {
            let m = format!(
                "{mismatched} computed {} did NOT match\n",
                if mismatched == 1 {
                    "checksum"
                } else {
                    "checksums"
                }
            );
            run.out.out(m.as_bytes());
        }
    }
    proper != 0 && mismatched == 0 && unreadable == 0 && (!strict || improper == 0) && !quit
}
