//! Completion scripts for bash, zsh and fish.

use super::{algorithm_names, clap_options, subcommand, subcommands};
use crate::mode::flags::{fastsum_options, DocOption};

/// Every spelling of fastsum's own options, as typed.
fn spellings(options: &[DocOption]) -> Vec<String> {
    let mut words = Vec::new();
    for o in options {
        if let Some(short) = o.short {
            words.push(format!("-{short}"));
        }
        words.push(format!("--{}", o.long));
    }
    words
}

/// Options of a clap subcommand, as typed.
fn clap_spellings(command: &clap::Command) -> Vec<String> {
    let mut words = Vec::new();
    for (long, short, _, _) in clap_options(command) {
        if let Some(short) = short {
            words.push(format!("-{short}"));
        }
        words.push(format!("--{long}"));
    }
    words
}

/// The bash script: `source <(fastsum completions bash)`.
pub fn bash() -> String {
    let options = fastsum_options();
    let takes_value: Vec<String> = options
        .iter()
        .filter(|o| o.value.is_some() && !o.optional_value)
        .flat_map(|o| {
            let mut v = vec![format!("--{}", o.long)];
            v.extend(o.short.map(|s| format!("-{s}")));
            v
        })
        .collect();
    let subcommands: Vec<&str> = subcommands().map(|(n, _)| n).collect();
    // One case a subcommand with options (cache's is written below: it
    // also completes its actions).
    let cases: String = subcommands
        .iter()
        .filter(|&&n| n != "cache")
        .filter_map(|&n| Some((n, subcommand(n)?)))
        .map(|(n, c)| {
            format!(
                "        {n}) opts=\"{}\" ;;\n",
                clap_spellings(&c).join(" ")
            )
        })
        .collect();
    format!(
        r#"# bash completion for fastsum (made by `fastsum completions bash`)
_fastsum() {{
    local cur prev
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    local opts
    case "${{COMP_WORDS[1]}}" in
{cases}        cache)
            if [[ "$cur" != -* && "$prev" != --cache ]]; then
                COMPREPLY=($(compgen -W "stats prune clear" -- "$cur"))
                return 0
            fi
            opts="{cache}" ;;
        completions) COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")); return ;;
        man) return ;;
        *) opts="{options}" ;;
    esac
    case "$prev" in
        -a|--algorithm) COMPREPLY=($(compgen -W "{algorithms}" -- "$cur")); return ;;
        --io) COMPREPLY=($(compgen -W "auto read mmap" -- "$cur")); return ;;
        {takes_value}) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "{subcommands}" -- "$cur") $(compgen -f -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
    return 0
}}
complete -o filenames -o bashdefault -F _fastsum fastsum
"#,
        cases = cases,
        cache = clap_spellings(&crate::cmd::cache::command()).join(" "),
        options = spellings(&options).join(" "),
        algorithms = algorithm_names().join(" "),
        takes_value = takes_value.join("|"),
        subcommands = subcommands.join(" "),
    )
}

/// `text` for a zsh `[...]` description or a fish `-d '...'`.
fn quoted(text: &str, close: char) -> String {
    // An apostrophe cannot be escaped inside a single-quoted word: the
    // typographic one reads the same.
    text.replace('\'', "\u{2019}")
        .replace(close, "")
        .replace(['[', ']'], "")
        .replace(':', "\\:")
}

/// The zsh script: put it in a directory of `$fpath` as `_fastsum`.
pub fn zsh() -> String {
    let mut lines = vec![
        "#compdef fastsum".to_string(),
        "# zsh completion for fastsum (made by `fastsum completions zsh`)".to_string(),
        "_fastsum() {".to_string(),
        "  if (( CURRENT == 2 )) && [[ $words[2] != -* ]]; then".to_string(),
    ];
    let subcommands: Vec<String> = subcommands()
        .map(|(name, what)| format!("'{name}:{}'", quoted(what, '\'')))
        .collect();
    lines.push(format!(
        "    local -a subcommands=({})",
        subcommands.join(" ")
    ));
    lines.push(
        "    _describe -t commands 'fastsum subcommand' subcommands; _files; return".to_string(),
    );
    lines.push("  fi".to_string());
    lines.extend(zsh_subcommands());
    lines.push("  _arguments -s \\".to_string());
    let algorithms = algorithm_names().join(" ");
    for o in fastsum_options() {
        let help = quoted(&o.help, '\'');
        let value = match (&o.value, o.long) {
            (None, _) => String::new(),
            (Some(_), "algorithm") => format!(":algorithm:({algorithms})"),
            (Some(_), "io") => ":mode:(auto read mmap)".to_string(),
            (Some(name), _) => format!(":{}:_files", name.to_lowercase()),
        };
        let long = if o.optional_value {
            format!("--{}=-", o.long)
        } else if o.value.is_some() {
            format!("--{}=", o.long)
        } else {
            format!("--{}", o.long)
        };
        match o.short {
            Some(s) => lines.push(format!(
                "    '(-{s} --{l})'{{-{s},{long}}}'[{help}]{value}' \\",
                l = o.long
            )),
            None => lines.push(format!("    '{long}[{help}]{value}' \\")),
        }
    }
    lines.push("    '*:file:_files'".to_string());
    lines.push("}".to_string());
    lines.push("_fastsum \"$@\"".to_string());
    lines.join("\n") + "\n"
}

