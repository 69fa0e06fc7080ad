//! `--help` and `--version` texts.

use fastsum::Algorithm;

use crate::personality::Tool;

/// The `--help` text of `tool` called as `program`: fastsum's own (in the
/// layout of coreutils 9.1's), or coreutils 9.10's (`personality/gnu/usage.rs`).
pub fn gnu_help(tool: Tool, program: &[u8]) -> String {
    let program = String::from_utf8_lossy(program);
    let mut s = format!("Usage: {program} [OPTION]... [FILE]...\n");
    if !tool.policy().own_help {
        return crate::personality::gnu::usage::usage(tool, program.as_bytes());
    }
    s.push_str(&format!(
        "  or:  {program} SUBCOMMAND [ARGS]...  (see {program} help SUBCOMMAND)\n"
    ));
    s.push_str("Print or check file checksums, fast, with constant memory.\n");
    // The subcommands first: they are what a newcomer looks for.
    s.push_str("\nSubcommands:\n");
    for sub in &crate::SUBCOMMANDS {
        s.push_str(&format!("  {:<16}{}\n", sub.name, sub.about));
    }
    s.push_str("A file named as a subcommand is hashed as ./NAME or after --\n");
    s.push_str("(fastsum -- help hashes the file help).\n");
    s.push_str("\nWith no FILE, or when FILE is -, read standard input.\n");
    crate::mode::flags::write_help(&mut s);
    s.push_str("\nALGORITHMS: ");
    s.push_str(&Algorithm::valid_names());
    s.push_str("\n\nPersonalities: invoked through a link named md5sum, sha1sum, sha224sum,\n");
    s.push_str("sha256sum, sha384sum, sha512sum, b2sum, cksum, sum, b3sum or xxhsum, fastsum\n");
    s.push_str("behaves as that tool (scripts/install-links DIR makes the links).\n");
    s.push_str("When checking, BSD-style lines name their algorithm (MD5, SHA256, BLAKE2b,\n");
    s.push_str("BLAKE3, XXH64, ...); other lines use --algorithm.\n");
    s
}

/// The coreutils release whose behaviour the personalities follow (its
/// `-c` quoting, options and messages), named by every `--version`.
pub const GNU_RELEASE: &str = "9.11";

/// `--version`: says honestly what this is, and names the tool it stands in
/// for and the GNU release followed. fastsum's own first line starts with
/// `fastsum ` (the remote side's probe, `remote/script.rs`, looks for it).
pub fn version(name: &str) -> String {
    let v = env!("CARGO_PKG_VERSION");
    if name == "fastsum" {
        let schema = fastsum::output::render::Renderer::JSON_SCHEMA_VERSION;
        format!(
            "fastsum {v} (compatible with GNU coreutils {GNU_RELEASE})\n\
             JSON output schema {schema} (docs/JSON.md)\n"
        )
    } else {
        format!("{name} (fastsum {v}) compatible with GNU coreutils {GNU_RELEASE}\n")
    }
}
