//! Every console example in README.md and docs/GUIDE.md, run and compared
//! with the output the page shows, so that none can drift.
//!
//! An example is a fenced block opened by ```` ```console ````. In it, a
//! line that starts with `$ ` is a command (one ending in `\` goes on in
//! the next line), and the lines up to the next command are what it
//! prints: standard output and standard error together, as a terminal
//! shows them (stderr goes to the same pipe, so they come in the order
//! they were written). Each block runs in a fresh directory made by
//! `scripts/docs-fixture` (the files the examples name), its commands one
//! after another in one `sh`, as a user would type them: a block sets up
//! what it shows (`echo ... > site/index.html`), and `cd` and `$?` carry
//! to the next command. The shell runs with:
//!
//! - `fastsum` first on `PATH`: the binary this test was built with, then
//!   `/usr/local/bin:/usr/bin:/bin` (only tools every Linux has: no
//!   example may need a peer such as b3sum);
//! - a fresh `HOME` of the block's own, `XDG_CACHE_HOME`,
//!   `XDG_CONFIG_HOME` and `XDG_DATA_HOME` inside it (so `--cache` is the
//!   block's own), no other variable of the caller's (no `FASTSUM_*`,
//!   `AWS_*`, `SSH_*`), `LC_ALL=C.UTF-8`, `TZ=UTC`, no `TERM`, standard
//!   input closed; only `FASTSUM_PORTABLE` is passed on, so that
//!   scripts/test's portable pass runs the examples on that path too;
//! - `FASTSUM_SETTLE_SECONDS=2`, the suites' settle window, and the
//!   fixture made more than 2 s before its block runs: its files are as
//!   settled as a user's files usually are, so the cache trusts them (a
//!   file an example writes is as recent as it would be for the user).
//!
//! The exit status is not compared: an example that means it shows
//! `echo $?`. One normalisation, for the one figure that varies between
//! runs: `read in N s (N MB/s)` (scrub's summary) compares as
//! `read in 0.0 s (0 MB/s)`.
//!
//! Blocks that cannot run in a test (a host, a bucket, root, a key) are
//! fenced ```` ```sh ```` and show no output; no other fence may hold a
//! `$ ` prompt line, so that "every console example is tested" stays exact.
//!
//! `DOCS_EXAMPLES_BLESS=1 cargo test -q --workspace --test cli --
//! docs_examples` writes each command's actual output into the pages
//! instead of failing: review the diff before committing it.

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The pages whose console examples are run.
const PAGES: [&str; 2] = ["README.md", "docs/GUIDE.md"];

/// How long one example command may take before it counts as hung.
const LIMIT: Duration = Duration::from_secs(60);

/// The settle window the examples run with, and how long the fixture
/// waits past it before its block runs.
const SETTLE: &str = "2";
const SETTLED_AFTER: Duration = Duration::from_millis(2200);

