//! The settings the command line gave, resolved: `-l` against the
//! algorithm, the read strategy, the conflicts coreutils refuses (in its
//! order and words), and the operands (`-` or `.` when none are given).

use fastsum::pipeline::Order;
use fastsum::{Algorithm, ReadStrategy};

use super::options::{looks_like_a_cache, Options};
use super::parse::Parsed;
use super::run::Run;
use crate::personality::ToolKind;
use crate::term::quote::quote;

/// The options to run with and the operands; `Err(status)` when a
/// setting cannot be (the message is out).
pub(super) fn resolve(run: &mut Run, parsed: Parsed) -> Result<(Options, Vec<Vec<u8>>), i32> {
    let Parsed {
        mut o,
        length_bits,
        read_size,
        io_mode,
        cache_without_path,
        operands,
    } = parsed;
    let tool = run.tool;
    if o.check
        && o.tree.algorithm.is_legacy()
        && (tool.kind != ToolKind::Cksum || o.algorithm_specified)
    {
        run.error(b"--check is not supported with --algorithm={bsd,sysv,crc}");
        return Err(run.finish(1));
    }

    if let Some((bits, text)) = length_bits {
        o.tree.algorithm = with_length(run, o.tree.algorithm, bits, &text)?;
    }
    o.tree.strategy = match (io_mode.as_str(), read_size) {
        ("mmap", _) => ReadStrategy::Mmap,
        ("read", size) | ("auto", size @ Some(_)) => ReadStrategy::Read {
            buffer_size: size.unwrap_or(fastsum::read::DEFAULT_BUFFER_SIZE),
        },
        _ => ReadStrategy::Auto,
    };
    if let Some(message) = conflict(&o, tool.kind) {
        return Err(run.usage_error(Some(message)));
    }

    if cache_without_path {
        warn_of_cache_operands(run, &operands);
    }
    let operands = match (operands.is_empty(), o.tree.recursive && !o.check) {
        // fastsum -r with no operand walks the working directory (as fd
        // and ripgrep do): `fastsum -r` is `fastsum -r .`.
        (true, true) => vec![b".".to_vec()],
        (true, false) => vec![b"-".to_vec()],
        (false, _) => operands,
    };
    o.renderer = renderer(run, &o);
    Ok((o, operands))
}

/// The renderer for the resolved settings: the tool's line shape, JSON,
/// the terminator, and its name in messages.
fn renderer(run: &Run, o: &Options) -> fastsum::manifest::render::Renderer {
    let style = if o.tagged(run.tool.kind) {
        fastsum::manifest::gnu::LineStyle::Tagged
    } else {
        fastsum::manifest::gnu::LineStyle::Untagged {
            binary: o.binary == 1,
        }
    };
    fastsum::manifest::render::Renderer {
        algorithm: o.tree.algorithm,
        json: o.json,
        style,
        terminator: o.terminator,
        names_given: o.names_given,
        program: run.program.clone(),
        utf8: run.utf8,
    }
}

/// `-l BITS` applied to the algorithm: BLAKE2b's length (0: its default);
/// refused past 512 bits and for any other algorithm, in coreutils' words.
fn with_length(
    run: &mut Run,
    algorithm: Algorithm,
    bits: u64,
    text: &[u8],
) -> Result<Algorithm, i32> {
    if bits > 512 {
        let mut m = b"invalid length: ".to_vec();
        m.extend(quote(text, run.utf8));
        run.error(&m);
        let mut m = b"maximum digest length for ".to_vec();
        m.extend(quote(b"BLAKE2b", run.utf8));
        m.extend_from_slice(b" is 512 bits");
        run.error(&m);
        return Err(1);
    }
    match algorithm {
        _ if bits == 0 => Ok(algorithm),
        Algorithm::Blake2b { .. } => Ok(Algorithm::Blake2b {
            output_len: (bits / 8) as u8,
        }),
        _ => {
            run.error(b"--length is only supported with --algorithm=blake2b");
            Err(1)
        }
    }
}

/// The first pair of options coreutils refuses together (its order, its
/// words), if any.
fn conflict(o: &Options, kind: ToolKind) -> Option<&'static str> {
    let walking = o.tree.recursive
        || o.tree.order == Order::Unordered
        || o.tree.walk.follow_links
        || o.tree.walk.one_file_system
        || !o.tree.walk.excludes.is_empty();
    if o.json && (o.check || o.tag || o.untagged || o.terminator == 0) {
        Some("--json cannot be combined with --check, --tag, --untagged or --zero")
    } else if walking && o.check {
        Some("the --recursive, --unordered, --follow, --one-file-system and --exclude options are meaningless when verifying checksums")
    } else if o.tag && o.binary == 0 {
        Some("--tag does not support --text mode")
    } else if o.terminator == 0 && o.check {
        Some("the --zero option is not supported when verifying checksums")
    } else if o.tag && o.check && kind != ToolKind::Cksum {
        Some("the --tag option is meaningless when verifying checksums")
    } else if o.untagged && o.check && kind == ToolKind::Fastsum {
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
    }
}

/// `--cache x.sqlite` hashes x.sqlite: the path of an optional argument
/// goes after `=`. Say so when an operand looks like the cache meant.
fn warn_of_cache_operands(run: &mut Run, operands: &[Vec<u8>]) {
    for name in operands.iter().filter(|n| looks_like_a_cache(n)) {
        let mut m = b"warning: ".to_vec();
        m.extend(quote(name, run.utf8));
        m.extend_from_slice(b" is hashed as a file; to use it as the cache, write --cache=PATH");
        run.error(&m);
    }
}
