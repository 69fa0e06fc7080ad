//! Every option of fastsum's own mode and of the GNU personalities, each
//! declared once (`defs.rs`): its names, its value, the tools that take
//! it, its words in `--help`, and what it does to the parsed command line.
//! From that one table come the getopt table of each tool (`specs`),
//! fastsum's `--help` (`write_help`), the options the man page and the
//! shell completions list (`fastsum_options`), and the options the
//! subcommands share with it (`shared_arg`). Nothing reads the help text
//! back, and an option without a handler does not compile (one concern,
//! though a long file: the table's types and everything made from it).

mod defs;

use crate::mode::algorithms::Chosen;
use crate::mode::options::Options;
use crate::mode::run::Ended;
use crate::mode::run::Run;
use crate::personality::{Tool, ToolKind};
use crate::term::getopt::{HasArg, OptSpec};

pub(super) use defs::FLAGS;

/// What the command line said, before the settings are resolved.
pub(in crate::mode) struct Parsed {
    pub(in crate::mode) o: Options,
    /// `-a`, `-l`, `--part-size`, `--base64`: resolved into
    /// `o.algorithms` (`algorithms.rs`).
    pub(in crate::mode) algorithms: Chosen,
    pub(in crate::mode) read_size: Option<usize>,
    pub(in crate::mode) io_mode: String,
    /// `--cache` without `=PATH`.
    pub(in crate::mode) cache_without_path: bool,
    /// `--files0-from=F`: the operands are F's NUL-terminated names.
    pub(in crate::mode) files0_from: Option<Vec<u8>>,
    /// `--update=MANIFEST`.
    pub(in crate::mode) update: Option<Vec<u8>>,
    /// `--prune-matching=FILE`.
    pub(in crate::mode) prune: Option<Vec<u8>>,
    pub(in crate::mode) operands: Vec<Vec<u8>>,
    /// `--help` or `--version` just read: printed, and the run ends.
    pub(in crate::mode) info: Option<Asked>,
}

/// What `--help` and `--version` ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::mode) enum Asked {
    Help,
    Version,
}

impl Parsed {
    /// Nothing said yet: `tool`'s defaults.
    pub(in crate::mode) fn new(tool: Tool) -> Parsed {
        Parsed {
            o: Options::new(tool),
            algorithms: Chosen::default(),
            read_size: None,
            io_mode: "auto".to_string(),
            cache_without_path: false,
            files0_from: None,
            update: None,
            prune: None,
            operands: Vec::new(),
            info: None,
        }
    }
}

/// What an option does to the command line read so far: `Err(status)`
/// ends the run (a bad value, `--help`).
pub(super) type Apply = fn(&mut Run, &mut Parsed, Vec<u8>) -> Result<(), Ended>;

/// The tools that take an option (a set of [`ToolKind`]s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Tools(u8);

impl Tools {
    pub(super) const FIXED: Tools = Tools(1);
    pub(super) const BLAKE2: Tools = Tools(2);
    pub(super) const FASTSUM: Tools = Tools(4);
    pub(super) const CKSUM: Tools = Tools(8);
    pub(super) const SUM: Tools = Tools(16);
    /// fastsum and coreutils' cksum: `-a`, `--base64`, `--untagged`.
    pub(super) const CKSUM_AND_FASTSUM: Tools = Tools(4 | 8);
    /// The tools with `-l BITS`: b2sum, cksum, fastsum.
    pub(super) const LENGTH: Tools = Tools(2 | 4 | 8);
    /// Every tool that writes and checks lists: all but `sum`.
    pub(super) const CHECKERS: Tools = Tools(1 | 2 | 4 | 8);
    pub(super) const ALL: Tools = Tools(31);

    const fn of(kind: ToolKind) -> Tools {
        match kind {
            ToolKind::Fixed => Tools::FIXED,
            ToolKind::Blake2 => Tools::BLAKE2,
            ToolKind::Fastsum => Tools::FASTSUM,
            ToolKind::Cksum => Tools::CKSUM,
            ToolKind::Sum => Tools::SUM,
        }
    }

    pub(super) const fn has(self, kind: ToolKind) -> bool {
        self.0 & Tools::of(kind).0 != 0
    }
}

/// Where fastsum's `--help` lists an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Section {
    /// What is hashed and how lines are written.
    Digest,
    /// "Many files:" walks, threads, I/O, lists, remote hosts, the cache.
    Many,
    /// The four options coreutils keeps for `-c`.
    Verify,
    /// `--help` and `--version`, in coreutils' narrower layout.
    Info,
}

