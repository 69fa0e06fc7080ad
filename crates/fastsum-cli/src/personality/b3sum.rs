//! The b3sum personality: b3sum 1.8's interface, byte for byte.
//!
//! The argument definitions are b3sum's own (clap derive, same names, help
//! texts and constraints), so `--help` and usage errors come out exactly as
//! b3sum prints them. Hashing goes through fastsum's I/O (bounded memory)
//! rather than mapping the whole file as b3sum does.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use clap::Parser;
use fastsum::manifest::b3sum as manifest;
use fastsum::FileHasher;

use crate::term::output::{Buffering, Output};

const NAME: &str = "b3sum";

#[derive(Parser)]
#[command(name = "b3sum", version = concat!(env!("CARGO_PKG_VERSION"), " (fastsum; b3sum 1.8 compatible)"), max_term_width(100))]
struct Inner {
    /// Files to hash, or checkfiles to check
    ///
    /// When no file is given, or when - is given, read standard input.
    file: Vec<PathBuf>,

    /// Use the keyed mode, reading the 32-byte key from stdin
    #[arg(long, requires("file"))]
    keyed: bool,

    /// Use the key derivation mode, with the given context string
    ///
    /// Cannot be used with --keyed.
    #[arg(long, value_name("CONTEXT"), conflicts_with("keyed"))]
    derive_key: Option<String>,

    /// The number of output bytes, before hex encoding
    #[arg(short, long, default_value_t = blake3::OUT_LEN as u64, value_name("LEN"))]
    length: u64,

    /// The starting output byte offset, before hex encoding
    #[arg(long, default_value_t = 0, value_name("SEEK"))]
    seek: u64,

    /// The maximum number of threads to use
    ///
    /// By default, this is the number of logical cores. If this flag is
    /// omitted, or if its value is 0, RAYON_NUM_THREADS is also respected.
    #[arg(long, value_name("NUM"))]
    num_threads: Option<usize>,

    /// Disable memory mapping
    ///
    /// Currently this also disables multithreading.
    #[arg(long)]
    no_mmap: bool,

    /// Omit filenames in the output
    #[arg(long)]
    no_names: bool,

    /// Write raw output bytes to stdout, rather than hex
    ///
    /// --no-names is implied. In this case, only a single input is allowed.
    #[arg(long)]
    raw: bool,

    /// Output BSD-style checksums: BLAKE3 ([FILE]) = [HASH]
    #[arg(long)]
    tag: bool,

    /// Read BLAKE3 sums from the [FILE]s and check them
    #[arg(
        short,
        long,
        conflicts_with("derive_key"),
        conflicts_with("keyed"),
        conflicts_with("length"),
        conflicts_with("raw"),
        conflicts_with("tag"),
        conflicts_with("no_names")
    )]
    check: bool,

    /// Skip printing OK for each checked file
    ///
    /// Must be used with --check.
    #[arg(long, requires("check"))]
    quiet: bool,
}

struct Run {
    args: Inner,
    base: blake3::Hasher,
    out: Output,
    hasher: FileHasher,
}

impl Run {
    /// b3sum's `hash_path`: the extendable output for one input.
    fn hash_path(&mut self, path: &Path) -> anyhow::Result<blake3::OutputReader> {
        let mut state = self.base.clone();
        if path == Path::new("-") {
            if self.args.keyed {
                bail!("Cannot open `-` in keyed mode");
            }
            self.hasher.read_with(io::stdin().lock(), |chunk| {
                state.update(chunk);
            })?;
        } else {
            let file = File::open(path)?;
            self.hasher.read_with(&file, |chunk| {
                state.update(chunk);
            })?;
        }
        let mut output = state.finalize_xof();
        output.set_position(self.args.seek);
        Ok(output)
    }

    fn hex_output(&self, mut output: blake3::OutputReader, into: &mut Vec<u8>) {
        let mut remaining = self.args.length;
        let mut block = [0u8; 64];
        while remaining > 0 {
            output.fill(&mut block);
            let take = remaining.min(64) as usize;
            for b in &block[..take] {
                into.extend_from_slice(format!("{b:02x}").as_bytes());
            }
            remaining -= take as u64;
        }
    }

    fn hash_one(&mut self, path: &Path) -> anyhow::Result<()> {
        let output = self.hash_path(path)?;
        if self.args.raw {
            let mut raw = vec![0u8; self.args.length as usize];
            let mut output = output;
            output.fill(&mut raw);
            self.out.out(&raw);
            return Ok(());
        }
        let mut line = Vec::new();
        if self.args.no_names {
            self.hex_output(output, &mut line);
            line.push(b'\n');
        } else {
            let lossy = path.to_string_lossy();
            let escaped = lossy.contains(['\\', '\n', '\r']);
            let shown = if escaped {
                line.push(b'\\');
                lossy
                    .replace('\\', "\\\\")
                    .replace('\n', "\\n")
                    .replace('\r', "\\r")
            } else {
                lossy.into_owned()
            };
            if self.args.tag {
                line.extend_from_slice(format!("BLAKE3 ({shown}) = ").as_bytes());
                self.hex_output(output, &mut line);
                line.push(b'\n');
            } else {
                self.hex_output(output, &mut line);
                line.extend_from_slice(format!("  {shown}\n").as_bytes());
            }
        }
        self.out.out(&line);
        Ok(())
    }

