//! The file system as fastsum meets it: `stat` results and the values made
//! from them ([`stat`]), directories kept open so that a batch's files are
//! resolved by name ([`dir`]), and the process's limit on open files
//! ([`limits`]), and what the page cache holds ([`residency`]). Everything here is Linux/Unix system calls behind small
//! safe functions; nothing here hashes.

pub(crate) mod dir;
pub(crate) mod limits;
pub(crate) mod residency;
pub mod stat;

pub use stat::{FileId, FileLen, FileStamp};
