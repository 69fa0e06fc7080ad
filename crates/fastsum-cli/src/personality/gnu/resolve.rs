//! The settings the command line gave, resolved: `-l` against the
//! algorithm, the read strategy, the conflicts coreutils refuses (in its
//! order and words), and the operands (`-` or `.` when none are given).

use fastsum::manifest::gnu::Family;
use fastsum::pipeline::Order;
use fastsum::{Algorithm, ReadStrategy};

use super::files0::Names;
use super::options::{looks_like_a_cache, Options};
use super::parse::Parsed;
use super::run::Run;
use crate::personality::ToolKind;

/// The options to run with, the operands, and the rest of a
/// `--files0-from` list still to read (its first batch is in the
/// operands); `Err(status)` when a setting cannot be (the message is out).
pub(super) fn resolve(run: &mut Run, parsed: Parsed) -> Result<Resolved, i32> {
    let Parsed {
        mut o,
        length_bits,
        read_size,
        io_mode,
        cache_without_path,
        files0_from,
        update,
        prune,
        part_size,
        operands,
    } = parsed;
    let tool = run.tool;
    let length_given = length_bits.is_some();
    o.tree.algorithm = match tool.kind {
        ToolKind::Cksum => cksum_length(run, &o, length_bits)?,
        _ => match length_bits {
            Some((bits, text)) => with_length(run, o.tree.algorithm, bits, &text)?,
            None => o.tree.algorithm,
        },
    };
    if let Some(size) = part_size {
        in_parts(run, &mut o, size)?;
    }
    refuse_legacy_check(run, &o)?;
    o.tree.strategy = match (io_mode.as_str(), read_size) {
        ("mmap", _) => ReadStrategy::Mmap,
        ("read", size) | ("auto", size @ Some(_)) => ReadStrategy::Read {
            buffer_size: size.unwrap_or(fastsum::ReadStrategy::DEFAULT_BUFFER_SIZE),
        },
        _ => ReadStrategy::Auto,
    };
    if let Some(message) = conflict(&o, tool.kind) {
        return Err(run.usage_error(Some(message)));
    }
    fastsum_combinations(run, &o, length_given)?;
    let update_given = update.is_some();
    if let Some(manifest) = update {
        update_combinations(run, &o)?;
        super::update::adopt(run, &mut o, &manifest)?;
    }
    // hashdeep follows symbolic links, to files and directories: its lists
    // are written (and updated) as it would write them, unless -P (issue
    // 51.10).
    if o.hashdeep && !o.no_follow && !o.check {
        o.tree.walk.follow_links = true;
    }
    let whole = o.check || o.raw || update_given || prune.is_some();
    let (operands, rest) = match files0_from {
        None => (operands, None),
        Some(source) => operands_from(run, &mut o, &source, operands, whole)?,
    };
    if o.raw && operands.len() > 1 {
        run.error(b"the --raw option is not supported with multiple files");
        return Err(run.finish(1));
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
    if let Some(source) = prune {
        super::prune::adopt(run, &mut o, &source, &operands)?;
    }
    if o.stamps && !o.json {
        return Err(run.usage_error(Some("--stamps needs --json (a stamp is part of a record)")));
    }
    o.renderer = renderer(run, &o);
    run.write_error_cause = o.check || !o.tree.algorithm.is_legacy();
    Ok((o, operands, rest))
}

/// What [`resolve`] gives: the options, the operands, and the rest of a
/// `--files0-from` list, read a batch at a time as the run goes.
pub(super) type Resolved = (Options, Vec<Vec<u8>>, Option<Names>);

/// `-c` with cksum's and sum's numbers, which are not digests: refused, as
/// coreutils refuses it; fastsum's own `-c` checks crc32b (`rhash
/// --simple`'s and SFV's CRC-32).
fn refuse_legacy_check(run: &mut Run, o: &Options) -> Result<(), i32> {
    let kind = run.tool.kind;
    let own_crc32b = kind == ToolKind::Fastsum && o.tree.algorithm == Algorithm::Crc32b;
    if o.check
        && o.tree.algorithm.is_legacy()
        && !own_crc32b
        && (kind != ToolKind::Cksum || o.algorithm_specified)
    {
        run.error(b"--check is not supported with --algorithm={bsd,sysv,crc,crc32b}");
        return Err(run.finish(1));
    }
    Ok(())
}

/// `--part-size=SIZE`: the algorithm (each of several `-a`) as S3 keeps it
/// for an upload in parts of SIZE: the ETag for MD5 and s3etag, the
/// composite checksum for CRC-32, CRC-32C, SHA-1 and SHA-256 (issue 54).
fn in_parts(run: &mut Run, o: &mut Options, (size, text): (u64, Vec<u8>)) -> Result<(), i32> {
    let wanted = match o.algorithms.is_empty() {
        true => vec![o.tree.algorithm],
        false => o.algorithms.clone(),
    };
    let mut done = Vec::new();
    for a in wanted {
        let Some(parts) = a.in_parts(size) else {
            let mut m = format!(
                "--part-size={} does not go with {a}: ",
                String::from_utf8_lossy(&text)
            );
            m.push_str(match a {
                Algorithm::Crc64Nvme => "S3 keeps crc64nvme of whole objects only (a multipart upload's full-object CRC is the plain one)",
                _ => "S3 keeps digests of parts for s3etag, md5, crc32, crc32c, sha1 and sha256",
            });
            return Err(run.usage_error(Some(&m)));
        };
        done.push(parts);
    }
    o.tree.algorithm = done[0];
    if !o.algorithms.is_empty() {
        o.algorithms = done;
    }
    Ok(())
}

/// fastsum's own options that do not go with others: several `-a` (one
/// read, tagged lines) and `--max-depth` without `-r`.
fn fastsum_combinations(run: &mut Run, o: &Options, length_given: bool) -> Result<(), i32> {
    if o.algorithms.len() > 1 {
        let refused = [
            (o.check, "-c (each line names its own algorithm)"),
            (o.cache.is_some(), "--cache"),
            (length_given, "-l"),
            (
                o.tag || o.untagged,
                "--tag and --untagged (the lines are tagged)",
            ),
            (o.tree.order == Order::Unordered, "--unordered"),
            (o.tree.walk.directories, "--dirs"),
            (o.stamps, "--stamps"),
        ];
        if let Some((_, what)) = refused.iter().find(|(given, _)| *given) {
            let m = format!("several -a and {what} do not go together");
            return Err(run.usage_error(Some(&m)));
        }
    }
    if o.tree.walk.max_depth.is_some() && !o.tree.recursive && !o.check {
        let m = "the --max-depth option is meaningful only with --recursive";
        return Err(run.usage_error(Some(m)));
    }
    if o.tree.walk.directories {
        dirs_combinations(run, o)?;
    }
    if o.hashdeep && !o.check {
        hashdeep_combinations(run, o)?;
    }
    super::signed::combinations(run, o)?;
    if o.check_format.is_some() && !o.hashdeep && !o.check {
        let m = "--format reads lists in that format with -c; it writes only --format=hashdeep";
        return Err(run.usage_error(Some(m)));
    }
    Ok(())
}

/// `--update=MANIFEST`: the manifest says the shape and the algorithm;
/// a tree is walked in order into it.
fn update_combinations(run: &mut Run, o: &Options) -> Result<(), i32> {
    let refused = [
        (!o.tree.recursive, "the --update option is meaningful only with --recursive"),
        (o.check, "--update and -c do not go together"),
        (o.json || o.hashdeep || o.tag || o.untagged || o.terminator == 0,
         "--update writes the manifest in its own shape: no --json, --format, --tag, --untagged or --zero"),
        (o.algorithms.len() > 1, "--update and several -a do not go together"),
        (o.tree.walk.directories, "--update and --dirs do not go together"),
        (o.tree.order == Order::Unordered, "--update and --unordered do not go together"),
    ];
    run.refuse_first(&refused)?;
    Ok(())
}

/// `--format=hashdeep`: hashdeep's own algorithms, its own lines.
fn hashdeep_combinations(run: &mut Run, o: &Options) -> Result<(), i32> {
    let refused = [
        (
            o.no_follow && o.tree.walk.follow_links,
            "-L and --no-follow do not go together",
        ),
        (o.json, "--format=hashdeep and --json do not go together"),
        (
            o.tree.walk.directories,
            "--format=hashdeep and --dirs do not go together (hashdeep lists files)",
        ),
        (
            o.tag || o.untagged || o.terminator == 0,
            "--format=hashdeep and --tag, --untagged or --zero do not go together",
        ),
    ];
    run.refuse_first(&refused)?;
    let algorithms = o.hashdeep_algorithms();
    if let Err(a) = fastsum::manifest::hashdeep::Columns::new(&algorithms) {
        let m = format!("hashdeep's format has no {a} (md5, sha1 and sha256 only)");
        return Err(run.usage_error(Some(&m)));
    }
    Ok(())
}

/// `--dirs` (a directory digest line after each directory's files) needs
/// the whole sorted walk and a hash algorithm.
fn dirs_combinations(run: &mut Run, o: &Options) -> Result<(), i32> {
    let refused = [
        (
            !o.tree.recursive && !o.check,
            "the --dirs option is meaningful only with --recursive",
        ),
        (
            o.tree.order == Order::Unordered,
            "--dirs and --unordered do not go together (directory digests follow the sorted walk)",
        ),
        (
            o.tree.walk.max_depth.is_some(),
            "--dirs and --max-depth do not go together (a directory cut off has no true digest)",
        ),
    ];
    run.refuse_first(&refused)?;
    if let Some(why) = o.tree.algorithm.directory_digest_refusal() {
        run.error(why.as_bytes());
        return Err(1);
    }
    Ok(())
}

/// `--files0-from=SOURCE`: the operands it lists (none may be given too,
/// as du says): its first batch, and the list to read on unless `whole`
/// asks for every name at once.
fn operands_from(
    run: &mut Run,
    o: &mut Options,
    source: &[u8],
    given: Vec<Vec<u8>>,
    whole: bool,
) -> Result<(Vec<Vec<u8>>, Option<Names>), i32> {
    if let Some(first) = given.first() {
        let mut m = b"extra operand ".to_vec();
        m.extend(run.quoting.quote(first));
        run.error(&m);
        let m = "file operands cannot be combined with --files0-from";
        return Err(run.usage_error(Some(m)));
    }
    let mut list = Names::open(run, source)?;
    let names = match whole {
        true => list.read_all(run, &mut o.operand_errors)?,
        false => list.next_batch(run, &mut o.operand_errors)?,
    };
    if names.is_empty() {
        // Nothing listed: nothing to do (not standard input).
        return Err(run.finish(i32::from(o.operand_errors)));
    }
    o.names_given = true;
    Ok((names, (!list.done()).then_some(list)))
}

/// The renderer for the resolved settings: the tool's line shape, JSON,
/// the terminator, and its name in messages.
fn renderer(run: &Run, o: &Options) -> fastsum::output::render::Renderer {
    use fastsum::output::render::Format;
    let format = match (o.json, o.hashdeep, o.raw) {
        (true, _, _) => Format::Json,
        (false, true, _) => Format::Hashdeep,
        (false, false, true) => Format::Raw,
        _ if o.tagged(run.tool.kind) => Format::Tagged { base64: o.base64 },
        _ => Format::Untagged {
            binary: o.binary == 1,
            base64: o.base64,
        },
    };
    let renderer = fastsum::output::render::Renderer {
        algorithm: o.tree.algorithm,
        format,
        terminator: o.terminator,
        names_given: o.names_given,
        program: run.name.clone(),
        quoting: run.quoting,
        stamps_before: None,
    };
    match o.stamps {
        true => renderer.with_stamps(),
        false => renderer,
    }
}

/// cksum's `-l BITS` (the last one given) checked against `-a` in
/// coreutils 9.10's order and words: the algorithm to hash with (for
/// `-c`, the family's default: each line says its own length).
fn cksum_length(
    run: &mut Run,
    o: &Options,
    length: Option<(u64, Vec<u8>)>,
) -> Result<Algorithm, i32> {
    let family = o.family.unwrap_or(Family::One(Algorithm::Crc));
    let (bits, text) = length.unwrap_or((0, Vec::new()));
    let invalid = |run: &mut Run, then: &[u8]| {
        let mut m = b"invalid length: ".to_vec();
        m.extend(run.quoting.quote(&text));
        run.error(&m);
        run.error(then);
        1
    };
    match family {
        Family::One(_) if bits != 0 => {
            run.error(b"--length is only supported with --algorithm blake2b, sha2, or sha3");
            Err(1)
        }
        Family::One(a) => Ok(a),
        Family::Sha2 | Family::Sha3 => {
            let name = if family == Family::Sha2 {
                "sha2"
            } else {
                "sha3"
            };
            if bits == 0 && text.is_empty() && !o.check {
                let m = format!(
                    "--algorithm={name} requires specifying --length 224, 256, 384, or 512"
                );
                run.error(m.as_bytes());
                return Err(1);
            }
            if (!o.check || !text.is_empty()) && !matches!(bits, 224 | 256 | 384 | 512) {
                let mut then = b"digest length for ".to_vec();
                then.extend(run.quoting.quote(family.tag().as_bytes()));
                then.extend_from_slice(b" must be 224, 256, 384, or 512");
                return Err(invalid(run, &then));
            }
            Ok(member(family, bits))
        }
        Family::Blake2b => {
            if bits > 512 {
                let mut then = b"maximum digest length for ".to_vec();
                then.extend(run.quoting.quote(b"BLAKE2b"));
                then.extend_from_slice(b" is 512 bits");
                return Err(invalid(run, &then));
            }
            if !bits.is_multiple_of(8) {
                return Err(invalid(run, b"length is not a multiple of 8"));
            }
            Ok(member(family, bits))
        }
    }
}

/// The algorithm of `family` with a `bits`-long digest (0: the longest).
fn member(family: Family, bits: u64) -> Algorithm {
    match (family, bits) {
        (Family::Sha2, 224) => Algorithm::Sha224,
        (Family::Sha2, 256) => Algorithm::Sha256,
        (Family::Sha2, 384) => Algorithm::Sha384,
        (Family::Sha3, 224) => Algorithm::Sha3_224,
        (Family::Sha3, 256) => Algorithm::Sha3_256,
        (Family::Sha3, 384) => Algorithm::Sha3_384,
        (Family::Blake2b, 8..=504) => Algorithm::Blake2b {
            output_len: (bits / 8) as u8,
        },
        (family, _) => super::options::default_member(family),
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
        m.extend(run.quoting.quote(text));
        run.error(&m);
        let mut m = b"maximum digest length for ".to_vec();
        m.extend(run.quoting.quote(b"BLAKE2b"));
        m.extend_from_slice(b" is 512 bits");
        run.error(&m);
        return Err(1);
    }
    if !bits.is_multiple_of(8) {
        let mut m = b"invalid length: ".to_vec();
        m.extend(run.quoting.quote(text));
        run.error(&m);
        run.error(b"length is not a multiple of 8");
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

/// The first pair of options coreutils 9.10 refuses together (its order,
/// its words), after fastsum's own, if any.
fn conflict(o: &Options, kind: ToolKind) -> Option<&'static str> {
    let fastsum = kind == ToolKind::Fastsum;
    let walking = o.tree.recursive
        || o.tree.walk.max_depth.is_some()
        || o.tree.order == Order::Unordered
        || o.tree.walk.follow_links
        || o.tree.walk.one_file_system
        // `-c --dirs`: fastsum's own -c checks directory lines only when
        // asked (check_hash::is_directory_line).
        || (o.tree.walk.directories && !(fastsum && o.check))
        || !o.tree.walk.excludes.is_empty();
    let uses = [
        (
            o.ignore_missing,
            "the --ignore-missing option is meaningful only when verifying checksums",
        ),
        (
            o.status_only,
            "the --status option is meaningful only when verifying checksums",
        ),
        (
            o.warn,
            "the --warn option is meaningful only when verifying checksums",
        ),
        (
            o.quiet,
            "the --quiet option is meaningful only when verifying checksums",
        ),
        (
            o.strict,
            "the --strict option is meaningful only when verifying checksums",
        ),
    ];
    if o.json && (o.tag || o.untagged || o.terminator == 0) {
        Some("--json cannot be combined with --tag, --untagged or --zero")
    } else if walking && o.check {
        Some("the --recursive, --max-depth, --dirs, --unordered, --follow, --one-file-system and --exclude options are meaningless when verifying checksums")
    } else if o.cache_stats && o.cache.is_none() {
        Some("the --cache-stats option is meaningful only with --cache")
    } else if o.base64 && o.raw {
        Some("--base64 and --raw are mutually exclusive")
    } else if o.terminator == 0 && o.check && !fastsum {
        Some("the --zero option is not supported when verifying checksums")
    } else if o.tag && o.check {
        Some("the --tag option is meaningless when verifying checksums")
    } else if fastsum && o.untagged && o.check {
        Some("the --untagged option is meaningless when verifying checksums")
    } else if o.binary >= 0 && o.check {
        Some("the --binary and --text options are meaningless when verifying checksums")
    } else if let Some(&(_, message)) = uses.iter().find(|(given, _)| *given && !o.check) {
        Some(message)
    } else if o.binary == 0 && (o.tag || (kind == ToolKind::Cksum && !o.untagged)) {
        Some(match kind {
            ToolKind::Cksum => "--text mode is only supported with --untagged",
            _ => "--tag does not support --text mode",
        })
    } else {
        None
    }
}

/// `--cache x.sqlite` hashes x.sqlite: the path of an optional argument
/// goes after `=`. Say so when an operand looks like the cache meant.
pub(super) fn warn_of_cache_operands(run: &mut Run, operands: &[Vec<u8>]) {
    for name in operands.iter().filter(|n| looks_like_a_cache(n)) {
        let mut m = b"warning: ".to_vec();
        m.extend(run.quoting.quote(name));
        m.extend_from_slice(b" is hashed as a file; to use it as the cache, write --cache=PATH");
        run.error(&m);
    }
}
