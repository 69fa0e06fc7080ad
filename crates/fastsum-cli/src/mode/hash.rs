//! Hash mode: operands through the library's pipeline, each record
//! printed as the GNU tool prints it.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use fastsum::pipeline::{Outcome, Progress, Record, Sink, TreeHasher};
use fastsum::walk::SpecialKind;
use fastsum::{Algorithm, ErrorKind, Source};

use crate::mode::options::Options;
use crate::mode::run::{print_cache_stats, say_notices, Run};
use crate::term::progress;

/// How hashing one named input ended.
pub(super) enum Hashed {
    Digest(fastsum::Digest),
    /// ENOENT with --ignore-missing.
    Missing,
    /// Reported already; why, for `-c --json`.
    Failed(String),
}

/// A name no file can have (longer than `PATH_MAX`): answered "File name
/// too long" without a copy of it going through the pipeline (a 100 MB
/// name cost 1.9 GB).
pub(super) fn too_long(name: &[u8]) -> bool {
    #[cfg(unix)]
    let limit = libc::PATH_MAX as usize;
    #[cfg(not(unix))]
    let limit = 32 * 1024;
    name.len() > limit
}

/// coreutils' `digest_file`: "-" is standard input; errors are reported
/// here, with the name quoted as coreutils quotes it.
pub(super) fn digest_named(
    run: &mut Run,
    algorithm: Algorithm,
    name: &[u8],
    ignore_missing: bool,
) -> Hashed {
    #[cfg(unix)]
    if too_long(name) {
        let e = io::Error::from_raw_os_error(libc::ENAMETOOLONG);
        let why = ErrorKind::Io(e).to_string();
        run.file_error(name, &why);
        return Hashed::Failed(why);
    }
    let cached = name != b"-" && run.check_cache_serves(algorithm);
    let result = if cached {
        // The cache's one lookup path: the pipeline's caching stage, here
        // on one file.
        let mut outcome = None;
        let operand = Source::Path(fastsum::name::path(name).into_owned());
        let hasher = TreeHasher::new(algorithm)
            .threads(1)
            .strategy(run.hasher.strategy());
        let ran = run
            .check_cached(hasher)
            .run(&[operand], |record| outcome = Some(record.outcome));
        match (ran, outcome) {
            (Ok(()), Some(Outcome::Hashed(hashed))) => Ok(hashed.digest),
            (Ok(()), Some(Outcome::Failed(ErrorKind::Io(e))))
                if ignore_missing && e.kind() == io::ErrorKind::NotFound =>
            {
                return Hashed::Missing
            }
            (Ok(()), Some(Outcome::Failed(kind))) => Err(kind),
            _ => Err(ErrorKind::Io(io::Error::other("not hashed"))),
        }
    } else if name == b"-" && !listed(run) {
        run.hasher.hash_stdin(algorithm).map_err(ErrorKind::Io)
    } else if listed(run) {
        // A list's path: regular files only, never waiting; a line naming
        // `-` names a file of that name, never standard input (51.3).
        match run
            .hasher
            .hash_listed(algorithm, &fastsum::name::path(name))
        {
            Ok(digest) => Ok(digest),
            Err(e) if ignore_missing && e.raw_os_error() == Some(libc::ENOENT) => {
                return Hashed::Missing
            }
            Err(e) => Err(e.into_kind()),
        }
    } else {
        match File::open(&*fastsum::name::path(name)) {
            Ok(file) => run.hasher.hash_file(algorithm, &file),
            Err(e) if ignore_missing && e.kind() == io::ErrorKind::NotFound => {
                return Hashed::Missing
            }
            Err(e) => Err(ErrorKind::Io(e)),
        }
    };
    match result {
        Ok(digest) => Hashed::Digest(digest),
        Err(kind) => {
            let why = kind.to_string();
            run.file_error(name, &why);
            Hashed::Failed(why)
        }
    }
}

/// Whether the files a list names are opened as a list's paths (regular
/// files only, never waiting: a FIFO, `/dev/zero`): in fastsum's own -c,
/// since a list may come from anyone. The GNU tools read what the list
/// names, devices too, as coreutils does (its own tests check `/dev/null`'s
/// line).
pub(super) fn listed(run: &Run) -> bool {
    run.tool.policy().lists_name_regular_files
}

