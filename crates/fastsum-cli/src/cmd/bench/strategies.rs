//! The strategies `fastsum bench` times: in-process ways of reading
//! ([`Slurp`], [`Streamed`], [`Mapped`]), fastsum's own pipeline
//! ([`FastsumDefault`]), and system tools run as child processes
//! ([`External`]).

use std::fs::File;
use std::path::PathBuf;
use std::process::Command;

use fastsum::pipeline::Outcome;
use fastsum::{Algorithm, Digest, Error, FileHasher, ReadStrategy, Source, TreeHasher};

use super::Result;

/// A way of computing one digest per file.
pub trait Strategy: Sync {
    /// Its name in the table.
    fn name(&self) -> String;
    /// The digest of every file of `files`, in order.
    fn digests(&self, algorithm: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>>;
}

/// Read the whole file into memory, then hash it (Go's `ReadFile`, Perl's
/// slurp): memory grows with the file.
pub struct Slurp;

impl Strategy for Slurp {
    fn name(&self) -> String {
        "slurp".into()
    }
    fn digests(&self, algorithm: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
        files
            .iter()
            .map(|path| {
                let bytes = std::fs::read(path).map_err(|e| Error::with_path(path, e))?;
                Ok(algorithm.hash_bytes(&bytes))
            })
            .collect()
    }
}

/// `read(2)` into one reusable buffer of a given size.
pub struct Streamed(pub usize);

impl Strategy for Streamed {
    fn name(&self) -> String {
        format!("read-{}", human_size(self.0))
    }
    fn digests(&self, algorithm: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
        let mut hasher = FileHasher::with_strategy(ReadStrategy::Read {
            buffer_size: self.0,
        });
        files
            .iter()
            .map(|path| {
                let file = File::open(path).map_err(|e| Error::with_path(path, e))?;
                hasher
                    .hash_reader(algorithm, &file)
                    .map_err(|e| Error::with_path(path, e))
            })
            .collect()
    }
}

/// Every file mapped (in bounded windows).
pub struct Mapped;

impl Strategy for Mapped {
    fn name(&self) -> String {
        "mmap".into()
    }
    fn digests(&self, algorithm: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
        let mut hasher = FileHasher::with_strategy(ReadStrategy::Mmap);
        files
            .iter()
            .map(|path| hasher.hash_path(algorithm, path))
            .collect()
    }
}

/// What `fastsum` itself does, on `threads` threads.
pub struct FastsumDefault {
    /// Hashing threads.
    pub threads: usize,
}

impl Strategy for FastsumDefault {
    fn name(&self) -> String {
        if self.threads == 1 {
            "fastsum".into()
        } else {
            format!("fastsum-j{}", self.threads)
        }
    }
    fn digests(&self, algorithm: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
        let operands: Vec<Source> = files.iter().cloned().map(Source::Path).collect();
        let mut digests = Vec::with_capacity(files.len());
        let mut failure = None;
        TreeHasher::new(algorithm)
            .threads(self.threads)
            .run(&operands, |record| match record.outcome {
                Outcome::Hashed(h) => digests.push(h.digest),
                Outcome::Failed(kind) | Outcome::WalkFailed(kind) => {
                    failure.get_or_insert(Error::with_path(record.path, kind));
                }
                Outcome::Skipped(_) | Outcome::Directory(_) => {}
            })?;
        match failure {
            Some(e) => Err(e),
            None => Ok(digests),
        }
    }
}

/// A system tool run as a child process on all the files at once; its
/// output is parsed for one digest per line, in order.
pub struct External {
    /// The name in the table.
    pub label: String,
    /// The program and the arguments before the file names.
    pub command: Vec<String>,
}

impl External {
    /// The peers on `PATH` for `algorithm` (md5sum, `openssl dgst`, b3sum,
    /// xxhsum ...), as they are invoked.
    pub fn peers(algorithm: Algorithm) -> Vec<External> {
        let mut candidates: Vec<(&str, Vec<&str>)> = Vec::new();
        if let Some(tool) = algorithm.gnu_tool() {
            candidates.push((tool, vec![tool]));
        }
        let openssl = match algorithm {
            Algorithm::Md5 => Some("-md5"),
            Algorithm::Sha1 => Some("-sha1"),
            Algorithm::Sha224 => Some("-sha224"),
            Algorithm::Sha256 => Some("-sha256"),
            Algorithm::Sha384 => Some("-sha384"),
            Algorithm::Sha512 => Some("-sha512"),
            Algorithm::Blake2b { output_len: 64 } => Some("-blake2b512"),
            _ => None,
        };
        if let Some(flag) = openssl {
            candidates.push(("openssl", vec!["openssl", "dgst", flag, "-r"]));
        }
        match algorithm {
            Algorithm::Blake3 => candidates.push(("b3sum", vec!["b3sum"])),
            Algorithm::Xxh32 => candidates.push(("xxhsum", vec!["xxhsum", "-H0"])),
            Algorithm::Xxh64 => candidates.push(("xxhsum", vec!["xxhsum", "-H1"])),
            Algorithm::Xxh128 => candidates.push(("xxhsum", vec!["xxhsum", "-H2"])),
            Algorithm::Xxh3 => candidates.push(("xxhsum", vec!["xxhsum", "-H3"])),
            _ => {}
        }
        candidates
            .into_iter()
            .filter(|(program, _)| on_path(program))
            .map(|(label, command)| External {
                label: label.to_string(),
                command: command.into_iter().map(String::from).collect(),
            })
            .collect()
    }