    /// b3sum's `check_one_line`; true when the line checks out.
    fn check_line(&mut self, line: &str) -> bool {
        let parsed = match manifest::B3Line::parse(line) {
            Ok(p) => p,
            Err(e) => {
                self.out.err_raw(format!("{NAME}: {e}\n").as_bytes());
                return false;
            }
        };
        let written = if parsed.escaped {
            format!("\\{}", parsed.written_name)
        } else {
            parsed.written_name.clone()
        };
        let found = match self.hash_path(Path::new(&parsed.path)) {
            Ok(mut output) => {
                let mut bytes = [0u8; 32];
                output.fill(&mut bytes);
                bytes
            }
            Err(e) => {
                self.out
                    .out(format!("{written}: FAILED ({e})\n").as_bytes());
                return false;
            }
        };
        // Constant-time, as b3sum compares.
        if blake3::Hash::from(found)
            == blake3::Hash::from_bytes(parsed.expected.as_bytes().try_into().unwrap_or([0; 32]))
        {
            if !self.args.quiet {
                self.out.out(format!("{written}: OK\n").as_bytes());
            }
            true
        } else {
            self.out.out(format!("{written}: FAILED\n").as_bytes());
            false
        }
    }

    fn check_checkfile(&mut self, path: &Path, failed: &mut u64) -> anyhow::Result<()> {
        let reader: Box<dyn Read> = if path == Path::new("-") {
            Box::new(io::stdin())
        } else {
            Box::new(File::open(path)?)
        };
        let mut reader = BufReader::new(reader);
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            if !self.check_line(&line) {
                *failed = failed.saturating_add(1);
            }
        }
    }
}

fn read_key_from_stdin() -> anyhow::Result<[u8; blake3::KEY_LEN]> {
    let mut bytes = Vec::with_capacity(blake3::KEY_LEN + 1);
    let n = io::stdin()
        .lock()
        .take(blake3::KEY_LEN as u64 + 1)
        .read_to_end(&mut bytes)?;
    if n < blake3::KEY_LEN {
        bail!(
            "expected {} key bytes from stdin, found {}",
            blake3::KEY_LEN,
            n
        )
    } else if n > blake3::KEY_LEN {
        bail!("read more than {} key bytes from stdin", blake3::KEY_LEN)
    }
    bytes[..blake3::KEY_LEN].try_into().context("key length")
}

/// Runs the b3sum personality; returns the exit status.
pub fn run(argv: Vec<OsString>) -> i32 {
    let args = Inner::parse_from(argv);
    match run_parsed(args) {
        Ok(status) => status,
        Err(e) => {
            // b3sum's main returns the error: Rust prints it this way.
            let _ = writeln!(io::stderr(), "Error: {e:?}");
            1
        }
    }
}

fn run_parsed(args: Inner) -> anyhow::Result<i32> {
    let files: Vec<PathBuf> = if args.file.is_empty() {
        vec!["-".into()]
    } else {
        args.file.clone()
    };
    if args.raw && files.len() > 1 {
        bail!("Only one filename can be provided when using --raw");
    }
    let base = if args.keyed {
        blake3::Hasher::new_keyed(&read_key_from_stdin()?)
    } else if let Some(context) = &args.derive_key {
        blake3::Hasher::new_derive_key(context)
    } else {
        blake3::Hasher::new()
    };
    let mut run = Run {
        args,
        base,
        out: Output::new(Buffering::Line),
        hasher: FileHasher::new(),
    };
    let mut failed = 0u64;
    let result = (|| -> anyhow::Result<()> {
        for path in &files {
            if run.args.check {
                run.check_checkfile(path, &mut failed)?;
            } else if let Err(e) = run.hash_one(path) {
                failed = failed.saturating_add(1);
                run.out
                    .err_raw(format!("{NAME}: {}: {e}\n", path.to_string_lossy()).as_bytes());
            }
        }
        Ok(())
    })();
    let flushed = run.out.finish();
    result?;
    flushed?;
    if run.args.check && failed > 0 {
        let _ = writeln!(
            io::stderr(),
            "{NAME}: WARNING: {failed} computed checksum{} did NOT match",
            if failed == 1 { "" } else { "s" }
        );
    }
    Ok(i32::from(failed > 0))
}
