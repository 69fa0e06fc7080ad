//! The terminal side shared by every personality: glibc's option rules
//! ([`getopt`]), gnulib's quoting of names in messages ([`Quoting`]), standard
//! output buffered as the originals buffer it ([`output`]), the
//! progress bar ([`progress`]), and the options several subcommands share
//! ([`shared`]).

pub mod cache;
pub mod exclude_file;
pub mod getopt;
pub mod output;
pub mod progress;
pub mod threads;
/// Names in messages as coreutils quotes them (the library's, shared
/// with the Python package's Dask runner).
pub use fastsum::output::quote::Quoting;

/// A name as messages show it: coreutils' `quotef` (as in a UTF-8 locale:
/// the subcommands' messages are UTF-8 text). The one way a subcommand
/// puts a file's or a list's name in a message, so that a name holding a
/// newline or ESC cannot forge a line or reach the terminal raw.
pub fn named(name: &[u8]) -> String {
    String::from_utf8_lossy(&Quoting { utf8: true }.quotef(name)).into_owned()
}

/// [`named`] for a path.
pub fn named_path(path: &std::path::Path) -> String {
    named(fastsum::name::path_bytes(path))
}

/// How `HOST:PATH` operands are reached: `FASTSUM_RSH` (as rsync's
/// `RSYNC_RSH`) or `ssh`, until `-e` says otherwise.
pub fn remote_options() -> fastsum::remote::RemoteOptions {
    let mut options = fastsum::remote::RemoteOptions::default();
    if let Ok(command) = std::env::var("FASTSUM_RSH") {
        options.set_transport(&command);
        if options.rsh.is_empty() {
            options.rsh = vec!["ssh".into()];
        }
    }
    options
}

/// [`remote_options`] with `-e/--rsh`, `--remote-method` and
/// `--remote-fastsum` as given: the remote side `diff` and `contained`
/// reach a host with.
pub fn remote_options_with(
    rsh: Option<&str>,
    method: Option<&str>,
    remote_fastsum: Option<&str>,
) -> fastsum::remote::RemoteOptions {
    let mut options = remote_options();
    if let Some(rsh) = rsh {
        options.set_transport(rsh);
    }
    options.method = method.and_then(fastsum::remote::Method::from_name);
    options.remote_fastsum = remote_fastsum.map(str::to_string);
    options
}

/// `-q`: notices (what was left out, the summary of a run without
/// trouble) are not printed; errors and warnings of trouble always are.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets `-q` for the run (fastsum's own mode and every subcommand).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
}

/// Whether notices are silenced.
pub fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// `n` and the noun agreeing with it: "1 hit", "2 hits".
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The width of the terminal standard output is, if it is one: the
/// kernel's window size, else `$COLUMNS` (a pseudo-terminal may have none).
pub fn stdout_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    #[cfg(unix)]
    {
        // SAFETY: an all-zero winsize is a valid value of that plain C struct.
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: TIOCGWINSZ writes a winsize through the pointer it is
        // given, which points to one.
        let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut size) } == 0;
        if ok && size.ws_col > 0 {
            return Some(usize::from(size.ws_col));
        }
    }
    std::env::var("COLUMNS").ok()?.parse().ok()
}

/// `text` as a JSON string, quotes included: `"` and `\` escaped, and
/// every control character (a strategy's name comes from the command line
/// and may hold any of them) as `\uXXXX`, as RFC 8259 requires.
pub fn json_string(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len() + 2);
    fastsum::output::render::Renderer::write_json_string(&mut out, text);
    String::from_utf8(out).expect("the escaper writes UTF-8")
}

/// Writes `text` to standard output and flushes it; where it cannot be
/// written (`/dev/full`, a closed pipe), says `PROGRAM: write error: CAUSE`
/// and gives exit status 1 instead of the `status` asked for.
pub fn print_all(program: &str, text: &[u8], status: i32) -> i32 {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text).and_then(|()| out.flush()) {
        Ok(()) => status,
        Err(e) => {
            eprintln!("{program}: write error: {}", fastsum::Error::os_message(&e));
            1
        }
    }
}

/// A subcommand's arguments (`args` after its word), parsed by clap: help
/// and version on stdout (exit 0, or 1 when they cannot be written),
/// a usage error on stderr (exit 2). `Err` holds the exit status.
pub fn parse_subcommand<T: clap::Parser>(
    name: &str,
    args: Vec<std::ffi::OsString>,
) -> Result<T, i32> {
    match T::try_parse_from(std::iter::once(name.into()).chain(args)) {
        Ok(parsed) => Ok(parsed),
        Err(e) if e.use_stderr() => {
            let _ = e.print();
            Err(2)
        }
        Err(e) if std::io::IsTerminal::is_terminal(&std::io::stdout()) => {
            let _ = e.print();
            Err(0)
        }
        Err(e) => Err(print_all(name, e.render().to_string().as_bytes(), 0)),
    }
}

/// `hasher` answering from `cache` when it serves the run's algorithm
/// (off: as it was). The cache was loaded for the run's algorithm (one
/// value, bound when both were made); should it not be, the library
/// refuses it and the run goes on uncached, saying so with `who`
/// (`fastsum diff`), never silently.
pub fn cached(
    who: &str,
    hasher: fastsum::TreeHasher,
    cache: &fastsum::cache::CacheRun,
) -> fastsum::TreeHasher {
    match hasher.clone().cache(cache) {
        Ok(cached) => cached,
        Err(e) => {
            eprintln!("{who}: cache: {e}; going on without it");
            hasher
        }
    }
}

/// An algorithm's name as the subcommands' `-a` takes it (clap says a bad
/// one, with the valid names).
pub fn parse_algorithm(text: &str) -> Result<fastsum::Algorithm, String> {
    text.parse::<fastsum::Algorithm>()
        .map_err(|e| e.to_string())
}

/// A byte count as options take it: decimal, with an optional K, M or G
/// (powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let (digits, unit) = match text.as_bytes().last() {
        Some(b'K' | b'k') => (&text[..text.len() - 1], 1u64 << 10),
        Some(b'M' | b'm') => (&text[..text.len() - 1], 1 << 20),
        Some(b'G' | b'g') => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .ok_or_else(|| format!("not a size: {text}"))
}

/// A duration as options take it: a whole number with s, m, h, d or w
/// (seconds without one).
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let (digits, unit) = match text.as_bytes().last() {
        Some(b's') => (&text[..text.len() - 1], 1u64),
        Some(b'm') => (&text[..text.len() - 1], 60),
        Some(b'h') => (&text[..text.len() - 1], 3600),
        Some(b'd') => (&text[..text.len() - 1], 86_400),
        Some(b'w') => (&text[..text.len() - 1], 604_800),
        _ => (text, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .map(std::time::Duration::from_secs)
        .ok_or_else(|| format!("not a duration (a number with s, m, h, d or w): {text}"))
}

/// A name on a line of its own after `indent`, escaped as every report
/// line escapes names (`LinePart::write_line`: a leading `\` when it
/// holds `\` or any control character).
pub fn write_name(buf: &mut Vec<u8>, name: &[u8], indent: &str) {
    use fastsum::output::line::LinePart;
    let parts = [LinePart::Text(indent.as_bytes()), LinePart::Name(name)];
    LinePart::write_line(buf, &parts, true);
}
