//! Several digests from one read: `fastsum -a md5 -a sha256 [-r] FILE...`
//! (as rhash and hashdeep do). Each file is read once: a small one into a
//! buffer every algorithm absorbs, a large one mapped and hashed by one
//! thread per algorithm over the same pages, so two digests cost about the
//! slower one's time, not the sum. Output: one BSD-tagged
//! line per algorithm and file (as `cksum -a` writes them, so `-c` checks
//! them all), or one JSON record per file with a `digests` object.

use std::fs::File;
use std::io::{self, Read};

use fastsum::walk::{SpecialKind, WalkItem};
use fastsum::{Algorithm, Digest, ErrorKind, Hasher};
use rayon::prelude::*;

use super::options::Options;
use super::run::Run;

/// Files hashed together (in parallel), then printed in order.
const BATCH: usize = 256;
/// Files at least this large get a thread per algorithm.
const THREADED_FROM: u64 = 8 << 20;

/// One input: its name as printed, and where its bytes come from.
enum Input {
    File(Vec<u8>),
    Stdin,
}

/// Hashes every operand (walked with `-r`) with every algorithm of `o`;
/// false if anything failed.
pub(super) fn hash_operands(run: &mut Run, o: &Options, names: &[Vec<u8>]) -> bool {
    let mut ok = true;
    let mut inputs: Vec<Input> = Vec::new();
    let mut symlinks = 0u64;
    for name in names {
        let path = fastsum::name::path(name).into_owned();
        if super::remote::elsewhere(run, o, name) {
            // Never read as a local file named `s3:` or `host:` (it would
            // say "No such file", about the wrong thing).
            ok = false;
            run.file_error(
                name,
                "more than one -a is not available for s3:// and HOST:PATH operands",
            );
        } else if name == b"-" {
            inputs.push(Input::Stdin);
        } else if o.tree.recursive && path.is_dir() {
            let walked = o.tree.walk.walk_sorted(&path, &mut |item| match item {
                WalkItem::File { path, .. } => {
                    inputs.push(Input::File(fastsum::name::path_bytes(&path).to_vec()))
                }
                WalkItem::Special {
                    kind: SpecialKind::Symlink,
                    ..
                } => symlinks += 1,
                WalkItem::Special { path, kind } => {
                    let name = fastsum::name::path_bytes(&path).to_vec();
                    run.file_error(
                        &name,
                        &format!("skipped {} (not a regular file)", kind.describe()),
                    );
                }
                WalkItem::Directory { .. } => {}
                WalkItem::Error(e) => {
                    ok = false;
                    let name = fastsum::name::path_bytes(e.path().unwrap_or(&path)).to_vec();
                    run.file_error(&name, &e.kind().to_string());
                }
            });
            if let Err(e) = walked {
                ok = false;
                run.file_error(name, &e.kind().to_string());
            }
        } else {
            inputs.push(Input::File(name.clone()));
        }
        // Printed as they are done, a batch at a time.
        for batch in inputs.chunks(BATCH) {
            let results: Vec<_> = batch
                .par_iter()
                .map(|input| digests_of(input, o.algorithms.all()))
                .collect();
            for (input, result) in batch.iter().zip(results) {
                ok &= print(run, o, input, result);
            }
        }
        inputs.clear();
    }
    if symlinks > 0 {
        let what = crate::term::count(symlinks, "symbolic link", "symbolic links");
        run.notice(format!("{what} left out (-L follows them)").as_bytes());
    }
    ok
}

/// The digests of one input with each algorithm, and its size.
fn digests_of(input: &Input, algorithms: &[Algorithm]) -> Result<(Vec<Digest>, u64), ErrorKind> {
    match input {
        Input::Stdin => read_all(io::stdin().lock(), algorithms).map_err(ErrorKind::Io),
        Input::File(name) => {
            let file = File::open(&*fastsum::name::path(name)).map_err(ErrorKind::Io)?;
            let meta = file.metadata().map_err(ErrorKind::Io)?;
            match meta.is_file() && meta.len() >= THREADED_FROM && algorithms.len() > 1 {
                true => hash_threaded(name, algorithms),
                false => read_all(file, algorithms).map_err(ErrorKind::Io),
            }
        }
    }
}

/// Reads `reader` to its end, each buffer absorbed by every algorithm in
/// turn (small files: the batch's parallelism is across files).
fn read_all(mut reader: impl Read, algorithms: &[Algorithm]) -> io::Result<(Vec<Digest>, u64)> {
    let mut hashers: Vec<Hasher> = algorithms.iter().map(|&a| Hasher::new(a)).collect();
    let mut buffer = vec![0u8; 256 << 10];
    let mut total = 0u64;
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                total += n as u64;
                for h in &mut hashers {
                    h.update(&buffer[..n]);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((hashers.iter().map(Hasher::digest).collect(), total))
}

/// A large file hashed by one thread per algorithm, each through the
/// library's own reading of it (mapped, so every thread hashes the same
/// page-cache pages, read from the disk once, with no copy and no reader
/// thread between them): the slowest algorithm sets the pace.
fn hash_threaded(name: &[u8], algorithms: &[Algorithm]) -> Result<(Vec<Digest>, u64), ErrorKind> {
    let path = fastsum::name::path(name).into_owned();
    let results: Vec<Result<(Digest, u64), ErrorKind>> = std::thread::scope(|scope| {
        let threads: Vec<_> = algorithms
            .iter()
            .map(|&algorithm| {
                let path = &path;
                scope.spawn(move || {
                    let file = File::open(path).map_err(ErrorKind::Io)?;
                    fastsum::FileHasher::new().hash_file_counted(algorithm, &file)
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a hashing thread does not panic"))
            .collect()
    });
    let mut digests = Vec::with_capacity(algorithms.len());
    let mut size = 0;
    for result in results {
        let (digest, bytes) = result?;
        digests.push(digest);
        size = bytes;
    }
    Ok((digests, size))
}

/// One input's lines (or JSON record), or its error; false for an error.
fn print(
    run: &mut Run,
    o: &Options,
    input: &Input,
    result: Result<(Vec<Digest>, u64), ErrorKind>,
) -> bool {
    let name: &[u8] = match input {
        Input::File(name) => name,
        Input::Stdin => b"-",
    };
    let (digests, size) = match result {
        Ok(done) => done,
        Err(kind) => {
            run.hashing_error(name, &kind);
            return false;
        }
    };
    // The renderer's format: hashdeep's line, a JSON record, or tagged
    // lines (the algorithms were checked when the options were resolved).
    let digests: Vec<(Algorithm, Digest)> =
        o.algorithms.all().iter().copied().zip(digests).collect();
    if let Err(why) = o
        .renderer
        .render_digests(name, size, &digests, run.out.stdout_buf())
    {
        run.file_error(name, why);
        return false;
    }
    run.out.commit();
    true
}
