//! coreutils 9.10's `--help` for md5sum, sha*sum, b2sum, cksum and sum
//! (`usage` in its `src/cksum.c`), with its markup: each option's name in
//! bold, linked to its place in the manual, unless `TERM` is unset, empty
//! or `dumb` (`oputs_` in its `src/system.h`).

use fastsum::Algorithm;

use crate::personality::{Tool, ToolKind};

const MANUAL_URL: &str = "https://www.gnu.org/software/coreutils/manual/coreutils.html";
const PACKAGE_URL: &str = "https://www.gnu.org/software/coreutils/";

/// The help text, as the coreutils 9.10 tool prints it called as `program`.
pub(crate) fn usage(tool: Tool, program: &[u8]) -> String {
    let mut h = Help {
        text: format!(
            "Usage: {} [OPTION]... [FILE]...\n",
            String::from_utf8_lossy(program)
        ),
        markup: markup_wanted(),
    };
    let kind = tool.kind;
    let digest = |a: Algorithm| match a {
        Algorithm::Md5 => ("MD5", 128, "RFC 1321"),
        Algorithm::Sha1 => ("SHA1", 160, "FIPS-180-1"),
        Algorithm::Sha224 => ("SHA224", 224, "RFC 3874"),
        Algorithm::Sha256 => ("SHA256", 256, "FIPS-180-2"),
        Algorithm::Sha384 => ("SHA384", 384, "FIPS-180-2"),
        Algorithm::Sha512 => ("SHA512", 512, "FIPS-180-2"),
        _ => ("BLAKE2b", 512, "RFC 7693"),
    };
    let (label, bits, reference) = digest(tool.default_algorithm);
    match kind {
        ToolKind::Cksum => h.text.push_str("Print or verify checksums.\nBy default use the 32 bit CRC algorithm.\n"),
        ToolKind::Sum => h.text.push_str("Print or check BSD (16-bit) checksums.\nLegacy interface to the cksum utility.\n"),
        _ => h.text.push_str(&format!("Print or check {label} ({bits}-bit) checksums.\nLegacy interface to the cksum utility.\n")),
    }
    h.text
        .push_str("\nWith no FILE, or when FILE is -, read standard input.\n");
    if kind == ToolKind::Sum {
        h.opt(
            "  -r\n",
            "use BSD sum algorithm (the default), use 1K blocks",
        );
        h.opt(
            "  -s, --sysv\n",
            "use System V sum algorithm, use 512 bytes blocks",
        );
    } else {
        digest_options(&mut h, kind);
    }
    h.opt("      --help\n", "display this help and exit");
    h.opt("      --version\n", "output version information and exit");
    match kind {
        ToolKind::Cksum => h.text.push_str(concat!(
            "\nDIGEST determines the digest algorithm and default output format:\n",
            "  sysv      (equivalent to sum -s)\n",
            "  bsd       (equivalent to sum -r)\n",
            "  crc       (equivalent to cksum)\n",
            "  crc32b    (only available through cksum)\n",
            "  md5       (equivalent to md5sum)\n",
            "  sha1      (equivalent to sha1sum)\n",
            "  sha2      (equivalent to sha{224,256,384,512}sum)\n",
            "  sha3      (only available through cksum)\n",
            "  blake2b   (equivalent to b2sum)\n",
            "  sm3       (only available through cksum)\n",
            "\n",
            "When checking, the input should be a former output of this program,\n",
            "or equivalent standalone program.\n",
        )),
        ToolKind::Sum => {}
        _ => {
            h.text.push_str(&format!(
                "\nThe sums are computed as described in {reference}.\n"
            ));
            h.text.push_str(concat!(
                "When checking, the input should be a former output of this program.\n",
                "The default mode is to print a line with: checksum, a space,\n",
                "a character indicating input mode ('*' for binary, ' ' for text\n",
                "or where binary is insignificant), and name for each FILE.\n",
                "\n",
                "There is no difference between binary mode and text mode on GNU systems.\n",
            ));
        }
    }
    h.text.push_str(&ancillary(tool.name));
    h.finish(tool.name)
}