impl Section {
    /// The lines before the section's first option.
    fn heading(self) -> &'static str {
        match self {
            Section::Digest => {
                "\nMandatory arguments to long options are mandatory for short options too.\n"
            }
            Section::Many => "\nMany files:\n",
            Section::Verify => {
                "\nThe following four options are useful only when verifying checksums:\n"
            }
            Section::Info => "\n",
        }
    }

    /// The column the words start at.
    fn column(self) -> usize {
        match self {
            Section::Info => 20,
            _ => 24,
        }
    }
}

/// The value an option takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Value {
    None,
    /// `--threads=N`, `-j N`.
    Required(&'static str),
    /// Only as `--cache=PATH` (glibc's `optional_argument`).
    Optional(&'static str),
}

/// One entry of `--help`: the value as shown there (`None`: the option's
/// own), and its words, a line each.
#[derive(Clone, Copy, Debug)]
pub(super) struct Text {
    pub(super) shown: Option<&'static str>,
    pub(super) lines: &'static [&'static str],
}

/// One option.
#[derive(Clone, Copy)]
pub(super) struct Flag {
    /// What the parser calls it: the long name, where it has one.
    pub(super) name: &'static str,
    /// Whether `--NAME` is taken (sum's `-r` has no long form).
    pub(super) long: bool,
    /// The short letter, and the tools that take it.
    pub(super) short: Option<(u8, Tools)>,
    pub(super) value: Value,
    pub(super) tools: Tools,
    pub(super) section: Section,
    /// Its entries in fastsum's `--help` (empty: not listed there).
    pub(super) help: &'static [Text],
    /// Its words in the help of the subcommands that share it
    /// ([`shared_arg`]), where its first entry's do not fit them (they
    /// speak of `-c`, or of operands the subcommands do not have).
    pub(super) subcommand_help: Option<&'static str>,
    pub(super) apply: Apply,
}

impl Flag {
    /// `--NAME`, taking no value, for every tool but `sum`, listed in
    /// `section`, doing `apply`.
    pub(super) const fn new(name: &'static str, section: Section, apply: Apply) -> Flag {
        Flag {
            name,
            long: true,
            short: None,
            value: Value::None,
            tools: Tools::CHECKERS,
            section,
            help: &[],
            subcommand_help: None,
            apply,
        }
    }

    /// `-C` too, for every tool that takes the option.
    pub(super) const fn short(mut self, letter: u8) -> Flag {
        self.short = Some((letter, Tools::ALL));
        self
    }

    /// `-C` too, but only for `tools`.
    pub(super) const fn short_in(mut self, letter: u8, tools: Tools) -> Flag {
        self.short = Some((letter, tools));
        self
    }

    /// Only `-C`: no `--NAME`.
    pub(super) const fn short_only(mut self) -> Flag {
        self.long = false;
        self
    }

    pub(super) const fn value(mut self, name: &'static str) -> Flag {
        self.value = Value::Required(name);
        self
    }

    pub(super) const fn optional_value(mut self, name: &'static str) -> Flag {
        self.value = Value::Optional(name);
        self
    }

    pub(super) const fn tools(mut self, tools: Tools) -> Flag {
        self.tools = tools;
        self
    }

    /// Its words in the subcommands' help, where `help`'s do not fit them.
    pub(super) const fn subcommand_help(mut self, words: &'static str) -> Flag {
        self.subcommand_help = Some(words);
        self
    }

    /// Its words in `--help`, a line each.
    pub(super) const fn help(mut self, help: &'static [Text]) -> Flag {
        self.help = help;
        self
    }

    fn short_for(&self, kind: ToolKind) -> Option<u8> {
        self.short
            .and_then(|(letter, tools)| tools.has(kind).then_some(letter))
    }

    fn has_arg(&self) -> HasArg {
        match self.value {
            Value::None => HasArg::No,
            Value::Required(_) => HasArg::Required,
            Value::Optional(_) => HasArg::Optional,
        }
    }
}

/// An entry of `--help` whose value is shown as the option's own.
pub(super) const fn said(lines: &'static [&'static str]) -> Text {
    Text { shown: None, lines }
}

/// The getopt table of `kind`, in the table's order (which is also the
/// order glibc lists an ambiguous prefix's possibilities in).
pub(crate) fn specs(kind: ToolKind) -> Vec<OptSpec> {
    FLAGS
        .iter()
        .filter(|flag| flag.tools.has(kind))
        .map(|flag| OptSpec {
            short: flag.short_for(kind),
            long: flag.long.then_some(flag.name),
            has_arg: flag.has_arg(),
            key: flag.name,
        })
        .collect()
}

/// The option the parser called `key` for `kind`.
pub(super) fn flag(kind: ToolKind, key: &str) -> Option<&'static Flag> {
    FLAGS
        .iter()
        .find(|flag| flag.name == key && flag.tools.has(kind))
}

