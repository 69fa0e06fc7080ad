//! The coreutils personality: `md5sum`, `sha1sum`, `sha224sum`,
//! `sha256sum`, `sha384sum`, `sha512sum`, `b2sum`, and fastsum's own
//! interface, which is the same with `-a ALGORITHM` added.
//!
//! This follows coreutils 9.1 `src/digest.c` step by step: option order and
//! conflicts, which errors end the run and which only fail one file, the
//! per-line check output, the WARNING summaries and the exit status.

use fastsum::pipeline::{self, Order, TreeOptions};
use fastsum::{Algorithm, FileHasher, ReadStrategy};
use std::sync::Arc;

use crate::personality::{Tool, ToolKind};
use crate::term::getopt::Getopt;
use crate::term::output::{Buffering, Output};
use crate::term::quote::{quote, utf8_locale};

mod check;
pub mod documented;
#[cfg(test)]
mod fuzz;
mod hash;
mod help;
mod options;
mod remote;
mod run;

use check::check_file;
use options::*;
use remote::hash_operands_and_remotes;
use run::{open_cache, print_cache_stats, say_notice, CheckCache, Run};

/// The most threads `-j` asks for: far past any core count, and short of
/// the thread limits a machine meets (`-j 20000` failed to spawn).
pub(crate) const MAX_THREADS: usize = 1024;

/// The largest `--read-size`: one buffer per worker is allocated.
const MAX_READ_SIZE: usize = 256 << 20;