/// The options of the digest tools, in coreutils' order.
fn digest_options(h: &mut Help, kind: ToolKind) {
    let cksum = kind == ToolKind::Cksum;
    if kind != ToolKind::Fixed {
        h.text.push_str(
            "\nMandatory arguments to long options are mandatory for short options too.\n",
        );
    }
    if cksum {
        h.opt(
            "  -a, --algorithm=TYPE\n",
            "select the digest type to use.  See DIGEST below",
        );
        h.opt(
            "      --base64\n",
            "emit base64-encoded digests, not hexadecimal",
        );
    } else {
        h.opt("  -b, --binary\n", "read in binary mode");
    }
    h.opt(
        "  -c, --check\n",
        "read checksums from the FILEs and check them",
    );
    if kind != ToolKind::Fixed {
        h.opt(
            "  -l, --length=BITS\n",
            "digest length in bits; must not exceed the max size\n         and must be a multiple of 8 for blake2b;\n         must be 224, 256, 384, or 512 for sha2 or sha3",
        );
    }
    if cksum {
        h.opt("      --raw\n", "emit a raw binary digest, not hexadecimal");
        h.opt("      --tag\n", "create a BSD-style checksum (the default)");
        h.opt(
            "      --untagged\n",
            "create a reversed style checksum, without digest type",
        );
    } else {
        h.opt("      --tag\n", "create a BSD-style checksum");
        h.opt("  -t, --text\n", "read in text mode (default)");
    }
    h.opt(
        "  -z, --zero\n",
        "end each output line with NUL, not newline,\n         and disable file name escaping",
    );
    h.text
        .push_str("\nThe following five options are useful only when verifying checksums:\n");
    h.opt(
        "      --ignore-missing\n",
        "don't fail or report status for missing files",
    );
    h.opt(
        "      --quiet\n",
        "don't print OK for each successfully verified file",
    );
    h.opt(
        "      --status\n",
        "don't output anything, status code shows success",
    );
    h.opt(
        "      --strict\n",
        "exit non-zero for improperly formatted checksum lines",
    );
    h.opt(
        "  -w, --warn\n",
        "warn about improperly formatted checksum lines",
    );
    if cksum {
        h.opt("      --debug\n", "indicate which implementation used");
    }
}

/// `emit_ancillary_info`: where to report bugs and read the manual.
fn ancillary(name: &str) -> String {
    let node = match name {
        "sha224sum" | "sha256sum" | "sha384sum" | "sha512sum" => "sha2 utilities".to_string(),
        _ => format!("{name} invocation"),
    };
    let mut s = format!(
        "\nReport bugs to: bug-coreutils@gnu.org\nGNU coreutils home page: <{PACKAGE_URL}>\nGeneral help using GNU software: <https://www.gnu.org/gethelp/>\n"
    );
    // Not said in English locales (said in C, for the manual page).
    let messages = ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "C".into());
    if !messages.starts_with("en_") {
        s.push_str("Report any translation bugs to <https://translationproject.org/team/>\n");
    }
    s.push_str(&format!("Full documentation <{PACKAGE_URL}{name}>\n"));
    s.push_str(&format!(
        "or available locally via: info '(coreutils) {node}'\n"
    ));
    s
}

/// `TERM` unset, empty or `dumb`: plain text.
fn markup_wanted() -> bool {
    std::env::var_os("TERM").is_some_and(|t| !t.is_empty() && t != "dumb")
}

/// A help text being written.
struct Help {
    text: String,
    markup: bool,
}

/// Where an option's link and bold go: the option's line, split.
const OPTION_MARK: char = '\u{1}';

impl Help {
    /// `oputs`: an option's line (`header`, with its indent) and its
    /// description (indented nine columns).
    fn opt(&mut self, header: &str, description: &str) {
        self.text.push(OPTION_MARK);
        self.text.push_str(header);
        self.text.push_str("         ");
        self.text.push_str(description);
        self.text.push('\n');
    }

    /// The text, each option line marked up (or not) as `oputs_` does.
    fn finish(self, name: &str) -> String {
        let url_program = match name {
            "sum" => "sum",
            _ => "cksum",
        };
        let mut out = String::with_capacity(self.text.len() * 2);
        for (i, part) in self.text.split(OPTION_MARK).enumerate() {
            if i == 0 || !self.markup {
                out.push_str(part);
                continue;
            }
            let (line, rest) = part.split_once('\n').unwrap_or((part, ""));
            let option = line.trim_start();
            let indent = &line[..line.len() - option.len()];
            let anchor_len = option.find([',', '=', '[', ' ']).unwrap_or(option.len());
            let anchor = &option[..anchor_len];
            out.push_str(indent);
            if anchor == "--help" || anchor == "--version" {
                out.push_str(&format!(
                    "\x1b]8;;{PACKAGE_URL}{url_program}#{url_program}{anchor}"
                ));
            } else {
                out.push_str(&format!("\x1b]8;;{MANUAL_URL}#{url_program}{anchor}"));
            }
            out.push_str(&format!(
                "\x1b\\\x1b[1m{option}\x1b[0m\x1b]8;;\x1b\\\n{rest}"
            ));
        }
        out
    }
}
