//! A persistent checksum cache that is never stale.
//!
//! An entry maps (absolute path bytes, algorithm) to a digest, and records
//! the file's identity when it was hashed: type, size, inode, device, mtime
//! and ctime to the nanosecond (a [`FileStamp`]). A lookup succeeds only
//! when the file's current stamp equals the recorded one, so a hit skips
//! the read but never the stat. ctime is the guard that mtime alone is not:
//! `touch -r` or a restored mtime still moves ctime, and a replacement by
//! rename changes the inode.
//!
//! **Racy entries** (git's racy-git problem): a file written in the same
//! timestamp tick as it was hashed can change again without its stamp
//! changing, and a write through a shared mapping moves mtime only when it
//! first dirties a clean page, not again until the page is written back.
//! So an entry is stored only if the file's mtime and ctime are at least
//! `settle_window` older than the moment hashing started (the kernel's
//! dirty expiry plus its writeback interval, 35 s by default),
//! and never for a file system that is not written back (tmpfs, ramfs) or
//! that generates its files; a racy file is simply hashed again next time.
//!
//! The store is SQLite (WAL mode, a busy timeout so concurrent runs share
//! it), rows keyed (algorithm, directory, part), each holding the entries
//! of a range of the directory's names (at most 2,048) as one checked blob
//! (`dir_entries`): a run over a tree loads about one row per directory,
//! and writes back only the rows where it read something, in one
//! transaction; no row's cost grows with its directory. A cache that cannot be read, or was
//! written by another format version, is moved aside and rebuilt; a row
//! whose check fails is ignored: the cache can cost a re-read, never a
//! wrong answer.
//!
//! The way through the module: `store` (the SQLite file) loads a
//! `Snapshot`, in bulk or (for a run's session, `lazy`) a row at a time
//! as the run reaches it, holding a few MiB whatever the tree's
//! size; a `CacheSession` answers lookups from it and collects
//! what the run read; `CachingBatchHasher` is the pipeline stage that
//! puts the session in front of any other stage; a [`CacheRun`] is a
//! command's whole use of the cache, from opening the file to storing
//! what its runs learnt, and the one way in from outside.

#[cfg(feature = "bench-internals")]
pub mod bench;
mod dir_entries;
mod lazy;
mod maintenance;
mod run;
mod session;
mod snapshot;
mod stage;
mod store;
#[cfg(test)]
mod tests;

pub use crate::fs::FileStamp;
// The fuzz targets run with the fuzz harness: in tests with `remote`.
#[cfg(all(test, feature = "remote"))]
pub(crate) use dir_entries::fuzz_row;
pub(crate) use dir_entries::Entry;
pub use maintenance::Summary;
pub use run::CacheRun;
pub(crate) use session::absolute_in;
pub(crate) use session::CacheSession;
pub(crate) use snapshot::Snapshot;
pub(crate) use stage::CachingBatchHasher;
pub(crate) use store::NewEntry;
pub use store::{Cache, RunStats};
