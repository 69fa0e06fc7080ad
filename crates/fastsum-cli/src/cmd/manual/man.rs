//! The manual page, `fastsum.1`, in roff.

use super::{algorithm_names, clap_options, subcommand, subcommands};
use crate::mode::flags::fastsum_options;

/// `text` safe in roff: backslashes and hyphens escaped, and a line that
/// would start with a control character guarded.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// An option's heading: `\-a, \-\-algorithm=NAME`.
fn heading(short: Option<char>, long: &str, value: Option<&str>, optional: bool) -> String {
    let mut out = String::from(".TP\n");
    if let Some(s) = short {
        out.push_str(&format!("\\fB\\-{s}\\fR, "));
    }
    out.push_str(&format!("\\fB\\-\\-{}\\fR", roff(long)));
    match (value, optional) {
        (Some(v), true) => out.push_str(&format!("[=\\fI{}\\fR]", roff(v))),
        (Some(v), false) => out.push_str(&format!("=\\fI{}\\fR", roff(v))),
        (None, _) => {}
    }
    out.push('\n');
    out
}

/// The whole page.
pub fn page() -> String {
    let version = env!("CARGO_PKG_VERSION");
    let mut p = String::new();
    p.push_str(&format!(
        ".TH FASTSUM 1 \"\" \"fastsum {version}\" \"User Commands\"\n"
    ));
    p.push_str(".SH NAME\nfastsum \\- fast file checksums that tell you what changed\n");
    p.push_str(".SH SYNOPSIS\n.B fastsum\n[\\fIOPTION\\fR]... [\\fIFILE\\fR]...\n");
    for (name, _) in subcommands() {
        p.push_str(&format!(".br\n.B fastsum {name}\n[\\fIARGS\\fR]...\n"));
    }
    p.push_str(
        ".SH DESCRIPTION\n\
         Print or check file checksums (MD5 by default), on every core, with\n\
         constant memory. Output is byte for byte that of md5sum(1), sha256sum(1),\n\
         b2sum(1), b3sum(1) and xxhsum(1): MD5 lines as md5sum prints them, every\n\
         other algorithm as a BSD\\-tagged line (\\fBSHA256 (f) = ...\\fR) so that\n\
         \\fBfastsum \\-c\\fR knows what each line was written with; \\fB\\-\\-untagged\\fR\n\
         gives the tool's plain line. With \\fB\\-r\\fR whole trees are walked and\n\
         printed sorted by path while the run goes on.\n\
         .PP\n\
         With no FILE, or when FILE is \\-, standard input is read (with \\fB\\-r\\fR\n\
         and no FILE, the working directory is walked).\n",
    );
    p.push_str(".SH OPTIONS\n");
    for o in fastsum_options() {
        p.push_str(&heading(
            o.short,
            o.long,
            o.value.as_deref(),
            o.optional_value,
        ));
        p.push_str(&roff(&o.help));
        p.push('\n');
    }
    p.push_str(".SH ALGORITHMS\n");
    p.push_str(&roff(&algorithm_names().join(", ")));
    p.push_str(
        ".\n\\fBblake2b\\fR takes \\fB\\-l\\fR \\fIBITS\\fR for a shorter digest.\n\
         MD5 and SHA\\-1 of many files are computed in SIMD lanes where the CPU has them.\n",
    );
    p.push_str(".SH SUBCOMMANDS\n");
    for (name, what) in subcommands() {
        p.push_str(&format!(".SS fastsum {name}\n{}.\n", roff(what)));
        let command = subcommand(name);
        if name == "cache" {
            p.push_str(
                "Actions: \\fBstats\\fR (entries, size, last hit rate), \\fBprune\\fR (drop\n\
                 entries whose files are gone), \\fBclear\\fR (drop all). A cache that does\n\
                 not exist is an error, never created.\n",
            );
        }
        if name == "completions" {
            p.push_str("\\fBfastsum completions bash\\fR | \\fBzsh\\fR | \\fBfish\\fR.\n");
        }
        if let Some(after) = command.as_ref().and_then(|c| c.get_after_help()) {
            p.push_str(&format!("{}\n", roff(&after.to_string())));
        }
        for (long, short, value, help) in command.iter().flat_map(clap_options) {
            p.push_str(&heading(short, &long, value.as_deref(), false));
            p.push_str(&roff(&help));
            p.push('\n');
        }
    }
    p.push_str(
        ".SH PERSONALITIES\n\
         Invoked as \\fBmd5sum\\fR, \\fBsha1sum\\fR, \\fBsha224sum\\fR, \\fBsha256sum\\fR,\n\
         \\fBsha384sum\\fR, \\fBsha512sum\\fR, \\fBb2sum\\fR, \\fBcksum\\fR, \\fBsum\\fR,\n\
         \\fBb3sum\\fR or \\fBxxhsum\\fR\n\
         (a link of that name), fastsum is that tool: the same options, output,\n\
         messages and exit codes.\n\
         .SH ENVIRONMENT\n\
         .TP\n\\fBFASTSUM_SIMD\\fR\n\
         The widest SIMD lanes to use: scalar, sse2, avx2, avx2x2, avx512, avx512x2 (x86-64); scalar, neon, neonx2 (aarch64).\n\
         .TP\n\\fBXDG_CACHE_HOME\\fR, \\fBHOME\\fR\n\
         Where the default cache lives.\n\
         .SH FILES\n\
         .TP\n\\fI$XDG_CACHE_HOME/fastsum/cache.sqlite\\fR\n\
         The checksum cache of \\fB\\-\\-cache\\fR.\n\
         .SH EXIT STATUS\n\
         0 if every file was hashed (or checked OK), 1 if any could not be read or\n\
         did not match, 2 for a usage error (an option unknown, a value refused,\n\
         options that do not go together), in the main mode as in the subcommands\n\
         (whose own statuses their help gives: diff's 1 is \\(lqchanges\\(rq). Under\n\
         a personality's name, its own statuses: coreutils' 1 for a usage error.\n\
         .SH SEE ALSO\n\
         md5sum(1), sha256sum(1), b2sum(1), cksum(1), b3sum(1), xxhsum(1)\n",
    );
    p
}