    /// The child process for `files`.
    pub fn command(&self, files: &[PathBuf]) -> Command {
        let mut cmd = Command::new(&self.command[0]);
        cmd.args(&self.command[1..]).args(files);
        cmd
    }
}

/// Files per child process of an [`External`] strategy, as `xargs -n 1000`
/// would pass them: a whole tree does not fit in one argument list.
pub const EXTERNAL_FILES_PER_RUN: usize = 1000;

impl Strategy for External {
    fn name(&self) -> String {
        self.label.clone()
    }
    fn digests(&self, algorithm: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
        let mut digests = Vec::with_capacity(files.len());
        for chunk in files.chunks(EXTERNAL_FILES_PER_RUN) {
            digests.extend(self.digests_of_chunk(algorithm, chunk)?);
        }
        Ok(digests)
    }
}

impl External {
    fn digests_of_chunk(&self, _: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
        let output = self
            .command(files)
            .output()
            .map_err(|e| Error::with_path(&self.command[0], e))?;
        let failed = |why: String| {
            Error::with_path(
                &self.command[0],
                std::io::Error::other(format!("{} {why}", self.label)),
            )
        };
        if !output.status.success() {
            return Err(failed(format!("exited with {}", output.status)));
        }
        let digests: Vec<Digest> = output
            .stdout
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| {
                let line = line.strip_prefix(b"\\").unwrap_or(line);
                // A tagged line (`XXH3 (name) = hex`, xxhsum -H3's only
                // form) has the digest after its last " = ".
                let tag_len = line
                    .iter()
                    .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
                    .count();
                let tagged = line[tag_len..]
                    .starts_with(b" (")
                    .then(|| line.windows(3).rposition(|w| w == b" = "))
                    .flatten()
                    .map(|at| &line[at + 3..]);
                let hex =
                    tagged.unwrap_or_else(|| line.split(|&b| b == b' ').next().unwrap_or_default());
                std::str::from_utf8(hex)
                    .ok()
                    .and_then(|h| Digest::from_hex(h).ok())
            })
            .collect::<Option<_>>()
            .ok_or_else(|| failed("printed a line without a digest".into()))?;
        if digests.len() != files.len() {
            return Err(failed(format!(
                "printed {} digests for {} files",
                digests.len(),
                files.len()
            )));
        }
        Ok(digests)
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// "64B", "4K", "1M": a byte count as a strategy name says it.
pub fn human_size(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}M", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}K", b >> 10),
        b => format!("{b}B"),
    }
}
