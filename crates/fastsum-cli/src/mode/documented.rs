//! fastsum's own options as one list for the man page and the shell
//! completions: names and arguments from the option table the parser uses
//! (`options::specs`), words from the `--help` text users read, so neither
//! can drift from the program.

use crate::mode::help::gnu_help;
use crate::mode::options::specs;
use crate::personality::{Tool, ToolKind};
use crate::term::getopt::HasArg;

/// One option of fastsum's own mode.
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
    /// What `--help` says of it (continuation lines joined).
    pub help: String,
}

/// Every option fastsum's own mode accepts, in `--help`'s order.
pub fn fastsum_options() -> Vec<DocOption> {
    let help = gnu_help(Tool::FASTSUM, b"fastsum");
    let described = described_options(&help);
    let mut options: Vec<DocOption> = specs(ToolKind::Fastsum)
        .into_iter()
        .filter_map(|spec| {
            let long = spec.long?;
            let (value, text) = described
                .iter()
                .find(|(name, _, _)| *name == long)
                .map(|(_, value, text)| (value.clone(), text.clone()))
                .unwrap_or_default();
            Some(DocOption {
                short: spec.short.map(char::from),
                long,
                value: match spec.has_arg {
                    HasArg::No => None,
                    _ => Some(value.unwrap_or_else(|| "VALUE".to_string())),
                },
                optional_value: spec.has_arg == HasArg::Optional,
                help: text,
            })
        })
        .collect();
    let place = |o: &DocOption| {
        described
            .iter()
            .position(|(name, _, _)| *name == o.long)
            .unwrap_or(usize::MAX)
    };
    options.sort_by_key(place);
    options
}

/// The options `--help` describes: (long name, value name, words).
fn described_options(help: &str) -> Vec<(&str, Option<String>, String)> {
    let mut out: Vec<(&str, Option<String>, String)> = Vec::new();
    for line in help.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let (Some(start), true) = (trimmed.find("--"), trimmed.starts_with('-')) {
            let rest = &trimmed[start + 2..];
            let end = rest.find([' ', '=', '[']).unwrap_or(rest.len());
            let name = &rest[..end];
            let after = &rest[end..];
            let value = after
                .trim_start_matches('[')
                .strip_prefix('=')
                .map(|v| v.split([' ', ']']).next().unwrap_or("").to_string());
            let words = after
                .split_once("  ")
                .map(|(_, w)| w.trim().to_string())
                .unwrap_or_default();
            out.push((name, value, words));
        } else if indent >= 20 && !trimmed.is_empty() {
            if let Some((_, _, words)) = out.last_mut() {
                words.push(' ');
                words.push_str(trimmed);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option the parser takes is described in `--help`: the man page
    /// and the completions, made from both, miss none.
    #[test]
    fn every_option_in_the_table_is_described() {
        let options = fastsum_options();
        assert!(options.len() >= 25, "{options:?}");
        for option in &options {
            assert!(
                !option.help.is_empty(),
                "--{} has no words in --help",
                option.long
            );
        }
        let algorithm = options.iter().find(|o| o.long == "algorithm").unwrap();
        assert_eq!(algorithm.short, Some('a'));
        assert_eq!(algorithm.value.as_deref(), Some("NAME"));
        let cache = options.iter().find(|o| o.long == "cache").unwrap();
        assert!(cache.optional_value);
        assert!(cache.help.contains("checksum cache"), "{}", cache.help);
    }
}