/// zsh: after a subcommand's name, its own options (from its clap
/// definition), cache's actions and the shells of `completions`.
fn zsh_subcommands() -> Vec<String> {
    let mut lines = vec!["  case $words[2] in".to_string()];
    for (name, command) in subcommands().filter_map(|(n, _)| Some((n, subcommand(n)?))) {
        lines.push(format!("    {name})"));
        lines.push("      shift words; (( CURRENT-- ))".to_string());
        lines.push("      _arguments -s \\".to_string());
        for (long, short, value, help) in clap_options(&command) {
            let help = quoted(&help, '\'');
            let (spelled, value) = match value {
                Some(v) => (
                    format!("--{long}="),
                    format!(":{}:_files", v.to_lowercase()),
                ),
                None => (format!("--{long}"), String::new()),
            };
            match short {
                Some(s) => lines.push(format!(
                    "        '(-{s} --{long})'{{-{s},{spelled}}}'[{help}]{value}' \\"
                )),
                None => lines.push(format!("        '{spelled}[{help}]{value}' \\")),
            }
        }
        let rest = match name {
            "cache" => "        ':action:(stats prune clear)'",
            _ => "        '*:file:_files'",
        };
        lines.push(rest.to_string());
        lines.push("      return ;;".to_string());
    }
    lines.push("    completions) _values shell bash zsh fish; return ;;".to_string());
    lines.push("    man) return ;;".to_string());
    lines.push("  esac".to_string());
    lines
}

/// The fish script: `fastsum completions fish > ~/.config/fish/completions/fastsum.fish`.
pub fn fish() -> String {
    let mut out =
        String::from("# fish completion for fastsum (made by `fastsum completions fish`)\n");
    let names: Vec<&str> = subcommands().map(|(n, _)| n).collect();
    for (name, what) in subcommands() {
        out.push_str(&format!(
            "complete -c fastsum -n '__fish_use_subcommand' -a {name} -d '{}'\n",
            quoted(what, '\'')
        ));
    }
    let plain = format!("not __fish_seen_subcommand_from {}", names.join(" "));
    for o in fastsum_options() {
        let mut line = format!("complete -c fastsum -n '{plain}' -l {}", o.long);
        if let Some(s) = o.short {
            line.push_str(&format!(" -s {s}"));
        }
        if o.value.is_some() && !o.optional_value {
            line.push_str(" -r");
        }
        match o.long {
            "algorithm" => line.push_str(&format!(" -f -a '{}'", algorithm_names().join(" "))),
            "io" => line.push_str(" -f -a 'auto read mmap'"),
            _ => {}
        }
        line.push_str(&format!(" -d '{}'\n", quoted(&o.help, '\'')));
        out.push_str(&line);
    }
    for (sub, command) in subcommands().filter_map(|(n, _)| Some((n, subcommand(n)?))) {
        for (long, short, value, help) in clap_options(&command) {
            let mut line =
                format!("complete -c fastsum -n '__fish_seen_subcommand_from {sub}' -l {long}");
            if let Some(s) = short {
                line.push_str(&format!(" -s {s}"));
            }
            if value.is_some() {
                line.push_str(" -r");
            }
            line.push_str(&format!(" -d '{}'\n", quoted(&help, '\'')));
            out.push_str(&line);
        }
    }
    out.push_str(
        "complete -c fastsum -n '__fish_seen_subcommand_from cache' -f -a 'stats prune clear'\n",
    );
    out.push_str(
        "complete -c fastsum -n '__fish_seen_subcommand_from completions' -f -a 'bash zsh fish'\n",
    );
    out
}