/// What a step printed, by page and the page's lines it is shown on.
type Actual = (&'static str, std::ops::Range<usize>, String);

/// One `$ ` command and the output the page shows for it.
struct Step {
    /// The page's line number (from 1) of the `$ `.
    line: usize,
    command: String,
    expected: Vec<String>,
    /// The page's lines (from 0) that hold the expected output.
    output: std::ops::Range<usize>,
}

/// One ```` ```console ```` block.
struct Block {
    page: &'static str,
    line: usize,
    steps: Vec<Step>,
}

fn top() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read_page(page: &str) -> String {
    std::fs::read_to_string(top().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// The console blocks of `text`, and what breaks the rules above.
fn blocks(page: &'static str, text: &str) -> (Vec<Block>, Vec<String>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut problems = Vec::new();
    let mut fence: Option<(String, usize)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        match &fence {
            None if trimmed.starts_with("```") => {
                let info = trimmed.trim_start_matches('`').trim().to_string();
                if info == "console" {
                    let (block, next, mut bad) = console_block(page, &lines, i);
                    blocks.push(block);
                    problems.append(&mut bad);
                    i = next;
                    continue;
                }
                fence = Some((info, i + 1));
            }
            None => {}
            Some(_) if trimmed.starts_with("```") => fence = None,
            Some((info, at)) if trimmed.starts_with("$ ") => {
                problems.push(format!(
                    "{page}:{}: a `$ ` prompt in a ```{info} block (from line {at}): \
                     console examples go in ```console blocks, which are run",
                    i + 1
                ));
            }
            Some(_) => {}
        }
        i += 1;
    }
    if let Some((info, at)) = fence {
        problems.push(format!("{page}:{at}: a ```{info} block is never closed"));
    }
    (blocks, problems)
}

/// Reads the console block whose fence is `lines[open]`: the block, the
/// index of the line after its closing fence, and its problems.
fn console_block(page: &'static str, lines: &[&str], open: usize) -> (Block, usize, Vec<String>) {
    let mut block = Block {
        page,
        line: open + 1,
        steps: Vec::new(),
    };
    let mut problems = Vec::new();
    let mut i = open + 1;
    while i < lines.len() && !lines[i].trim_start().starts_with("```") {
        let line = lines[i];
        if let Some(command) = line.strip_prefix("$ ") {
            let at = i;
            let mut command = command.to_string();
            while command.ends_with('\\') && i + 1 < lines.len() {
                i += 1;
                command.push('\n');
                command.push_str(lines[i]);
            }
            block.steps.push(Step {
                line: at + 1,
                command,
                expected: Vec::new(),
                output: i + 1..i + 1,
            });
        } else if let Some(step) = block.steps.last_mut() {
            step.expected.push(line.to_string());
            step.output.end = i + 1;
        } else {
            problems.push(format!(
                "{page}:{}: output before the block's first `$ ` command",
                i + 1
            ));
        }
        i += 1;
    }
    if i == lines.len() {
        problems.push(format!(
            "{page}:{}: a ```console block is never closed",
            open + 1
        ));
    }
    if block.steps.is_empty() {
        problems.push(format!(
            "{page}:{}: a ```console block with no command",
            open + 1
        ));
    }
    (block, i + 1, problems)
}

/// `read in N s (N MB/s)` as `read in 0.0 s (0 MB/s)` (see the top).
fn normalise(output: &str) -> String {
    output
        .split_inclusive('\n')
        .map(|line| {
            let Some(at) = line.find(" read in ") else {
                return line.to_string();
            };
            let rest = &line[at + " read in ".len()..];
            match rest.find(" MB/s)") {
                Some(end)
                    if rest[..end]
                        .chars()
                        .all(|c| c.is_ascii_digit() || " .s(".contains(c)) =>
                {
                    let after = &rest[end + " MB/s)".len()..];
                    format!("{} read in 0.0 s (0 MB/s){after}", &line[..at])
                }
                _ => line.to_string(),
            }
        })
        .collect()
}

/// A directory holding a `fastsum` that is the binary under test.
fn bin_dir(scratch: &Path) -> PathBuf {
    let bin = scratch.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(crate::testenv::fastsum_bin(), bin.join("fastsum")).unwrap();
    bin
}

/// Makes block `n`'s working directory (the fixture) and its `HOME`.
fn fixture(scratch: &Path, n: usize) -> (PathBuf, PathBuf) {
    let work = scratch.join(format!("{n}/work"));
    let home = scratch.join(format!("{n}/home"));
    std::fs::create_dir_all(&home).unwrap();
    let made = Command::new("sh")
        .arg(top().join("scripts/docs-fixture"))
        .arg(&work)
        .output()
        .expect("sh scripts/docs-fixture");
    assert!(
        made.status.success(),
        "scripts/docs-fixture: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    (work, home)
}

/// Ends each command's output in the block's shell (see [`run_block`]).
const MARK: &str = "@@docs-example-step-done@@";

/// Runs one block's commands as the top of this file says, in one shell
/// (as a user types them: `cd` and `$?` carry to the next command): what
/// each printed (stdout and stderr together), or why it could not be run.
fn run_block(block: &Block, work: &Path, home: &Path, bin: &Path) -> Result<Vec<String>, String> {
    let mut script = String::from("exec 2>&1\n");
    for step in &block.steps {
        // The status is kept across the marker, so `echo $?` sees the
        // example's own.
        let _ = write!(
            script,
            "{}\n__status=$?; printf '\\n%s\\n' '{MARK}'; (exit $__status)\n",
            step.command
        );
    }
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(work)
        .env_clear()
        .env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
        )
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("LC_ALL", "C.UTF-8")
        .env("TZ", "UTC")
        .env("FASTSUM_SETTLE_SECONDS", SETTLE)
        .envs(std::env::var_os("FASTSUM_PORTABLE").map(|v| ("FASTSUM_PORTABLE", v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("sh: {e}"))?;
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let start = Instant::now();
    let limit = LIMIT * block.steps.len() as u32;
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("did not finish within {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let bytes = reader.join().expect("reader");
    let text = String::from_utf8_lossy(&bytes);
    let mut outputs: Vec<String> = text.split(&format!("\n{MARK}\n")).map(normalise).collect();
    // What follows the last marker: nothing, unless the shell ended early
    // (an `exit` in an example).
    let rest = outputs.pop().unwrap_or_default();
    if outputs.len() != block.steps.len() || !rest.is_empty() {
        return Err(format!(
            "the shell ran {} of {} commands: {rest}",
            outputs.len(),
            block.steps.len()
        ));
    }
    Ok(outputs)
}

fn expected_text(step: &Step) -> String {
    step.expected.iter().map(|l| format!("{l}\n")).collect()
}

/// Every block of every page run; the mismatches, and each step's actual
/// output by page and step (for blessing).
fn run_all(blocks: &[Block]) -> (Vec<String>, Vec<Actual>) {
    let scratch = tempfile::tempdir().expect("temp dir");
    let bin = bin_dir(scratch.path());
    let dirs: Vec<(PathBuf, PathBuf)> = (0..blocks.len())
        .map(|n| fixture(scratch.path(), n))
        .collect();
    std::thread::sleep(SETTLED_AFTER);
    let mut problems = Vec::new();
    let mut actuals = Vec::new();
    for (block, (work, home)) in blocks.iter().zip(&dirs) {
        let outputs = match run_block(block, work, home, &bin) {
            Ok(outputs) => outputs,
            Err(why) => {
                problems.push(format!("{}:{}: the block {why}", block.page, block.line));
                continue;
            }
        };
        for (step, actual) in block.steps.iter().zip(outputs) {
            let expected = expected_text(step);
            if actual != expected {
                let mut shown = format!(
                    "{}:{} (block of line {}): `{}`\n--- the page shows\n{expected}--- it printed\n{actual}",
                    block.page, step.line, block.line, step.command
                );
                if !actual.is_empty() && !actual.ends_with('\n') {
                    shown.push_str("\n(no newline at the end)\n");
                }
                problems.push(shown);
            }
            actuals.push((block.page, step.output.clone(), actual));
        }
    }
    (problems, actuals)
}

/// Writes each step's actual output into its page (DOCS_EXAMPLES_BLESS).
fn bless(actuals: &[Actual]) {
    for page in PAGES {
        let text = read_page(page);
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut steps: Vec<_> = actuals.iter().filter(|a| a.0 == page).collect();
        steps.sort_by_key(|a| std::cmp::Reverse(a.1.start));
        for (_, range, actual) in steps {
            let new: Vec<String> = actual.lines().map(str::to_string).collect();
            lines.splice(range.clone(), new);
        }
        let mut out = lines.join("\n");
        out.push('\n');
        std::fs::write(top().join(page), out).unwrap();
    }
}

#[test]
fn every_console_example_prints_what_its_page_shows() {
    let mut all = Vec::new();
    let mut problems = Vec::new();
    for page in PAGES {
        let text = read_page(page);
        let (mut found, mut bad) = blocks(page, &text);
        // The parser must see the pages' examples: a renamed fence would
        // otherwise pass by testing nothing.
        assert!(
            found.len() >= 5,
            "{page}: only {} console blocks found",
            found.len()
        );
        all.append(&mut found);
        problems.append(&mut bad);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let (mismatches, actuals) = run_all(&all);
    if std::env::var_os("DOCS_EXAMPLES_BLESS").is_some() {
        bless(&actuals);
        eprintln!(
            "wrote {} outputs ({} differed)",
            actuals.len(),
            mismatches.len()
        );
        return;
    }
    let mut report = String::new();
    for m in &mismatches {
        let _ = writeln!(report, "{m}");
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} example commands print something else than their page shows \
         (DOCS_EXAMPLES_BLESS=1 writes what they print):\n{report}",
        mismatches.len(),
        actuals.len()
    );
}

/// The parser's rules on a page made for them.
#[test]
fn the_example_parser_reads_commands_outputs_and_refuses_prompts_elsewhere() {
    let page = "intro\n```console\n$ echo a \\\n  b\na b\n$ true\n```\n```sh\n$ rm -rf /\n```\n";
    let (found, problems) = blocks("t.md", page);
    assert_eq!(found.len(), 1);
    let steps = &found[0].steps;
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0].command, "echo a \\\n  b");
    assert_eq!(steps[0].expected, ["a b"]);
    assert_eq!((steps[0].line, steps[0].output.clone()), (3, 4..5));
    assert!(steps[1].expected.is_empty());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("t.md:9: a `$ ` prompt"),
        "{problems:?}"
    );
    let (_, problems) = blocks("t.md", "```console\nstray\n$ x\n");
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert_eq!(
        normalise("x: 53 bytes read in 1.25 s (42 MB/s)\nread in soon\n"),
        "x: 53 bytes read in 0.0 s (0 MB/s)\nread in soon\n"
    );
}
