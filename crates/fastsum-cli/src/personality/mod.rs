//! Which tool fastsum is: the coreutils tools it imitates, chosen by the
//! name it was invoked under (b3sum and xxhsum are recognised in main.rs).
//! The coreutils tools are fastsum's main mode (`crate::mode`) under
//! their option tables and policy, and `gnu` keeps their `--help` texts;
//! `b3sum` and `xxhsum` imitate those tools.

pub(crate) mod b3sum;
pub(crate) mod gnu;
pub(crate) mod xxhsum;

use fastsum::Algorithm;

/// Which coreutils program is being imitated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tool {
    /// The program's official name (`md5sum`), for help and version text.
    pub name: &'static str,
    /// Its algorithm when none is asked for (the run's own is resolved in
    /// `mode/algorithms.rs`).
    pub default_algorithm: Algorithm,
    /// What sets it apart.
    pub kind: ToolKind,
}

/// The five shapes of the coreutils front end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolKind {
    /// md5sum and the sha*sum tools.
    Fixed,
    /// b2sum: `-l BITS`.
    Blake2,
    /// fastsum itself: `-a ALGORITHM`, and `-l BITS` for blake2b.
    Fastsum,
    /// coreutils 9's `cksum`: the CRC by default, `-a` for the digests,
    /// tagged lines, no `-b`/`-t`.
    Cksum,
    /// `sum`: `-r` (BSD, the default) or `-s` (System V).
    Sum,
}

impl Tool {
    /// The coreutils tool invoked under `name`, if any.
    pub fn from_program_name(name: &str) -> Option<Tool> {
        let (algorithm, kind) = match name {
            "md5sum" => (Algorithm::Md5, ToolKind::Fixed),
            "sha1sum" => (Algorithm::Sha1, ToolKind::Fixed),
            "sha224sum" => (Algorithm::Sha224, ToolKind::Fixed),
            "sha256sum" => (Algorithm::Sha256, ToolKind::Fixed),
            "sha384sum" => (Algorithm::Sha384, ToolKind::Fixed),
            "sha512sum" => (Algorithm::Sha512, ToolKind::Fixed),
            "b2sum" => (Algorithm::BLAKE2B, ToolKind::Blake2),
            "cksum" => (Algorithm::Crc, ToolKind::Cksum),
            "sum" => (Algorithm::Bsd, ToolKind::Sum),
            _ => return None,
        };
        let name = match kind {
            ToolKind::Cksum => "cksum",
            ToolKind::Sum => "sum",
            _ => algorithm.gnu_tool().expect("a GNU tool's own algorithm"),
        };
        Some(Tool {
            name,
            default_algorithm: algorithm,
            kind,
        })
    }

    /// fastsum's own interface.
    pub const FASTSUM: Tool = Tool {
        name: "fastsum",
        default_algorithm: Algorithm::Md5,
        kind: ToolKind::Fastsum,
    };
}