/// Hashes every operand through the library's pipeline (every core; with
/// `-r`, whole trees) and prints each result in order, as the GNU tool would.
pub(super) fn hash_operands(run: &mut Run, o: &Options, names: &[Vec<u8>]) -> bool {
    let operands: Vec<Source> = names
        .iter()
        .map(|name| match &name[..] {
            b"-" => Source::Stdin,
            _ => Source::Path(fastsum::name::path(name).into_owned()),
        })
        .collect();
    let mut opened = None;
    let cache = match &o.answers {
        Some(answers) => answers,
        None => opened.insert(open_cache(run, o, &operands)),
    };
    let progress = Arc::new(Progress::default());
    let display = progress::Display::default();
    let show_progress = run.tool.policy().progress_bar && progress::wanted(o.no_progress);
    // SAFETY: isatty only inspects the descriptor number.
    let stdout_is_tty = unsafe { libc::isatty(1) } == 1;
    let who = run.program();
    let mut printer = Printer {
        run,
        o,
        display: &display,
        stdout_is_tty,
        ok: true,
        symlinks: 0,
    };
    let result = std::thread::scope(|scope| {
        if show_progress {
            scope.spawn(|| display.run(&progress));
        }
        let run_tree =
            TreeHasher::with_options(o.algorithms.one(), o.tree.clone()).progress(progress.clone());
        let run_tree = crate::term::cached(&who, run_tree, cache);
        let result = match (&o.prune, o.tree.walk.directories) {
            (None, false) => run_tree.run_into(&operands, &mut printer),
            // The algorithm was checked when the options were resolved.
            (offers, _) => {
                run_tree.run_with_directory_digests(&operands, offers.as_ref(), &mut printer)
            }
        };
        display.finish();
        result
    });
    let (ok, symlinks) = (printer.ok, printer.symlinks);
    if symlinks > 0 {
        let what = crate::term::count(symlinks, "symbolic link", "symbolic links");
        let hint = match o.hashdeep {
            true => "hashdeep follows them: drop --no-follow",
            false => "-L follows them",
        };
        run.notice(format!("{what} left out ({hint})").as_bytes());
    }
    if let Err(e) = result {
        run.error(e.to_string().as_bytes());
        return false;
    }
    if let Some(mut cache) = opened {
        let finished = cache.finish();
        say_notices(run, &mut cache);
        if let (Some(stats), true) = (finished, o.cache_stats) {
            print_cache_stats(run, &stats);
        }
    }
    ok
}

/// The cache, if asked for, for the operands' paths (one that cannot be
/// opened or loaded costs a warning, never the run; off if not asked).
fn open_cache(run: &mut Run, o: &Options, operands: &[Source]) -> fastsum::cache::CacheRun {
    let Some(path) = o.cache.as_ref() else {
        return fastsum::cache::CacheRun::off();
    };
    let prefixes: Vec<PathBuf> = operands
        .iter()
        .filter_map(|op| match op {
            Source::Path(p) => Some(p.clone()),
            Source::Stdin => None,
        })
        .collect();
    let mut cache = fastsum::cache::CacheRun::open(path, o.algorithms.one(), &prefixes);
    say_notices(run, &mut cache);
    cache
}

/// Prints a run's records as they come, and flushes what it holds whenever
/// the run waits (lines reach a terminal or a pipe as soon as
/// they are next in order, no later than md5sum's would).
struct Printer<'a> {
    run: &'a mut Run,
    o: &'a Options,
    display: &'a progress::Display,
    stdout_is_tty: bool,
    /// No failure so far.
    ok: bool,
    /// Symbolic links the walk left out: said once, at the end.
    symlinks: u64,
}

impl Sink for &mut Printer<'_> {
    fn record(&mut self, record: Record) {
        if let Some(update) = &self.o.update {
            if crate::mode::own_files::is_own_file(update, &record.path) {
                // The list being updated, or its temporary file: never an
                // entry of the tree it describes.
                return;
            }
        }
        self.ok &= !record.is_failure();
        if let Outcome::Skipped(SpecialKind::Symlink) = record.outcome {
            // Counted and said once at the end; only JSON has a record.
            self.symlinks += 1;
            print_record(self.run, self.o, &record);
            return;
        }
        let to_stderr = !matches!(record.outcome, Outcome::Hashed(_) | Outcome::Directory(_));
        let (run, o) = (&mut *self.run, self.o);
        let failed = if (to_stderr || self.stdout_is_tty) && self.display.visible() {
            // Written while the bar is off the screen, not left for later.
            self.display.suspend(|| {
                let failed = print_record(run, o, &record);
                run.out.flush_held();
                failed
            })
        } else {
            print_record(run, o, &record)
        };
        self.ok &= !failed;
    }

    fn idle(&mut self) {
        self.run.out.flush_held();
    }
}

