//! `fastsum contained SOURCE... --in ARCHIVE...`: for every file under the
//! sources, whether a file with the same bytes is anywhere in the archives
//! (their union), whatever its name or path: may this tree go, now that
//! its files were copied (renamed, moved, re-sorted) into that one?
//!
//! Cost grows with what can match (`stages.rs`, on `dupes`' walk, stat,
//! `Paths` and edges): sizes first (a source file whose size no archive
//! file has is not contained and is never read; an archive file whose
//! size no source file has is never read either), then the first and
//! the last 4 KiB (XXH3-128), then the whole file, on the candidates of
//! both sides only. The archive index holds a size and a path per archive
//! file of a size some source file has, digests only for the survivors.
//! A manifest archive (`manifests.rs`) is compared in its own algorithm:
//! the source files of a size it lists are hashed in it (every source
//! file, where it lists no sizes: GNU and BSD lines), then its digests
//! are matched against theirs; the list is read twice, never held. A
//! remote tree (`remote.rs`) is hashed on its host and its records
//! matched the same way (they give no sizes: every source file is
//! hashed in the remote's algorithm).
//!
//! The rules where a file is not simply a file's bytes:
//!
//! * an **empty** file is contained when an archive has an empty file
//!   (a tree's file of size 0, a manifest's entry with the empty digest):
//!   the one rule of every size, applied to size 0;
//! * an entry reached by two **overlapping operands** (`a` and `a/b`, one
//!   given twice, a bind mount of another) is one file, counted once;
//! * a **hard link** is a path like any other: two source paths of one
//!   inode are two files, each counted; a source file that is an archive
//!   file's own inode is contained (its bytes are there) without a read;
//! * a **symbolic link** is not a file's bytes: never followed inside a
//!   tree (source or archive), reported as skipped and not counted (an
//!   operand that is a link to a directory is walked, as every command
//!   walks its operands);
//! * a **FIFO, socket or device** is never opened: skipped;
//! * a file that cannot be read, or that changed while the run looked at
//!   it (its stamp, taken before anything was read, differs at the end; or
//!   a read came short), is a problem, never "contained" nor "not
//!   contained"; so is a source whose archive copy changed so. Every
//!   read is of the version its stat named (`dupes::items::is_version_of`):
//!   a FIFO or device put in a file's place is refused, never waited on;
//! * a manifest that gives one path **two digests** holds nothing at that
//!   path (a problem); a list of several digests a file is compared by
//!   all of them at once (`manifest::read::compared_by`).

mod answers;
mod dirs;
mod manifests;
#[cfg(feature = "remote")]
mod remote;
mod remove;
#[cfg(feature = "s3")]
mod s3;
mod stages;

use std::path::{Path, PathBuf};

use crate::algo::Algorithm;
use crate::dupes::scope::Scope;
use crate::dupes::Problem;
use crate::error::Result;
use crate::fs::FileStamp;
use crate::walk::{SpecialKind, WalkOptions};

pub use dirs::WholeDirectory;

/// Where copies are looked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Archive {
    /// A local directory, walked.
    Tree(PathBuf),
    /// A manifest (GNU or BSD lines, fastsum's JSON Lines, hashdeep).
    Manifest(PathBuf),
    /// A tree on another host, `[user@]host:path` as given, hashed there
    /// (as `diff`'s remote side) and matched by its digests.
    #[cfg(feature = "remote")]
    Remote(PathBuf),
    /// Objects in S3 (or a service that speaks its API) below
    /// `s3://bucket/prefix`, as given, decided by every digest S3 keeps
    /// of each (`s3.rs`).
    #[cfg(feature = "s3")]
    S3(PathBuf),
}

impl Archive {
    /// `s3://bucket/prefix` is a bucket's objects, `[user@]host:path` a
    /// remote tree (scp's rule: `./a:b` is local), a directory a tree,
    /// anything else a manifest.
    pub fn of(path: &Path) -> Archive {
        #[cfg(feature = "s3")]
        if crate::s3::S3Url::parse(crate::fs::name::path_bytes(path)).is_some() {
            return Archive::S3(path.to_path_buf());
        }
        #[cfg(feature = "remote")]
        if crate::remote::Remote::parse(crate::fs::name::path_bytes(path)).is_some() {
            return Archive::Remote(path.to_path_buf());
        }
        match path.is_dir() {
            true => Archive::Tree(path.to_path_buf()),
            false => Archive::Manifest(path.to_path_buf()),
        }
    }

    /// The path it was given as.
    pub fn path(&self) -> &Path {
        match self {
            Archive::Tree(p) | Archive::Manifest(p) => p,
            #[cfg(feature = "remote")]
            Archive::Remote(p) => p,
            #[cfg(feature = "s3")]
            Archive::S3(p) => p,
        }
    }
}