/// fastsum's options as `--help` lists them, from the mandatory-arguments
/// line to `--version`.
pub(super) fn write_help(out: &mut String) {
    let mut section = None;
    for flag in FLAGS.iter().filter(|f| f.tools.has(ToolKind::Fastsum)) {
        if section != Some(flag.section) {
            out.push_str(flag.section.heading());
            section = Some(flag.section);
        }
        for text in flag.help {
            let mut left = match flag.short_for(ToolKind::Fastsum) {
                Some(letter) => format!("  -{}, --{}", char::from(letter), flag.name),
                None => format!("      --{}", flag.name),
            };
            match (flag.value, text.shown) {
                (Value::None, None) => {}
                (Value::Required(_), Some(shown)) | (Value::None, Some(shown)) => {
                    left.push('=');
                    left.push_str(shown);
                }
                (Value::Required(name), None) => {
                    left.push('=');
                    left.push_str(name);
                }
                (Value::Optional(name), shown) => {
                    left.push_str("[=");
                    left.push_str(shown.unwrap_or(name));
                    left.push(']');
                }
            }
            let column = flag.section.column();
            let pad = column.saturating_sub(left.len()).max(2);
            for (i, line) in text.lines.iter().enumerate() {
                if i == 0 {
                    out.push_str(&left);
                    out.push_str(&" ".repeat(pad));
                } else {
                    out.push_str(&" ".repeat(column + 2));
                }
                out.push_str(line);
                out.push('\n');
            }
        }
    }
}

/// One option of fastsum's own mode, for the man page and the completions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocOption {
    /// `-a`, if it has a short form.
    pub short: Option<char>,
    /// `algorithm` (without the dashes).
    pub long: &'static str,
    /// The value's name (`NAME`, `N`, `PATH`), if it takes one.
    pub value: Option<String>,
    /// Whether the value is optional (`--cache[=PATH]`).
    pub optional_value: bool,
    /// What `--help` says of it (its lines joined).
    pub help: String,
}

/// Every option fastsum's own mode accepts, in `--help`'s order.
pub fn fastsum_options() -> Vec<DocOption> {
    FLAGS
        .iter()
        .filter(|flag| flag.tools.has(ToolKind::Fastsum) && flag.long)
        .map(|flag| DocOption {
            short: flag.short_for(ToolKind::Fastsum).map(char::from),
            long: flag.name,
            value: match flag.value {
                Value::None => None,
                Value::Required(name) | Value::Optional(name) => Some(name.to_string()),
            },
            optional_value: matches!(flag.value, Value::Optional(_)),
            help: flag
                .help
                .iter()
                .flat_map(|text| text.lines.iter().copied())
                .collect::<Vec<_>>()
                .join(" "),
        })
        .collect()
}

