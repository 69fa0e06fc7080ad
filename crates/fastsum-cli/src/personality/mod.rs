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

/// What fastsum's own mode does that the coreutils tools it runs as do
/// not (their behaviour is coreutils', byte for byte): each difference
/// one named question, decided here from the tool, once. The mode asks
/// `run.tool.policy()`, never which tool it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// A refused command line exits 2, as the subcommands' (clap's) do;
    /// coreutils exits 1.
    pub usage_exits_2: bool,
    /// `-q` silences notices in every mode, not only `-c`'s OK lines.
    pub quiet_silences_notices: bool,
    /// A failed operand's message may end in a hint (a mistyped
    /// subcommand, a directory without `-r`).
    pub hints: bool,
    /// The progress bar on a terminal's stderr after a second (`-r`, `-c`).
    pub progress_bar: bool,
    /// No digest of a file that changed while it was read: its stamp
    /// before and after must agree (the coreutils tools print what they
    /// read).
    pub verified_reads: bool,
    /// Files a list names are opened as regular files only, never
    /// waiting (a FIFO, `/dev/zero`); coreutils reads devices too.
    pub lists_name_regular_files: bool,
    /// `s3://` and `HOST:PATH` operands, with `-r`.
    pub remote_operands: bool,
    /// `-c` reads lists as fastsum's own: any tag it knows, its `--json`
    /// and hashdeep entries, a list's format from its first entry, the
    /// algorithm of an untagged list found, signed lists, directories'
    /// lines with `--dirs`, NUL-ended lines with `-z`, names escaped in
    /// report lines; coreutils reads only its tool's lines.
    pub own_lists: bool,
    /// `-a` may be given several times (several digests from one read).
    pub several_algorithms: bool,
    /// `-c` checks crc32b lines (`rhash --simple`'s and SFV's CRC-32),
    /// where coreutils refuses every legacy checksum.
    pub checks_crc32b: bool,
    /// A write error ends the run at the first failed line, as coreutils
    /// does for its checked lines; fastsum reports it at exit.
    pub stops_on_write_error: bool,
    /// A write error found only at exit is said as coreutils' close_stdout
    /// says it, "write error" without a cause.
    pub bare_write_error: bool,
    /// Lines are tagged (`SHA256 (f) = ...`) unless MD5 or `--untagged`:
    /// an untagged digest's length fits several algorithms (64 digits:
    /// SHA-256, BLAKE3, BLAKE2b-256). coreutils' sha*sum write untagged.
    pub tags_by_default: bool,
    /// `-c --untagged` is refused as meaningless, where cksum takes it.
    pub refuses_untagged_check: bool,
    /// `--help` is fastsum's own (subcommands, every option); else the
    /// tool's coreutils text.
    pub own_help: bool,
}

impl Tool {
    /// This tool's [`Policy`]: fastsum's own mode, or coreutils'.
    pub const fn policy(self) -> Policy {
        let own = matches!(self.kind, ToolKind::Fastsum);
        Policy {
            usage_exits_2: own,
            quiet_silences_notices: own,
            hints: own,
            progress_bar: own,
            verified_reads: own,
            lists_name_regular_files: own,
            remote_operands: own,
            own_lists: own,
            several_algorithms: own,
            checks_crc32b: own,
            stops_on_write_error: !own,
            bare_write_error: !own,
            tags_by_default: own,
            refuses_untagged_check: own,
            own_help: own,
        }
    }
}
