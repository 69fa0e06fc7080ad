//! The command line of the coreutils personality, read as getopt reads
//! it (glibc's rules, `term::getopt`): each option applied to the
//! settings as given, in order, nothing yet checked against the others
//! (that is `resolve.rs`).

use fastsum::pipeline::Order;
use fastsum::Algorithm;

use crate::mode::algorithms::Chosen;
use crate::mode::options::*;
use crate::mode::run::Run;
use crate::mode::{help, MAX_READ_SIZE, MAX_THREADS};
use crate::term::getopt::Getopt;

/// What the command line said, before the settings are resolved.
pub(super) struct Parsed {
    pub(super) o: Options,
    /// `-a`, `-l`, `--part-size`, `--base64`: resolved into
    /// `o.algorithms` (`algorithms.rs`).
    pub(super) algorithms: Chosen,
    pub(super) read_size: Option<usize>,
    pub(super) io_mode: String,
    /// `--cache` without `=PATH`.
    pub(super) cache_without_path: bool,
    /// `--files0-from=F`: the operands are F's NUL-terminated names.
    pub(super) files0_from: Option<Vec<u8>>,
    /// `--update=MANIFEST`.
    pub(super) update: Option<Vec<u8>>,
    /// `--prune-matching=FILE`.
    pub(super) prune: Option<Vec<u8>>,
    pub(super) operands: Vec<Vec<u8>>,
}

/// Reads `args` as `run.tool` takes them; `Err(status)` when the run ends
/// here (a usage error, `--help`, `--version`).
pub(super) fn parse(run: &mut Run, args: &[Vec<u8>]) -> Result<Parsed, i32> {
    let tool = run.tool;
    let mut p = Parsed {
        o: Options::new(tool),
        algorithms: Chosen::default(),
        read_size: None,
        io_mode: "auto".to_string(),
        cache_without_path: false,
        files0_from: None,
        update: None,
        prune: None,
        operands: Vec::new(),
    };
    let specs = specs(tool.kind);
    let mut getopt = Getopt::new(args, &specs);
    for item in getopt.by_ref() {
        let opt = match item {
            Ok(opt) => opt,
            Err(message) => return Err(run.getopt_error(&message)),
        };
        let value = opt.value.unwrap_or_default();
        let handled = digest_option(run, &mut p, opt.key, value.clone())?
            || tree_option(run, &mut p, opt.key, value.clone())?
            || remote_option(run, &mut p, opt.key, value)?;
        assert!(handled, "option {} has no handler", opt.key);
    }
    p.operands = getopt.into_operands();
    p.o.names_given = !p.operands.is_empty();
    Ok(p)
}