/// How to look.
#[derive(Clone, Default)]
pub struct ContainedOptions<'a> {
    /// How the sources and the archive trees are walked (excludes, one
    /// file system; links are never followed, whatever it says).
    pub walk: WalkOptions,
    /// Threads (0: every core).
    pub threads: usize,
    /// What a manifest's untagged lines mean (as `-a` says to `-c`).
    pub algorithm: Option<Algorithm>,
    /// Compare each source file with the tree copy that contains it, byte
    /// for byte, before calling it contained (an S3 object's bytes are
    /// streamed; a manifest's entry is held by its digest: it has no
    /// bytes here).
    pub verify: bool,
    /// Whole-file digests from and to the checksum cache, in the algorithm
    /// it was loaded for (XXH3-128 for the trees' stage; a manifest's own
    /// for its entries): unchanged files on both sides are not read again.
    #[cfg(feature = "cache")]
    pub cache: Option<&'a crate::cache::CacheRun>,
    /// Without the cache there is nothing to borrow.
    #[cfg(not(feature = "cache"))]
    pub _no_cache: std::marker::PhantomData<&'a ()>,
    /// How remote archives are reached (their digests are in
    /// `algorithm`, md5 by default).
    #[cfg(feature = "remote")]
    pub remote: crate::remote::RemoteOptions,
    /// How S3 archives are reached and decided (`download`: an object
    /// whose digests S3 does not give is streamed and hashed here; `cache`:
    /// what S3 said of each object kept there).
    #[cfg(feature = "s3")]
    pub s3: crate::s3::S3Options,
    /// The search is for [`ContainedReport::remove`]: refused before
    /// anything is read when the archives cannot serve it (not all local
    /// directories, or one overlaps a source), so that a refusal costs
    /// nothing and says so at once.
    pub remove: bool,
}

/// Where a contained file's bytes are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchiveCopy {
    /// The archive (its index in the list given).
    pub archive: usize,
    /// The path: on disk for a tree, as listed for a manifest.
    pub path: PathBuf,
    /// Its stamp when it was stat-ed (a tree's file; `None` for a
    /// manifest's entry): what `--remove` checks again before acting.
    pub stamp: Option<FileStamp>,
}

/// One source file's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The path, as walked from its operand.
    pub path: PathBuf,
    /// Its stamp when it was stat-ed (before any byte was read).
    pub stamp: FileStamp,
    /// One archive copy of its bytes; `None`: not contained.
    pub copy: Option<ArchiveCopy>,
}

/// An entry of a source that is not a file's bytes: never opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// Where it is.
    pub path: PathBuf,
    /// What it is.
    pub kind: SpecialKind,
}

/// What a run found.
#[derive(Debug, Default)]
pub struct ContainedReport {
    /// Every source file answered, in byte order of the paths.
    pub verdicts: Vec<Verdict>,
    /// Symbolic links, FIFOs, sockets and devices of the sources.
    pub skipped: Vec<Skipped>,
    /// What could not be read (sources, archives, a manifest's lines), in
    /// path order: each such source file has no verdict.
    pub problems: Vec<Problem>,
    /// The sources and archives searched (what `remove` checks).
    sources: Vec<PathBuf>,
    archives: Vec<Archive>,
    /// Where `remove` may act: under the sources' real paths.
    scope: Scope,
}

/// Files and bytes on each side of the answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Files contained.
    pub contained_files: u64,
    /// Their bytes.
    pub contained_bytes: u64,
    /// Files not contained.
    pub missing_files: u64,
    /// Their bytes.
    pub missing_bytes: u64,
}

impl ContainedReport {
    /// The counts of the verdicts.
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for v in &self.verdicts {
            match v.copy {
                Some(_) => {
                    s.contained_files += 1;
                    s.contained_bytes += v.stamp.size;
                }
                None => {
                    s.missing_files += 1;
                    s.missing_bytes += v.stamp.size;
                }
            }
        }
        s
    }

    /// The directories of the sources whose every entry (recursively) is
    /// a contained file (see [`WholeDirectory`]), largest first; refused
    /// (`Err`, why) when a source and an archive tree overlap, as
    /// [`ContainedReport::remove`] is.
    pub fn whole_directories(&self) -> std::result::Result<Vec<WholeDirectory>, String> {
        remove::disjoint(&self.sources, &self.archives)?;
        Ok(dirs::whole_directories(self))
    }

    /// Removes every contained source file, with `dupes`' guarantees
    /// (`remove.rs`): refused (`Err`, nothing touched) unless every
    /// archive is a directory that neither holds nor lies in a source.
    /// Each file's outcome goes to `report`; with `dry_run`, nothing is
    /// touched and each says what a run would do.
    pub fn remove(
        &self,
        dry_run: bool,
        report: &mut dyn FnMut(crate::dupes::actions::Acted),
    ) -> std::result::Result<(), String> {
        remove::remove(self, dry_run, report)
    }
}

impl ContainedOptions<'_> {
    /// Answers, for every file under `sources`, whether its bytes are in
    /// one of `archives`. An archive that cannot be read at all is an
    /// error; a file that cannot be read is a problem and the rest goes on.
    pub fn find_contained(
        &self,
        sources: &[PathBuf],
        archives: &[Archive],
    ) -> Result<ContainedReport> {
        if self.remove {
            remove::refused(sources, archives).map_err(|why| {
                let why = format!("--remove refused: {why}");
                crate::Error::new(crate::ErrorKind::Io(std::io::Error::other(why)))
            })?;
        }
        let mut report = stages::run(sources, archives, self)?;
        report.sources = sources.to_vec();
        report.archives = archives.to_vec();
        report.scope = Scope::of(sources);
        Ok(report)
    }
}

#[cfg(test)]
mod tests;