/// One result: a checksum line (or JSON object) on stdout, or a message on
/// stderr in the GNU form `PROGRAM: NAME: CAUSE` (the library's renderer);
/// true when it failed (a read, or a name the format cannot hold).
pub(super) fn print_record(run: &mut Run, o: &Options, record: &Record) -> bool {
    let hashed = matches!(record.outcome, Outcome::Hashed(_));
    let algorithm = o.algorithms.one();
    let crc = matches!(algorithm, Algorithm::Crc | Algorithm::Crc32b);
    // crc: said once, when the first file is read; crc32b: every file.
    if hashed && !o.json && o.debug && crc && !run.said_debug {
        run.said_debug = algorithm == Algorithm::Crc;
        for line in crc_implementation(algorithm) {
            run.error(line.as_bytes());
        }
    }
    if let (Some(written), Outcome::Hashed(h)) = (&mut run.written, &record.outcome) {
        written.push(
            fastsum::name::path_bytes(&record.path),
            h.size,
            std::slice::from_ref(&h.digest),
        );
    }
    let mut err = Vec::new();
    let rendered = o.renderer.render(record, run.out.stdout_buf(), &mut err);
    run.out.commit();
    run.stop_if_unwritable();
    if let Outcome::Failed(kind) = &record.outcome {
        let name = fastsum::name::path_bytes(&record.path);
        run.hints.amend(&run.name, name, kind, &mut err);
    }
    if !err.is_empty() {
        run.out.err_raw(&err);
    }
    rendered.failure
}

/// What `cksum --debug` says of its CRC (coreutils 9.10 `cksum_crc.c`):
/// the fastest of its AVX-512, AVX2 and PCLMUL folds the CPU has and
/// `GLIBC_TUNABLES=glibc.cpu.hwcaps=-NAME,...` leaves enabled, each one
/// ruled out said on the way (crc32b: the PCLMUL one only). fastsum's CRCs
/// (crc-fast) fold with the same instructions where the CPU has them.
pub(super) fn crc_implementation(algorithm: Algorithm) -> Vec<&'static str> {
    let mut said = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        let has = |feature: &str, hwcap: &str| hwcap_allowed(hwcap) && x86_feature(feature);
        let folds: &[(&str, bool)] = &[
            (
                "avx512",
                has("avx512f", "-AVX512F")
                    && has("avx512bw", "-AVX512BW")
                    && has("vpclmulqdq", "-VPCLMULQDQ"),
            ),
            (
                "avx2",
                has("avx2", "-AVX2") && has("vpclmulqdq", "-VPCLMULQDQ"),
            ),
            ("pclmul", has("avx", "-AVX") && has("pclmul", "-PCLMULQDQ")),
        ];
        let folds = match algorithm {
            Algorithm::Crc32b => &folds[2..],
            _ => folds,
        };
        for &(name, enabled) in folds {
            said.push(match (name, enabled) {
                ("avx512", true) => "using avx512 hardware support",
                ("avx512", false) => "avx512 support not detected",
                ("avx2", true) => "using avx2 hardware support",
                ("avx2", false) => "avx2 support not detected",
                (_, true) => "using pclmul hardware support",
                (_, false) => "pclmul support not detected",
            });
            if enabled {
                break;
            }
        }
    }
    #[cfg(target_arch = "aarch64")]
    if algorithm == Algorithm::Crc {
        said.push(
            match hwcap_allowed("-PMULL") && std::arch::is_aarch64_feature_detected!("aes") {
                true => "using vmull hardware support",
                false => "vmull support not detected",
            },
        );
    }
    let _ = algorithm;
    said
}

#[cfg(target_arch = "x86_64")]
fn x86_feature(name: &str) -> bool {
    match name {
        "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
        "avx512bw" => std::arch::is_x86_feature_detected!("avx512bw"),
        "vpclmulqdq" => std::arch::is_x86_feature_detected!("vpclmulqdq"),
        "avx2" => std::arch::is_x86_feature_detected!("avx2"),
        "avx" => std::arch::is_x86_feature_detected!("avx"),
        _ => std::arch::is_x86_feature_detected!("pclmulqdq"),
    }
}

/// gnulib's `hwcap_allowed`: false when the last `glibc.cpu.hwcaps=` in
/// `GLIBC_TUNABLES` lists `hwcap` (`-AVX2`), up to the next ':'.
fn hwcap_allowed(hwcap: &str) -> bool {
    let Ok(tunables) = std::env::var("GLIBC_TUNABLES") else {
        return true;
    };
    let key = "glibc.cpu.hwcaps=";
    let Some(at) = tunables.rfind(key) else {
        return true;
    };
    let caps = &tunables[at + key.len()..];
    let caps = caps.split(':').next().unwrap_or("");
    !caps.split(',').any(|cap| cap == hwcap)
}

/// `--format=hashdeep`'s header: the columns, where and how it was made.
pub(super) fn hashdeep_header(run: &mut Run, o: &Options, args: &[Vec<u8>]) {
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut command = b"fastsum".to_vec();
    for arg in args {
        command.push(b' ');
        command.extend(arg.iter().map(|&b| if b == b'\n' { b' ' } else { b }));
    }
    // The algorithms were checked when the options were resolved.
    if let Ok(columns) = fastsum::manifest::hashdeep::Columns::new(o.algorithms.all()) {
        let header = columns.header(fastsum::name::path_bytes(&cwd), &command);
        run.out.stdout_buf().extend_from_slice(&header);
    }
    run.out.commit();
}