/// The option of fastsum's own mode that clap calls `id` (its long name
/// with `_` for `-`), as a subcommand that shares it takes it: its names,
/// its value's name and its words (`subcommand_help`, else its first
/// entry in `--help`) come from its one definition here, so
/// that `diff --exclude` and `fastsum --exclude` cannot drift apart. What
/// the subcommand reads the value as (a `value_parser`, `Append`) and any
/// words of its own (`mut_arg`) are the subcommand's (`cmd/args.rs`).
///
/// # Panics
///
/// When fastsum's own mode has no such option: a mistake in the
/// subcommands' declarations, met by every test that builds a command
/// (`cmd::args`' `every_command_with_shared_options_is_well_formed`).
pub fn shared_arg(id: &'static str) -> clap::Arg {
    let long = id.replace('_', "-");
    let flag = FLAGS
        .iter()
        .find(|f| f.long && f.name == long && f.tools.has(ToolKind::Fastsum))
        .unwrap_or_else(|| panic!("--{long} is not an option of fastsum's own mode"));
    let help: String = match flag.subcommand_help {
        Some(words) => words.to_string(),
        None => {
            let words = flag
                .help
                .first()
                .map(|text| text.lines.join(" "))
                .unwrap_or_default();
            let mut chars = words.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect())
                .unwrap_or_default()
        }
    };
    let mut arg = clap::Arg::new(id).long(flag.name).help(help);
    if let Some(letter) = flag.short_for(ToolKind::Fastsum) {
        arg = arg.short(char::from(letter));
    }
    match flag.value {
        Value::None => arg.action(clap::ArgAction::SetTrue),
        Value::Required(name) => arg.value_name(name).action(clap::ArgAction::Set),
        Value::Optional(name) => arg
            .value_name(name)
            .num_args(0..=1)
            .require_equals(true)
            .action(clap::ArgAction::Set),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KINDS: [ToolKind; 5] = [
        ToolKind::Fixed,
        ToolKind::Blake2,
        ToolKind::Fastsum,
        ToolKind::Cksum,
        ToolKind::Sum,
    ];

    /// Within each tool, every name and letter means one option, and the
    /// parser finds each option of the table by what it calls it.
    #[test]
    fn each_tool_names_each_option_once() {
        for kind in KINDS {
            let specs = specs(kind);
            for (i, a) in specs.iter().enumerate() {
                for b in &specs[i + 1..] {
                    assert_ne!(a.key, b.key, "{kind:?}");
                    if a.long.is_some() {
                        assert_ne!(a.long, b.long, "{kind:?}");
                    }
                    if a.short.is_some() {
                        assert_ne!(a.short, b.short, "{kind:?} --{}", a.key);
                    }
                }
                assert!(flag(kind, a.key).is_some(), "{kind:?} {}", a.key);
            }
        }
    }

    /// Every option fastsum takes is in its `--help`, with words, and the
    /// options only the GNU tools take are not.
    #[test]
    fn every_option_of_fastsum_is_described_in_its_help() {
        let mut help = String::new();
        write_help(&mut help);
        for flag in FLAGS {
            let listed = help.contains(&format!("--{}", flag.name));
            if flag.tools.has(ToolKind::Fastsum) {
                assert!(!flag.help.is_empty(), "--{} has no words", flag.name);
                assert!(listed, "--{} is not in --help", flag.name);
            } else {
                assert!(flag.help.is_empty(), "--{} is not fastsum's", flag.name);
            }
        }
        let options = fastsum_options();
        let algorithm = options.iter().find(|o| o.long == "algorithm").unwrap();
        assert_eq!(algorithm.short, Some('a'));
        assert_eq!(algorithm.value.as_deref(), Some("NAME"));
        let cache = options.iter().find(|o| o.long == "cache").unwrap();
        assert!(cache.optional_value);
        assert!(cache.help.contains("checksum cache"), "{}", cache.help);
    }

    /// Every long option of fastsum's own mode can be shared with a
    /// subcommand: its names and value as the table says, and words.
    #[test]
    fn every_option_of_fastsum_can_be_shared() {
        for flag in FLAGS
            .iter()
            .filter(|f| f.long && f.tools.has(ToolKind::Fastsum))
        {
            let id: &'static str = Box::leak(flag.name.replace('-', "_").into_boxed_str());
            let arg = shared_arg(id);
            assert_eq!(arg.get_long(), Some(flag.name));
            assert_eq!(
                arg.get_short(),
                flag.short_for(ToolKind::Fastsum).map(char::from)
            );
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            assert!(
                help.starts_with(|c: char| !c.is_lowercase()) && help.len() > 10,
                "--{}: {help:?}",
                flag.name
            );
            match flag.value {
                Value::None => assert!(!arg.get_action().takes_values()),
                Value::Required(name) | Value::Optional(name) => {
                    assert_eq!(arg.get_value_names().map(|v| v[0].as_str()), Some(name));
                }
            }
        }
    }

    /// glibc names an ambiguous prefix's possibilities in the table's
    /// order: each GNU tool's must be coreutils 9.11's `long_options`
    /// order (cksum.c, written out here from it), though the table is
    /// declared in fastsum's help order.
    #[test]
    fn gnu_tools_list_ambiguous_prefixes_in_coreutils_order() {
        use crate::term::getopt::Getopt;
        let coreutils = [
            "length",
            "check",
            "ignore-missing",
            "quiet",
            "status",
            "warn",
            "strict",
            "tag",
            "zero",
            "algorithm",
            "base64",
            "debug",
            "raw",
            "untagged",
            "binary",
            "text",
            "sysv",
            "help",
            "version",
        ];
        for kind in [
            ToolKind::Fixed,
            ToolKind::Blake2,
            ToolKind::Cksum,
            ToolKind::Sum,
        ] {
            let specs = specs(kind);
            let longs: Vec<&str> = specs.iter().filter_map(|s| s.long).collect();
            for long in &longs {
                for end in 1..=long.len() {
                    let prefix = &long[..end];
                    let matching: Vec<&str> = coreutils
                        .iter()
                        .copied()
                        .filter(|l| longs.contains(l) && l.starts_with(prefix))
                        .collect();
                    if matching.len() < 2 || matching.contains(&prefix) {
                        continue;
                    }
                    let args = vec![format!("--{prefix}").into_bytes()];
                    let got: Vec<_> = Getopt::new(&args, &specs).collect();
                    let listed: String = matching.iter().map(|l| format!(" '--{l}'")).collect();
                    let want = format!("option '--{prefix}' is ambiguous; possibilities:{listed}");
                    assert_eq!(got, vec![Err(want.into_bytes())], "{kind:?}");
                }
            }
        }
    }
}
