//! xxhsum's command line, read as `cli/xxhsum.c` reads it: options end at
//! the first file name, short options bundle (`-cq`), `-H#` takes a number
//! with an optional K/M suffix.

use fastsum::Algorithm;

use super::Run;

/// What the command line asks for.
pub(super) struct Settings {
    pub algorithm: Algorithm,
    pub check: bool,
    pub strict: bool,
    pub status_only: bool,
    pub warn: bool,
    /// `-` was given: standard input even from a terminal.
    pub explicit_stdin: bool,
    pub little_endian: bool,
    pub tagged: bool,
    /// Where the file names start in the arguments.
    pub files_start: Option<usize>,
}

/// The settings, or the status to exit with now (help, version, a bad
/// option: each already said).
pub(super) fn parse(run: &mut Run, args: &[Vec<u8>]) -> Result<Settings, i32> {
    let mut settings = Settings {
        algorithm: default_algorithm(&run.exe),
        check: false,
        strict: false,
        status_only: false,
        warn: false,
        explicit_stdin: false,
        little_endian: false,
        tagged: false,
        files_start: None,
    };
    for (i, arg) in args.iter().enumerate() {
        let arg = arg.as_slice();
        match arg {
            b"--check" => settings.check = true,
            b"--quiet" => run.log_level -= 1,
            b"--little-endian" => settings.little_endian = true,
            b"--strict" => settings.strict = true,
            b"--status" => settings.status_only = true,
            b"--warn" => settings.warn = true,
            b"--tag" => settings.tagged = true,
            b"--help" => return Err(help(run)),
            b"--version" => return Err(version(run)),
            b"--benchmark-all" | b"--bench-all" => return Err(unsupported_benchmark(run)),
            b"--" => {
                if i + 1 < args.len() {
                    settings.files_start = Some(i + 1);
                }
                break;
            }
            _ if arg.first() != Some(&b'-') => {
                settings.files_start = Some(i);
                break;
            }
            _ => parse_short(run, arg, &mut settings)?,
        }
    }
    Ok(settings)
}

/// The algorithm the program's name says (`xxh32sum`, `xxh64sum`,
/// `xxh128sum`; XXH64 otherwise).
fn default_algorithm(exe: &str) -> Algorithm {
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
    algorithm
}

/// One argument of bundled short options (`-` alone is standard input).
fn parse_short(run: &mut Run, arg: &[u8], settings: &mut Settings) -> Result<(), i32> {
    if arg.len() == 1 {
        settings.explicit_stdin = true;
    }
    let mut pos = 1;
    while let Some(&option) = arg.get(pos) {
        pos += 1;
        match option {
            b'V' => return Err(version(run)),
            b'h' => return Err(help(run)),
            b'H' => {
                let Some(n) = read_u32(arg, &mut pos) else {
                    return Err(numeric_too_large(run));
                };
                settings.algorithm = match n {
                    0 | 32 => Algorithm::Xxh32,
                    1 | 64 => Algorithm::Xxh64,
                    2 | 128 => Algorithm::Xxh128,
                    3 => Algorithm::Xxh3,
                    _ => return Err(run.bad_usage()),
                };
            }
            b'c' => settings.check = true,
            b'w' => settings.warn = true,
            b'b' => return Err(unsupported_benchmark(run)),
            b'i' | b'B' => {
                if read_u32(arg, &mut pos).is_none() {
                    return Err(numeric_too_large(run));
                }
            }
            b'q' => run.log_level -= 1,
            _ => return Err(run.bad_usage()),
        }
    }
    Ok(())
}

fn help(run: &mut Run) -> i32 {
    run.usage_advanced();
    0
}

fn version(run: &mut Run) -> i32 {
    let exe = run.exe.clone();
    run.log(format!(
        "{exe} 0.8.1 (fastsum {}) \n",
        env!("CARGO_PKG_VERSION")
    ));
    0
}

fn unsupported_benchmark(run: &mut Run) -> i32 {
    run.log("Error: benchmark mode is not part of fastsum's xxhsum; use 'fastsum bench' \n");
    1
}

fn numeric_too_large(run: &mut Run) -> i32 {
    run.log("Error: numeric value too large \n");
    1
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
