//! The manual page and the shell completions, rendered and
//! loaded by the real man, bash, zsh and fish.

use crate::testenv;

use std::process::Command;

use testenv::TestEnv;

/// Every long option `fastsum --help` lists.
fn help_options(env: &TestEnv) -> Vec<String> {
    let help = env.fastsum("fastsum", &[b"--help"], b"").stdout_str();
    let mut options: Vec<String> = help
        .lines()
        .filter(|l| l.trim_start().starts_with('-'))
        .filter_map(|l| {
            let at = l.find("--")?;
            let name: String = l[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            Some(name)
        })
        .collect();
    options.dedup();
    assert!(options.len() >= 25, "{options:?}");
    options
}

/// `fastsum man` as `man` renders it at 80 columns: its exit status, its
/// stdout and its stderr (with `--warnings`).
fn rendered_man(env: &TestEnv) -> std::process::Output {
    let page = env.fastsum("fastsum", &[b"man"], b"");
    assert_eq!(page.status, 0);
    env.file(b"fastsum.1", &page.stdout);
    Command::new("man")
        .args(["--warnings", "-l", "fastsum.1"])
        .current_dir(env.path())
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("man (man-db, installed by scripts/tests/install-peers)")
}

#[test]
fn the_man_page_renders_without_warnings_and_lists_every_option() {
    let env = TestEnv::new();
    let out = rendered_man(&env);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "man warned");
    let text = String::from_utf8_lossy(&out.stdout).replace('\u{2010}', "-");
    // man may hyphenate a long option at a line's end: read it unbroken.
    let text = text.replace("-\n", "-").replace(['\n', ' '], "");
    for option in help_options(&env) {
        assert!(text.contains(&option), "{option} is not in the man page");
    }
    for section in [
        "SYNOPSIS",
        "OPTIONS",
        "SUBCOMMANDS",
        "fastsumbench",
        "ENVIRONMENT",
        "EXITSTATUS",
    ] {
        assert!(text.contains(section), "no {section}");
    }
}

/// Every word `--help` says of an option is in the man page: none cut off
/// (a line of words that starts with `--cache` is not a new option), and
/// an option listed twice (`--format=hashdeep`, `--format=NAME`) keeps both.
#[test]
fn the_man_page_says_all_that_help_says_of_each_option() {
    let env = TestEnv::new();
    let help = env.fastsum("fastsum", &[b"--help"], b"").stdout_str();
    let out = rendered_man(&env);
    let squeeze = |s: &str| -> String {
        // groff breaks a word with U+2010: the word is read whole.
        s.replace("\u{2010}\n", "")
            .replace(['\u{2010}', '\u{2212}'], "-")
            .replace(['\u{2018}', '\u{2019}'], "'")
            .replace(['\u{201c}', '\u{201d}'], "\"")
            .replace("-\n", "-")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    };
    let text = squeeze(&String::from_utf8_lossy(&out.stdout));
    let options = help
        .split_once("Mandatory arguments")
        .and_then(|(_, rest)| rest.split_once("\nALGORITHMS"))
        .map(|(options, _)| options)
        .expect("the options of --help");
    let mut checked = 0;
    for line in options.lines() {
        // The words: after the option's column on its first line, the
        // whole of a continuation line.
        let words = match line.trim_start().starts_with('-') && line.starts_with("  ") {
            true if !line.starts_with("                  ") => match line.find("--") {
                Some(at) => match line[at..].find("  ") {
                    Some(gap) => &line[at + gap..],
                    None => continue,
                },
                None => continue,
            },
            _ if line.starts_with("                        ") => line,
            _ => continue,
        };
        let words = squeeze(words);
        if words.is_empty() {
            continue;
        }
        assert!(text.contains(&words), "the man page lacks: {line}");
        checked += 1;
    }
    assert!(checked > 100, "{checked} lines read from --help");
}

