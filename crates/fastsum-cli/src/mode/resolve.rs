//! The settings the command line gave, resolved: the algorithm (in
//! `algorithms.rs`), the read strategy, the conflicts coreutils refuses (in its
//! order and words), and the operands (`-` or `.` when none are given).

use crate::mode::run::Ended;
use fastsum::pipeline::Order;
use fastsum::Algorithm;
use fastsum::ReadStrategy;

use crate::mode::files0::Names;
use crate::mode::flags::Parsed;
use crate::mode::options::{looks_like_a_cache, Options, ReadMode};
use crate::mode::run::Run;
use crate::personality::{Tool, ToolKind};

/// The options to run with, the operands, and the rest of a
/// `--files0-from` list still to read (its first batch is in the
/// operands); `Err(status)` when a setting cannot be (the message is out).
pub(super) fn resolve(run: &mut Run, parsed: Parsed) -> Result<Resolved, Ended> {
    let Parsed {
        mut o,
        algorithms,
        read_size,
        io_mode,
        cache_without_path,
        files0_from,
        update,
        prune,
        operands,
        info: _,
    } = parsed;
    let tool = run.tool;
    // fastsum's own mode never prints a digest of a file that changed
    // while it was read (its stamp before and after must agree): a torn
    // read's digest is of bytes the file never held at once, and a list
    // made by `-r` is what later runs trust. The GNU, b3sum and xxhsum
    // personalities keep their tools' behaviour.
    o.tree.verify |= tool.policy().verified_reads;
    let length_given = algorithms.length_given();
    o.algorithms = algorithms.resolve(run, tool, o.check)?;
    o.tree.strategy = match (io_mode.as_str(), read_size) {
        ("mmap", _) => ReadStrategy::Mmap,
        ("read", size) | ("auto", size @ Some(_)) => ReadStrategy::Read {
            buffer_size: size.unwrap_or(fastsum::ReadStrategy::DEFAULT_BUFFER_SIZE),
        },
        _ => ReadStrategy::Auto,
    };
    if let Some(message) = conflict(&o, tool) {
        return Err(run.usage_error(Some(message)));
    }
    fastsum_combinations(run, &o, length_given)?;
    let update_given = update.is_some();
    if let Some(manifest) = update {
        update_combinations(run, &o)?;
        crate::mode::update::adopt(run, &mut o, &manifest)?;
    }
    // hashdeep follows symbolic links, to files and directories: its lists
    // are written (and updated) as it would write them, unless -P.
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
        return Err(run.ended_by_finish(1));
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
        crate::mode::prune::adopt(run, &mut o, &source, &operands)?;
    }
    if o.stamps && !o.json {
        return Err(run.usage_error(Some("--stamps needs --json (a stamp is part of a record)")));
    }
    o.renderer = renderer(run, &o);
    run.write_error_cause = o.check || !o.algorithms.one().is_legacy();
    Ok((o, operands, rest))
}

/// What [`resolve`] gives: the options, the operands, and the rest of a
/// `--files0-from` list, read a batch at a time as the run goes.
pub(super) type Resolved = (Options, Vec<Vec<u8>>, Option<Names>);