/// Runs `tool` with `args` (without `argv[0]`); returns the exit status.
pub fn run(tool: Tool, program: Vec<u8>, args: &[Vec<u8>]) -> i32 {
    let mut run = Run {
        tool,
        program,
        out: Output::new(Buffering::Line),
        utf8: utf8_locale(),
        hasher: FileHasher::new(),
        check_cache: None,
        said_debug: false,
        warn_tag: None,
    };
    let mut o = Options {
        algorithm: tool.algorithm,
        check: false,
        status_only: false,
        warn: false,
        quiet: false,
        strict: false,
        ignore_missing: false,
        tag: false,
        untagged: false,
        binary: -1,
        terminator: b'\n',
        tree: TreeOptions::new(tool.algorithm),
        json: false,
        no_progress: false,
        cache: None,
        cache_stats: false,
        debug: false,
        algorithm_specified: false,
        names_given: false,
        remote: crate::term::remote_options(),
        verbose: false,
    };
    let mut read_size: Option<usize> = None;
    let mut io_mode = "auto".to_string();
    let mut cache_without_path = false;
    let mut length_bits: Option<(u64, Vec<u8>)> = None;
    let specs = specs(tool.kind);
    let mut getopt = Getopt::new(args, &specs);
    for item in getopt.by_ref() {
        let opt = match item {
            Ok(opt) => opt,
            Err(message) => return run.usage_error(Some(&message)),
        };
        let value = opt.value.unwrap_or_default();
        match opt.key {
            "a" => match parse_algorithm(tool.kind, &value) {
                Some(a) => (o.algorithm, o.algorithm_specified) = (a, true),
                None => return invalid_algorithm(&mut run, &value),
            },
            "bsd" => o.algorithm = Algorithm::Bsd,
            "sysv" => o.algorithm = Algorithm::Sysv,
            "debug" => o.debug = true,
            "l" => {
                let Some(bits) = parse_decimal(&value) else {
                    let mut m = b"invalid length: ".to_vec();
                    m.extend(quote(&value, run.utf8));
                    run.error(&m);
                    return 1;
                };
                if bits % 8 != 0 {
                    let mut m = b"invalid length: ".to_vec();
                    m.extend(quote(&value, run.utf8));
                    run.error(&m);
                    run.error(b"length is not a multiple of 8");
                    return 1;
                }
                length_bits = Some((bits, value));
            }
            "r" => o.tree.recursive = true,
            "j" => match parse_decimal(&value).and_then(|n| usize::try_from(n).ok()) {
                Some(0) => o.tree.threads = pipeline::available_threads(),
                Some(n) if n <= MAX_THREADS => o.tree.threads = n,
                _ => return invalid_value(&mut run, "number of threads (0 to 1024)", &value),
            },
            "io-depth" => match parse_decimal(&value).and_then(|n| usize::try_from(n).ok()) {
                Some(n) if n <= 256 => o.tree.io_depth = Some(n),
                _ => return invalid_value(&mut run, "I/O depth (0 to 256)", &value),
            },
            "no-cache-pollution" => o.tree.drop_cold = true,
            "disk" => match std::str::from_utf8(&value)
                .ok()
                .and_then(fastsum::DiskKind::from_name)
            {
                Some(kind) => o.tree.disk = kind,
                None => return invalid_value(&mut run, "disk kind (auto, ssd or hdd)", &value),
            },
            "e" => o.remote.rsh = fastsum::remote::split_command(&String::from_utf8_lossy(&value)),
            "remote-method" => match std::str::from_utf8(&value)
                .ok()
                .and_then(fastsum::remote::Method::from_name)
            {
                Some(method) => o.remote.method = Some(method),
                None => {
                    return invalid_value(
                        &mut run,
                        "remote method (fastsum, coreutils, bsd, perl, python)",
                        &value,
                    )
                }
            },
            "remote-fastsum" => {
                o.remote.remote_fastsum = Some(String::from_utf8_lossy(&value).into_owned())
            }
            "upload-self" => o.remote.upload_self = std::env::current_exe().ok(),
            "v" => o.verbose = true,
            "unordered" => o.tree.order = Order::Unordered,
            "L" => o.tree.walk.follow_links = true,
            "one-file-system" => o.tree.walk.one_file_system = true,
            "exclude" => o
                .tree
                .walk
                .excludes
                .push(String::from_utf8_lossy(&value).into_owned()),
            "json" => o.json = true,
            "no-progress" => o.no_progress = true,
            "cache" => {
                cache_without_path = value.is_empty();
                o.remote.cache = true;
                o.cache = match value.is_empty() {
                    false => Some(fastsum::name::path(&value).into_owned()),
                    true => match fastsum::cache::Cache::default_path() {
                        Some(path) => Some(path),
                        None => {
                            run.error(b"--cache: no $XDG_CACHE_HOME or $HOME to put it in; give --cache=PATH");
                            return 1;
                        }
                    },
                }
            }
            "cache-stats" => o.cache_stats = true,
            "io" => match &value[..] {
                b"auto" | b"read" | b"mmap" => {
                    io_mode = String::from_utf8_lossy(&value).into_owned()
                }
                _ => return invalid_value(&mut run, "I/O mode (auto, read, mmap)", &value),
            },
            "read-size" => match parse_size(&value) {
                Some(n) if n > 0 && n <= MAX_READ_SIZE => read_size = Some(n),
                _ => return invalid_value(&mut run, "read size (1 to 256M)", &value),
            },
            "c" => o.check = true,
            "status" => (o.status_only, o.warn, o.quiet) = (true, false, false),
            "w" => (o.status_only, o.warn, o.quiet) = (false, true, false),
            "quiet" => (o.status_only, o.warn, o.quiet) = (false, false, true),
            "ignore-missing" => o.ignore_missing = true,
            "strict" => o.strict = true,
            "b" | "t" if tool.kind == ToolKind::Cksum => return run.usage_error(None),
            "b" => o.binary = 1,
            "t" => o.binary = 0,
            // cksum has no binary mode for --tag to imply.
            "tag" if tool.kind == ToolKind::Cksum => (o.tag, o.untagged) = (true, false),
            "tag" => (o.tag, o.binary, o.untagged) = (true, 1, false),
            "untagged" => (o.tag, o.untagged) = (false, true),
            "z" => o.terminator = 0,
            "help" => {
                let text = help::gnu_help(tool, &run.program);
                run.out.out(text.as_bytes());
                return run.finish(0);
            }
            "version" => {
                let text = help::version(tool.name);
                run.out.out(text.as_bytes());
                return run.finish(0);
            }
            other => unreachable!("option {other} has no handler"),
        }
    }
    let operands = getopt.into_operands();
    o.names_given = !operands.is_empty();
    if o.check && o.algorithm.is_legacy() && (tool.kind != ToolKind::Cksum || o.algorithm_specified)
    {
        run.error(b"--check is not supported with --algorithm={bsd,sysv,crc}");
        return run.finish(1);
    }

    if let Some((bits, text)) = length_bits {
        if bits > 512 {
            let mut m = b"invalid length: ".to_vec();
            m.extend(quote(&text, run.utf8));
            run.error(&m);
            let mut m = b"maximum digest length for ".to_vec();
            m.extend(quote(b"BLAKE2b", run.utf8));
            m.extend_from_slice(b" is 512 bits");
            run.error(&m);
            return 1;
        }
        if bits != 0 {
            match o.algorithm {
                Algorithm::Blake2b { .. } => {
                    o.algorithm = Algorithm::Blake2b {
                        output_len: (bits / 8) as u8,
                    }
                }
                _ => {
                    run.error(b"--length is only supported with --algorithm=blake2b");
                    return 1;
                }
            }
        }
    }
    o.tree.algorithm = o.algorithm;
    o.tree.strategy = match (io_mode.as_str(), read_size) {
        ("mmap", _) => ReadStrategy::Mmap,
        ("read", size) | ("auto", size @ Some(_)) => ReadStrategy::Read {
            buffer_size: size.unwrap_or(fastsum::read::DEFAULT_BUFFER_SIZE),
        },
        _ => ReadStrategy::Auto,
    };
    let walking = o.tree.recursive
        || o.tree.order == Order::Unordered
        || o.tree.walk.follow_links
        || o.tree.walk.one_file_system
        || !o.tree.walk.excludes.is_empty();
    let conflict = if o.json && (o.check || o.tag || o.untagged || o.terminator == 0) {
        Some("--json cannot be combined with --check, --tag, --untagged or --zero")
    } else if walking && o.check {
        Some("the --recursive, --unordered, --follow, --one-file-system and --exclude options are meaningless when verifying checksums")
    } else if o.tag && o.binary == 0 {
        Some("--tag does not support --text mode")
    } else if o.terminator == 0 && o.check {
        Some("the --zero option is not supported when verifying checksums")
    } else if o.tag && o.check && tool.kind != ToolKind::Cksum {
        Some("the --tag option is meaningless when verifying checksums")
    } else if o.untagged && o.check && tool.kind == ToolKind::Fastsum {
        Some("the --untagged option is meaningless when verifying checksums")
    } else if o.binary >= 0 && o.check {
        Some("the --binary and --text options are meaningless when verifying checksums")
    } else if o.cache_stats && o.cache.is_none() {
        Some("the --cache-stats option is meaningful only with --cache")
    } else if o.ignore_missing && !o.check {
        Some("the --ignore-missing option is meaningful only when verifying checksums")
    } else if o.status_only && !o.check {
        Some("the --status option is meaningful only when verifying checksums")
    } else if o.warn && !o.check {
        Some("the --warn option is meaningful only when verifying checksums")
    } else if o.quiet && !o.check {
        Some("the --quiet option is meaningful only when verifying checksums")
    } else if o.strict && !o.check {
        Some("the --strict option is meaningful only when verifying checksums")
    } else {
        None
    };
    if let Some(message) = conflict {
        return run.usage_error(Some(message));
    }

    if cache_without_path {
        // `--cache x.sqlite` hashes x.sqlite: the path of an optional
        // argument goes after `=`. Say so when an operand looks like the
        // cache the user meant.
        for name in operands.iter().filter(|n| looks_like_a_cache(n)) {
            let mut m = b"warning: ".to_vec();
            m.extend(quote(name, run.utf8));
            m.extend_from_slice(
                b" is hashed as a file; to use it as the cache, write --cache=PATH",
            );
            run.error(&m);
        }
    }
    let operands = match (operands.is_empty(), o.tree.recursive && !o.check) {
        // fastsum -r with no operand walks the working directory (as fd
        // and ripgrep do): `fastsum -r` is `fastsum -r .`.
        (true, true) => vec![b".".to_vec()],
        (true, false) => vec![b"-".to_vec()],
        (false, _) => operands,
    };
    let ok = if o.check {
        if let Some(path) = &o.cache {
            run.check_cache = open_cache(&mut run, path).map(|cache| CheckCache {
                cache,
                sessions: Vec::new(),
            });
        }
        let mut ok = true;
        for name in &operands {
            ok &= check_file(&mut run, &o, name);
        }
        if let Some(state) = run.check_cache.take() {
            let CheckCache {
                mut cache,
                sessions,
            } = state;
            let mut total = fastsum::cache::RunStats::default();
            for (_, session) in sessions {
                let session = Arc::into_inner(session).expect("the run holds the only reference");
                let finished = session.finish(&mut cache);
                say_notice(&mut run, &mut cache);
                match finished {
                    Ok(stats) => {
                        total.hits += stats.hits;
                        total.misses += stats.misses;
                        total.racy_rereads += stats.racy_rereads;
                        total.bytes_read += stats.bytes_read;
                    }
                    Err(e) => run.error(format!("cache: {e}").as_bytes()),
                }
            }
            if o.cache_stats {
                print_cache_stats(&mut run, &total);
            }
        }
        ok
    } else {
        hash_operands_and_remotes(&mut run, &o, &operands)
    };
    run.finish(if ok { 0 } else { 1 })
}