/// What is hashed and how lines are read and written (the coreutils
/// options); `Ok(false)`: not one of them.
fn digest_option(run: &mut Run, p: &mut Parsed, key: &str, value: Vec<u8>) -> Result<bool, i32> {
    match key {
        "a" => p.algorithms.algorithm(run, &value)?,
        "bsd" => p.algorithms.sum(Algorithm::Bsd),
        "sysv" => p.algorithms.sum(Algorithm::Sysv),
        "debug" => p.o.debug = true,
        // Only a number is checked here; its value once all options are
        // read (only the last -l counts).
        "l" => match parse_length(&value) {
            Some(bits) => p.algorithms.length(bits, value),
            None => {
                let mut m = b"invalid length: ".to_vec();
                m.extend(run.quoting.quote(&value));
                run.error(&m);
                return Err(1);
            }
        },
        "c" => p.o.check = true,
        "status" => (p.o.status_only, p.o.warn, p.o.quiet) = (true, false, false),
        "w" => (p.o.status_only, p.o.warn, p.o.quiet) = (false, true, false),
        "quiet" => (p.o.status_only, p.o.warn, p.o.quiet) = (false, false, true),
        "ignore-missing" => p.o.ignore_missing = true,
        "strict" => p.o.strict = true,
        "b" => p.o.binary = 1,
        "t" => p.o.binary = 0,
        "tag" => (p.o.tag, p.o.untagged) = (true, false),
        "untagged" => (p.o.tag, p.o.untagged) = (false, true),
        "base64" => p.algorithms.base64(),
        "part-size" => match std::str::from_utf8(&value)
            .ok()
            .and_then(fastsum::algo::parts::parse_part_size)
        {
            Some(size) => p.algorithms.part_size(size, value),
            None => return Err(invalid_value(run, "part size (as 8MiB, 5242880)", &value)),
        },
        "raw" => p.o.raw = true,
        "z" => p.o.terminator = 0,
        "help" => {
            let text = help::gnu_help(run.tool, &run.program);
            run.out.out(text.as_bytes());
            // Found at exit by close_stdout, with no cause.
            run.write_error_cause = false;
            run.working = true;
            return Err(run.finish(0));
        }
        "version" => {
            let text = help::version(run.tool.name);
            run.out.out(text.as_bytes());
            run.write_error_cause = false;
            run.working = true;
            return Err(run.finish(0));
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// `--format=NAME`: hashdeep's lists written (`hashdeep`), or, with `-c`,
/// the format lists are read in.
fn format_option(run: &mut Run, o: &mut Options, value: &[u8]) -> Result<(), i32> {
    use fastsum::manifest::list::ListFormat;
    let name = String::from_utf8_lossy(value);
    o.hashdeep = name == "hashdeep";
    o.check_format = ListFormat::from_name(&name);
    if o.check_format.is_none() {
        let names: Vec<&str> = ListFormat::NAMES.iter().map(|(n, _)| *n).collect();
        let what = format!("format ({})", names.join(", "));
        return Err(invalid_value(run, &what, value));
    }
    Ok(())
}

/// How many files are hashed: walks, threads, I/O, the cache, JSON.
fn tree_option(run: &mut Run, p: &mut Parsed, key: &str, value: Vec<u8>) -> Result<bool, i32> {
    match key {
        "r" => p.o.tree.recursive = true,
        "j" => match parse_decimal(&value).and_then(|n| usize::try_from(n).ok()) {
            Some(0) => p.o.tree.threads = fastsum::TreeOptions::available_threads(),
            Some(n) if n <= MAX_THREADS => p.o.tree.threads = n,
            _ => return Err(invalid_value(run, "number of threads (0 to 1024)", &value)),
        },
        "io-depth" => match parse_decimal(&value).and_then(|n| usize::try_from(n).ok()) {
            Some(n) if n <= 256 => p.o.tree.io_depth = Some(n),
            _ => return Err(invalid_value(run, "I/O depth (0 to 256)", &value)),
        },
        "no-cache-pollution" => p.o.tree.drop_cold = true,
        "disk" => match std::str::from_utf8(&value)
            .ok()
            .and_then(fastsum::DiskKind::from_name)
        {
            Some(kind) => p.o.tree.disk = kind,
            None => return Err(invalid_value(run, "disk kind (auto, ssd or hdd)", &value)),
        },
        "unordered" => p.o.tree.order = Order::Unordered,
        "L" => p.o.tree.walk.follow_links = true,
        "P" => p.o.no_follow = true,
        "one-file-system" => p.o.tree.walk.one_file_system = true,
        "max-depth" => match parse_decimal(&value).and_then(|n| usize::try_from(n).ok()) {
            Some(n) => p.o.tree.walk.max_depth = Some(n),
            None => return Err(invalid_value(run, "maximum depth", &value)),
        },
        "files0-from" => p.files0_from = Some(value),
        "update" => p.update = Some(value),
        "prune-matching" => p.prune = Some(value),
        "stamps" => {
            p.o.stamps = true;
            p.o.tree.verify = true;
        }
        "dirs" => p.o.tree.walk.directories = true,
        "exclude" => {
            p.o.tree
                .walk
                .excludes
                .push(String::from_utf8_lossy(&value).into_owned())
        }
        "json" => p.o.json = true,
        "format" => format_option(run, &mut p.o, &value)?,
        "no-progress" => p.o.no_progress = true,
        "signature" => p.o.signing.signature = Some(fastsum::name::path(&value).into_owned()),
        "key" => p.o.signing.key = Some(fastsum::name::path(&value).into_owned()),
        "namespace" => p.o.signing.namespace = Some(String::from_utf8_lossy(&value).into_owned()),
        "cache" => {
            p.cache_without_path = value.is_empty();
            p.o.remote.cache = true;
            let given = (!value.is_empty()).then(|| fastsum::name::path(&value).into_owned());
            match crate::term::cache::path(given) {
                Ok(path) => p.o.cache = Some(path),
                Err(m) => {
                    run.error(m.as_bytes());
                    return Err(1);
                }
            }
        }
        "cache-stats" => p.o.cache_stats = true,
        "io" => match &value[..] {
            b"auto" | b"read" | b"mmap" => p.io_mode = String::from_utf8_lossy(&value).into_owned(),
            _ => return Err(invalid_value(run, "I/O mode (auto, read, mmap)", &value)),
        },
        "read-size" => match parse_size(&value) {
            Some(n) if n > 0 && n <= MAX_READ_SIZE => p.read_size = Some(n),
            _ => return Err(invalid_value(run, "read size (1 to 256M)", &value)),
        },
        _ => return Ok(false),
    }
    Ok(true)
}

/// `HOST:PATH` operands: the transport and the remote method.
fn remote_option(run: &mut Run, p: &mut Parsed, key: &str, value: Vec<u8>) -> Result<bool, i32> {
    match key {
        "e" => p.o.remote.set_transport(&String::from_utf8_lossy(&value)),
        "remote-method" => match std::str::from_utf8(&value)
            .ok()
            .and_then(fastsum::remote::Method::from_name)
        {
            Some(method) => p.o.remote.method = Some(method),
            None => {
                return Err(invalid_value(
                    run,
                    "remote method (fastsum, coreutils, bsd, perl, python)",
                    &value,
                ))
            }
        },
        "remote-fastsum" => {
            p.o.remote.remote_fastsum = Some(String::from_utf8_lossy(&value).into_owned())
        }
        "upload-self" => p.o.remote.upload_self = std::env::current_exe().ok(),
        "v" => p.o.verbose = true,
        "download" => p.o.s3_download = true,
        "s3-path-style" => p.o.s3_path_style = true,
        _ => return Ok(false),
    }
    Ok(true)
}