/// fastsum's own options that do not go with others: several `-a` (one
/// read, tagged lines) and `--max-depth` without `-r`.
fn fastsum_combinations(run: &mut Run, o: &Options, length_given: bool) -> Result<(), Ended> {
    if o.algorithms.several() {
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
        ];
        if let Some((_, what)) = refused.iter().find(|(given, _)| *given) {
            let m = format!("several -a and {what} do not go together");
            return Err(run.usage_error(Some(&m)));
        }
        // cksum's and sum's numbers as a tagged line (`CRC (f) = ...`) are
        // read by nothing: `-c` passed a file on its other lines alone.
        let numbers = o
            .algorithms
            .all()
            .iter()
            .find(|a| matches!(a, Algorithm::Crc | Algorithm::Bsd | Algorithm::Sysv));
        if let Some(legacy) = numbers.filter(|_| !o.json) {
            let m = format!(
                "several -a: {legacy}'s numbers cannot be checked from a checksum line (-c refuses \
                 crc, bsd and sysv, as GNU's cksum does): give --json, or -a crc32b"
            );
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
    crate::mode::check::signed::combinations(run, o)?;
    if o.check_format.is_some() && !o.hashdeep && !o.check {
        let m = "--format reads lists in that format with -c; it writes only --format=hashdeep";
        return Err(run.usage_error(Some(m)));
    }
    Ok(())
}

/// `--update=MANIFEST`: the manifest says the shape and the algorithm;
/// a tree is walked in order into it.
fn update_combinations(run: &mut Run, o: &Options) -> Result<(), Ended> {
    let refused = [
        (!o.tree.recursive, "the --update option is meaningful only with --recursive"),
        (o.check, "--update and -c do not go together"),
        (o.json || o.hashdeep || o.tag || o.untagged || o.terminator == 0 || o.algorithms.base64(),
         "--update writes the manifest in its own shape: no --json, --format, --tag, --untagged, --zero or --base64"),
        (o.algorithms.several(), "--update and several -a do not go together"),
        (o.tree.walk.directories, "--update and --dirs do not go together"),
        (o.tree.order == Order::Unordered, "--update and --unordered do not go together"),
    ];
    run.refuse_first(&refused)?;
    Ok(())
}

/// `--format=hashdeep`: hashdeep's own algorithms, its own lines.
fn hashdeep_combinations(run: &mut Run, o: &Options) -> Result<(), Ended> {
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
    if let Err(a) = fastsum::manifest::hashdeep::Columns::new(o.algorithms.all()) {
        let m = format!("hashdeep's format has no {a} (md5, sha1 and sha256 only)");
        return Err(run.usage_error(Some(&m)));
    }
    Ok(())
}

/// `--dirs` (a directory digest line after each directory's files) needs
/// the whole sorted walk and a hash algorithm.
fn dirs_combinations(run: &mut Run, o: &Options) -> Result<(), Ended> {
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
    if let Some(why) = o.algorithms.one().directory_digest_refusal() {
        run.error(why.as_bytes());
        return Err(Ended(1));
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
) -> Result<(Vec<Vec<u8>>, Option<Names>), Ended> {
    if let Some(first) = given.first() {
        let mut m = b"extra operand ".to_vec();
        m.extend(run.quoting.quote(first));
        run.error(&m);
        let m = "file operands cannot be combined with --files0-from";
        return Err(run.usage_error(Some(m)));
    }
    let mut list = Names::open(run, source)?;
    let names = match whole {
        true => list.read_all(run)?,
        false => list.next_batch(run)?,
    };
    if names.is_empty() {
        // Nothing listed: nothing to do (not standard input).
        return Err(run.ended_by_finish(i32::from(run.operand_errors)));
    }
    o.names_given = true;
    Ok((names, (!list.done()).then_some(list)))
}

/// The renderer for the resolved settings: the tool's line shape, JSON,
/// the terminator, and its name in messages.
fn renderer(run: &Run, o: &Options) -> fastsum::output::render::Renderer {
    use fastsum::output::render::Format;
    let base64 = o.algorithms.base64();
    let format = match (o.json, o.hashdeep, o.raw) {
        (true, _, _) => Format::Json,
        (false, true, _) => Format::Hashdeep,
        (false, false, true) => Format::Raw,
        _ if o.tagged(run.tool) => Format::Tagged { base64 },
        _ => Format::Untagged {
            binary: o.read_mode == Some(ReadMode::Binary),
            base64,
        },
    };
    let renderer = fastsum::output::render::Renderer {
        algorithm: o.algorithms.one(),
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

/// The first pair of options coreutils 9.10 refuses together (its order,
/// its words), after fastsum's own, if any.
fn conflict(o: &Options, tool: Tool) -> Option<&'static str> {
    let (kind, policy) = (tool.kind, tool.policy());
    let walking = o.tree.recursive
        || o.tree.walk.max_depth.is_some()
        || o.tree.order == Order::Unordered
        || o.tree.walk.follow_links
        || o.tree.walk.one_file_system
        // `-c --dirs`: fastsum's own -c checks directory lines only when
        // asked (digests::is_directory_line).
        || (o.tree.walk.directories && !(policy.own_lists && o.check))
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
            // fastsum's own -q also silences notices, in every mode.
            o.quiet && !policy.quiet_silences_notices,
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
    } else if o.algorithms.base64() && o.raw {
        Some("--base64 and --raw are mutually exclusive")
    } else if o.terminator == 0 && o.check && !policy.own_lists {
        Some("the --zero option is not supported when verifying checksums")
    } else if o.tag && o.check {
        Some("the --tag option is meaningless when verifying checksums")
    } else if policy.refuses_untagged_check && o.untagged && o.check {
        Some("the --untagged option is meaningless when verifying checksums")
    } else if o.read_mode.is_some() && o.check {
        Some("the --binary and --text options are meaningless when verifying checksums")
    } else if let Some(&(_, message)) = uses.iter().find(|(given, _)| *given && !o.check) {
        Some(message)
    } else if o.read_mode == Some(ReadMode::Text)
        && (o.tag || (kind == ToolKind::Cksum && !o.untagged))
    {
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