/// What bash's completion function offers for `words`, the last being
/// completed.
fn bash_complete(env: &TestEnv, words: &str) -> String {
    let script = format!(
        "source <({exe} completions bash) && COMP_WORDS=({words}) && \
         COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)) && _fastsum && echo \"${{COMPREPLY[*]}}\"",
        exe = crate::testenv::fastsum_bin()
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .current_dir(env.path())
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn bash_completes_options_algorithms_and_subcommands() {
    let env = TestEnv::new();
    assert_eq!(bash_complete(&env, "fastsum --alg"), "--algorithm");
    assert_eq!(bash_complete(&env, "fastsum --unt"), "--untagged");
    assert_eq!(bash_complete(&env, "fastsum -a xxh1"), "xxh128");
    assert_eq!(bash_complete(&env, "fastsum bench --iter"), "--iterations");
    assert_eq!(bash_complete(&env, "fastsum cache pr"), "prune");
    assert_eq!(bash_complete(&env, "fastsum compl"), "completions");
    // Every option --help lists can be completed.
    let all = bash_complete(&env, "fastsum --");
    for option in help_options(&env) {
        assert!(
            all.split(' ').any(|o| o == option),
            "{option} does not complete"
        );
    }
}

#[test]
fn zsh_and_fish_load_their_scripts() {
    let env = TestEnv::new();
    let zsh = env.fastsum("fastsum", &[b"completions", b"zsh"], b"");
    env.file(b"_fastsum", &zsh.stdout);
    let check = Command::new("zsh")
        .args(["-n", "_fastsum"])
        .current_dir(env.path())
        .output();
    let check = check.expect("zsh (installed by scripts/tests/install-peers)");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(zsh
        .stdout_str()
        .contains("[the digest to compute (default md5)"));

    let fish = env.fastsum("fastsum", &[b"completions", b"fish"], b"");
    env.file(b"fastsum.fish", &fish.stdout);
    let out = Command::new("fish")
        .args(["-c", "source fastsum.fish; complete -C 'fastsum --alg'"])
        .current_dir(env.path())
        .env("HOME", env.path())
        .output()
        .expect("fish (installed by scripts/tests/install-peers)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("--algorithm\t"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_shell_that_is_not_known_is_a_usage_error() {
    let env = TestEnv::new();
    let out = env.fastsum("fastsum", &[b"completions", b"tcsh"], b"");
    assert_eq!(out.status, 2);
    assert_eq!(
        out.stderr_str(),
        "usage: fastsum completions bash|zsh|fish\n"
    );
}

/// Every subcommand `fastsum --help` lists: the indented words under
/// "Subcommands:".
fn help_subcommands(env: &TestEnv) -> Vec<String> {
    let help = env.fastsum("fastsum", &[b"--help"], b"").stdout_str();
    let after = help
        .split("\nSubcommands:\n")
        .nth(1)
        .expect("a Subcommands section");
    after
        .lines()
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn every_subcommand_and_its_options_are_in_help_man_and_every_completion() {
    let env = TestEnv::new();
    let subcommands = help_subcommands(&env);
    for expected in [
        "diff",
        "dupes",
        "remote-command",
        "bench",
        "cache",
        "completions",
        "man",
    ] {
        assert!(
            subcommands.iter().any(|s| s == expected),
            "{expected} not in --help: {subcommands:?}"
        );
    }
    let man = env.fastsum("fastsum", &[b"man"], b"").stdout_str();
    let bash = env
        .fastsum("fastsum", &[b"completions", b"bash"], b"")
        .stdout_str();
    let zsh = env
        .fastsum("fastsum", &[b"completions", b"zsh"], b"")
        .stdout_str();
    let fish = env
        .fastsum("fastsum", &[b"completions", b"fish"], b"")
        .stdout_str();
    for sub in &subcommands {
        assert!(
            man.contains(&format!(".B fastsum {sub}\n")),
            "{sub}: not in the man page's SYNOPSIS"
        );
        assert!(bash.contains(sub), "{sub}: not in bash's completion");
        assert!(
            zsh.contains(&format!("'{sub}:")),
            "{sub}: not in zsh's subcommands"
        );
        assert!(
            fish.contains(&format!("-a {sub} ")),
            "{sub}: not in fish's subcommands"
        );
        // Each option of the subcommand, as its own --help lists it.
        let help = env.fastsum("fastsum", &[sub.as_bytes(), b"--help"], b"");
        if help.status != 0 {
            continue; // completions and man take no options
        }
        for line in help
            .stdout_str()
            .lines()
            .filter(|l| l.trim_start().starts_with('-'))
        {
            let at = line.find("--").unwrap();
            let long: String = line[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if long == "--help" || long == "--version" {
                continue;
            }
            assert!(
                man.contains(&long.replace('-', "\\-")),
                "{sub} {long}: not in the man page"
            );
            assert!(
                bash.contains(&format!(" {long} ")) || bash.contains(&format!(" {long}\"")),
                "{sub} {long}: not in bash's"
            );
            assert!(
                fish.contains(&format!(
                    "__fish_seen_subcommand_from {sub}' -l {}",
                    &long[2..]
                )),
                "{sub} {long}: not in fish's"
            );
            // zsh: in the subcommand's own case, after its name.
            let section = zsh
                .split(&format!("\n    {sub})\n"))
                .nth(1)
                .and_then(|rest| rest.split("return ;;").next())
                .unwrap_or_default();
            assert!(
                [format!("{long}["), format!("{long}="), format!("{long}}}")]
                    .iter()
                    .any(|spelled| section.contains(spelled.as_str())),
                "{sub} {long}: not in zsh's"
            );
        }
    }
}
