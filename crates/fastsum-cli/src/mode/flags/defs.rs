//! The options, each declared once, in the order of fastsum's `--help`
//! (which is also each tool's getopt order: glibc lists an ambiguous
//! prefix's possibilities in it, and the GNU tools' relative orders, as
//! `--base64` before `--binary` and `--status` before `--strict`, are
//! coreutils').
//!
//! Adding an option is one entry here: names, value, tools, words, and
//! what it sets; `resolve.rs` then checks it against the others.
//! It holds one concern, one table: its length is the number of options.

use crate::mode::run::Ended;
use fastsum::pipeline::Order;
use fastsum::Algorithm;

use super::Section::{Digest, Info, Many, Verify};
use super::{said, Asked, Flag, Parsed, Text, Tools};
use crate::mode::options::{
    invalid_value, parse_decimal, parse_length, parse_size, Options, ReadMode,
};
use crate::mode::run::Run;
use crate::mode::{MAX_READ_SIZE, MAX_THREADS};

pub(in crate::mode) static FLAGS: &[Flag] = &[
    // sum's own two, with no place in fastsum's help.
    Flag::new("bsd", Digest, |_, p, _| {
        p.algorithms.sum(Algorithm::Bsd);
        Ok(())
    })
    .short(b'r')
    .short_only()
    .tools(Tools::SUM),
    Flag::new("sysv", Digest, |_, p, _| {
        p.algorithms.sum(Algorithm::Sysv);
        Ok(())
    })
    .short(b's')
    .tools(Tools::SUM),
    Flag::new("algorithm", Digest, |run, p, v| {
        p.algorithms.algorithm(run, &v)
    })
    .short(b'a')
    .value("NAME")
    .tools(Tools::CKSUM_AND_FASTSUM)
    .help(&[said(&[
        "the digest to compute (default md5); see ALGORITHMS;",
        "repeated, several digests from one read",
    ])]),
    Flag::new("part-size", Digest, |run, p, v| {
        match std::str::from_utf8(&v)
            .ok()
            .and_then(fastsum::algo::parts::parse_part_size)
        {
            Some(size) => p.algorithms.part_size(size, v),
            None => return Err(invalid_value(run, "part size (as 8MiB, 5242880)", &v)),
        }
        Ok(())
    })
    .value("SIZE")
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "S3's digest of an upload in parts of SIZE (8MiB ...):",
        "the ETag with -a s3etag or md5, the composite",
        "checksum with crc32, crc32c, sha1, sha256, sha512,",
        "xxh64, xxh3, xxh128 (HEX-N);",
        "one part gives the plain digest. s3etag's default:",
        "8MiB, the part size of aws s3 cp and boto3",
    ])]),
    Flag::new("base64", Digest, |_, p, _| {
        p.algorithms.base64();
        Ok(())
    })
    .tools(Tools::CKSUM_AND_FASTSUM)
    .help(&[said(&[
        "print digests in base64: S3's form for crc32, crc32c,",
        "crc64nvme, md5, sha1, sha256, sha512, xxh64, xxh3,",
        "xxh128 (BASE64-N with --part-size)",
    ])]),
    Flag::new("binary", Digest, |_, p, _| {
        p.o.read_mode = Some(ReadMode::Binary);
        Ok(())
    })
    .short(b'b')
    .help(&[said(&["read in binary mode"])]),
    Flag::new("check", Digest, |_, p, _| {
        p.o.check = true;
        Ok(())
    })
    .short(b'c')
    .help(&[said(&[
        "read checksums from the FILEs and check them: GNU and",
        "BSD lines, fastsum's --json, hashdeep, SFV, Debian",
        "Release files (told from their content)",
    ])]),
    Flag::new("length", Digest, |run, p, v| {
        // Only a number is checked here; its value once all options are
        // read (only the last -l counts).
        match parse_length(&v) {
            Ok(bits) => p.algorithms.length(bits, v),
            Err(cause) => {
                let mut m = b"invalid length: ".to_vec();
                m.extend(run.quoting.quote(&v));
                if let Some(cause) = cause {
                    m.extend_from_slice(b": ");
                    m.extend_from_slice(cause.as_bytes());
                }
                run.error(&m);
                return Err(Ended(1));
            }
        }
        Ok(())
    })
    .short(b'l')
    .value("BITS")
    .tools(Tools::LENGTH)
    .help(&[said(&[
        "digest length in bits; must not exceed the max for",
        "the blake2 algorithm and must be a multiple of 8",
    ])]),
    Flag::new("tag", Digest, |_, p, _| {
        (p.o.tag, p.o.untagged) = (true, false);
        Ok(())
    })
    .help(&[said(&[
        "create a BSD-style checksum (the default for every",
        "algorithm but md5, so that -c knows each line's)",
    ])]),
    Flag::new("untagged", Digest, |_, p, _| {
        (p.o.tag, p.o.untagged) = (false, true);
        Ok(())
    })
    .tools(Tools::CKSUM_AND_FASTSUM)
    .help(&[said(&[
        "create a GNU-style line even for other algorithms",
        "(as sha256sum, b2sum, b3sum, xxhsum print it)",
    ])]),
    Flag::new("raw", Digest, |_, p, _| {
        p.o.raw = true;
        Ok(())
    })
    .tools(Tools::CKSUM),
    Flag::new("text", Digest, |_, p, _| {
        p.o.read_mode = Some(ReadMode::Text);
        Ok(())
    })
    .short(b't')
    .help(&[said(&["read in text mode (default)"])]),
    Flag::new("zero", Digest, |_, p, _| {
        p.o.terminator = 0;
        Ok(())
    })
    .short(b'z')
    .help(&[said(&[
        "end each output line with NUL, not newline,",
        "and disable file name escaping",
    ])]),
    Flag::new("recursive", Many, |_, p, _| {
        p.o.tree.recursive = true;
        Ok(())
    })
    .short(b'r')
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "hash the files under each directory FILE, sorted by path",
        "(no FILE: the working directory, as -r .)",
    ])]),
    Flag::new("threads", Many, |run, p, v| {
        match parse_decimal(&v).and_then(|n| usize::try_from(n).ok()) {
            Some(0) => p.o.tree.threads = fastsum::TreeOptions::available_threads(),
            Some(n) if n <= MAX_THREADS => p.o.tree.threads = n,
            _ => return Err(invalid_value(run, "number of threads (0 to 1024)", &v)),
        }
        Ok(())
    })
    .short(b'j')
    .value("N")
    .tools(Tools::FASTSUM)
    .help(&[said(&["hashing threads (default: all cores)"])]),
    Flag::new("unordered", Many, |_, p, _| {
        p.o.tree.order = Order::Unordered;
        Ok(())
    })
    .tools(Tools::FASTSUM)
    .help(&[said(&["print each result when ready, not in sorted order"])]),
    Flag::new("follow", Many, |_, p, _| {
        p.o.tree.walk.follow_links = true;
        Ok(())
    })
    .short(b'L')
    .tools(Tools::FASTSUM)
    .subcommand_help("Follow symbolic links (what they point to is compared)")
    .help(&[said(&[
        "follow symbolic links met in directories (without it",
        "they are left out, and counted on stderr)",
    ])]),
    Flag::new("no-follow", Many, |_, p, _| {
        p.o.no_follow = true;
        Ok(())
    })
    .short(b'P')
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "do not follow them where the format does by default",
        "(--format=hashdeep follows them, as hashdeep does)",
    ])]),
    Flag::new("one-file-system", Many, |_, p, _| {
        p.o.tree.walk.one_file_system = true;
        Ok(())
    })
    .tools(Tools::FASTSUM)
    .subcommand_help("Stay on the file system of each tree's root")
    .help(&[said(&["stay on the file system of each directory FILE"])]),
    Flag::new("exclude", Many, |_, p, v| {
        let glob = String::from_utf8_lossy(&v).into_owned();
        p.o.tree.walk.excludes.push(glob);
        Ok(())
    })
    .value("GLOB")
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "leave out matching paths (gitignore syntax; repeatable)",
    ])]),
    Flag::new("exclude-from", Many, exclude_from)
        .value("FILE")
        .tools(Tools::FASTSUM)
        .subcommand_help("Leave out the paths FILE's lines match, each as an --exclude (blank lines and lines from # left out; repeatable)")
        .help(&[said(&[
            "leave out the paths FILE's lines match, each as an",
            "--exclude (blank lines and lines from # left out)",
        ])]),
    Flag::new("max-depth", Many, |run, p, v| {
        match parse_decimal(&v).and_then(|n| usize::try_from(n).ok()) {
            Some(n) => p.o.tree.walk.max_depth = Some(n),
            None => return Err(invalid_value(run, "maximum depth", &v)),
        }
        Ok(())
    })
    .value("N")
    .tools(Tools::FASTSUM)
    .subcommand_help("Go at most N levels below each directory (1: its own files only; find's maxdepth)")
    .help(&[said(&[
        "go at most N levels below each directory FILE",
        "(1: its own files only), as find -maxdepth",
    ])]),
    Flag::new("update", Many, |_, p, v| {
        p.update = Some(v);
        Ok(())
    })
    .value("MANIFEST")
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "bring MANIFEST up to date in place (its own shape and",
        "algorithm; through the cache: only changed files are",
        "read); say what changed (A, D, M and the path)",
    ])]),
    Flag::new("format", Many, |run, p, v| format(run, &mut p.o, &v))
        .value("NAME")
        .tools(Tools::FASTSUM)
        .help(&[
            Text {
                shown: Some("hashdeep"),
                lines: &[
                    "write hashdeep's list (SIZE,DIGEST...,NAME), for -a",
                    "md5, sha1, sha256 (several -a: several columns);",
                    "names as given, as hashdeep -l writes them (hashdeep",
                    "writes absolute ones): audit with hashdeep -l -a, or",
                    "name the tree absolutely (-r \"$PWD/dir\") for hashdeep's",
                    "own lines",
                ],
            },
            said(&[
                "with -c: read the lists as NAME (gnu, bsd, json,",
                "hashdeep, sfv, release), not as their content says",
            ]),
        ]),
    Flag::new("debug", Many, |_, p, _| {
        p.o.debug = true;
        Ok(())
    })
    .tools(Tools::CKSUM_AND_FASTSUM)
    .help(&[said(&["with -c: say which format each list was read as"])]),
    Flag::new("signature", Many, |_, p, v| {
        p.o.signing.signature = Some(fastsum::name::path(&v).into_owned());
        Ok(())
    })
    .value("SIG")
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "with -c: verify the list's detached signature first",
        "(minisign, signify, SSH, OpenPGP); refused: exit 2",
    ])]),
    Flag::new("key", Many, |_, p, v| {
        p.o.signing.key = Some(fastsum::name::path(&v).into_owned());
        Ok(())
    })
    .value("KEY")
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "with -c: the key to trust (a minisign or signify key,",
        "allowed_signers, an OpenPGP keyring); alone, for a",
        "clearsigned list or signify's SHA256.sig",
    ])]),
    Flag::new("namespace", Many, |_, p, v| {
        p.o.signing.namespace = Some(String::from_utf8_lossy(&v).into_owned());
        Ok(())
    })
    .value("NS")
    .tools(Tools::FASTSUM)
    .help(&[said(&["with -c: the SSH signature's namespace (file)"])]),
    Flag::new("dirs", Many, |_, p, _| {
        p.o.tree.walk.directories = true;
        Ok(())
    })
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "also print each directory's digest (DIGEST  DIR/), after",
        "its files: docs/DIRECTORY-DIGEST.md; with -c, check",
        "the list's directory lines (without it, DIR/ is a file)",
    ])]),
    Flag::new("prune-matching", Many, |_, p, v| {
        p.prune = Some(v);
        Ok(())
    })
    .value("F")
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "with -r --json: leave out the directories whose",
        "digests F lists (as fastsum diff sends a host)",
    ])]),
    Flag::new("files0-from", Many, |_, p, v| {
        p.files0_from = Some(v);
        Ok(())
    })
    .value("F")
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "hash the NUL-terminated names in F (-: standard",
        "input) instead of FILE operands",
    ])]),
    Flag::new("json", Many, |_, p, _| {
        p.o.json = true;
        Ok(())
    })
    .tools(Tools::FASTSUM)
    .help(&[said(&["print one JSON object per file instead of lines"])]),
    Flag::new("stamps", Many, |_, p, _| {
        p.o.stamps = true;
        p.o.tree.verify = true;
        Ok(())
    })
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "with --json: each file's device, inode, mtime and",
        "ctime too, for fastsum scrub --manifest",
    ])]),
    Flag::new("no-progress", Many, |_, p, _| {
        p.o.no_progress = true;
        Ok(())
    })
    .tools(Tools::FASTSUM)
    .subcommand_help("Never show the progress bar (shown on a terminal's stderr after a second otherwise)")
    .help(&[said(&["never show the progress bar"])]),
    Flag::new("rsh", Many, |_, p, v| {
        p.o.remote.set_transport(&String::from_utf8_lossy(&v));
        Ok(())
    })
    .short(b'e')
    .value("COMMAND")
    .tools(Tools::FASTSUM)
    .subcommand_help("The transport for HOST:PATH operands (default ssh, or $FASTSUM_RSH)")
    .help(&[said(&[
        "the transport for HOST:PATH operands (default ssh;",
        "also FASTSUM_RSH)",
    ])]),
    Flag::new("remote-method", Many, |run, p, v| {
        match std::str::from_utf8(&v)
            .ok()
            .and_then(fastsum::remote::Method::from_name)
        {
            Some(method) => p.o.remote.method = Some(method),
            None => {
                let what = "remote method (fastsum, coreutils, bsd, perl, python)";
                return Err(invalid_value(run, what, &v));
            }
        }
        Ok(())
    })
    .value("NAME")
    .tools(Tools::FASTSUM)
    .subcommand_help("Hash HOST:PATH trees by this method only: fastsum, coreutils, bsd, perl or python (default: the first the host has, in that order)")
    .help(&[said(&[
        "fastsum, coreutils, bsd, perl or python (default:",
        "the first the remote host has, in that order)",
    ])]),
    Flag::new("remote-fastsum", Many, |_, p, v| {
        p.o.remote.remote_fastsum = Some(String::from_utf8_lossy(&v).into_owned());
        Ok(())
    })
    .value("PATH")
    .tools(Tools::FASTSUM)
    .help(&[said(&["the fastsum to run on the remote host"])]),
    Flag::new("upload-self", Many, |_, p, _| {
        p.o.remote.upload_self = std::env::current_exe().ok();
        Ok(())
    })
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "copy this fastsum to a private temporary directory on",
        "the host when its uname -sm matches, run it there,",
        "and remove it",
    ])]),
    Flag::new("download", Many, |_, p, _| {
        p.o.s3_download = true;
        Ok(())
    })
    .tools(Tools::FASTSUM)
    .subcommand_help("S3 operands: stream objects whose only digest is opaque (SSE-KMS, part sizes not to be had) and compare their bytes, instead of leaving them undecided; nothing is stored")
    .help(&[said(&[
        "for s3://BUCKET/PREFIX operands (with -r; lines name",
        "keys below PREFIX): stream and hash an object S3",
        "keeps no digest of in the form asked; without it,",
        "such an object is an error (exit 1). Without -a,",
        "each object's best digest, tagged as its own",
        "algorithm (crc64nvme when downloaded); with",
        "--cache, what S3 said is kept beside the cache",
        "(PATH.s3): an unchanged re-run costs one listing",
    ])]),
    Flag::new("s3-path-style", Many, |_, p, _| {
        p.o.s3_path_style = true;
        Ok(())
    })
    .tools(Tools::FASTSUM)
    .subcommand_help("S3 operands: path-style addressing (ENDPOINT/BUCKET/KEY), as the config's `s3 = addressing_style = path` says (the default for an endpoint that is an IP address or localhost)")
    .help(&[said(&[
        "address s3:// buckets path-style (endpoint/BUCKET/KEY)",
    ])]),
    Flag::new("verbose", Many, |_, p, _| {
        p.o.verbose = true;
        Ok(())
    })
    .short(b'v')
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "say which remote method ran (with -c: which format)",
    ])]),
    Flag::new("io", Many, |run, p, v| {
        match &v[..] {
            b"auto" | b"read" | b"mmap" => p.io_mode = String::from_utf8_lossy(&v).into_owned(),
            _ => return Err(invalid_value(run, "I/O mode (auto, read, mmap)", &v)),
        }
        Ok(())
    })
    .value("MODE")
    .tools(Tools::FASTSUM)
    .help(&[said(&["auto (default), read or mmap"])]),
    Flag::new("read-size", Many, |run, p, v| {
        match parse_size(&v) {
            Some(n) if n > 0 && n <= MAX_READ_SIZE => p.read_size = Some(n),
            _ => return Err(invalid_value(run, "read size (1 to 256M)", &v)),
        }
        Ok(())
    })
    .value("BYTES")
    .tools(Tools::FASTSUM)
    .help(&[said(&["read size for --io=read (K, M suffixes)"])]),
    Flag::new("io-depth", Many, |run, p, v| {
        match parse_decimal(&v).and_then(|n| usize::try_from(n).ok()) {
            Some(n) if n <= 256 => p.o.tree.io_depth = Some(n),
            _ => return Err(invalid_value(run, "I/O depth (0 to 256)", &v)),
        }
        Ok(())
    })
    .value("N")
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "threads reading ahead of the hashers when the page cache",
        "is cold (default 8; 0: none)",
    ])]),
    Flag::new("disk", Many, |run, p, v| {
        match std::str::from_utf8(&v)
            .ok()
            .and_then(fastsum::DiskKind::from_name)
        {
            Some(kind) => p.o.tree.disk = kind,
            None => return Err(invalid_value(run, "disk kind (auto, ssd or hdd)", &v)),
        }
        Ok(())
    })
    .value("KIND")
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "hdd: read a walked tree's files in inode order (for a",
        "spinning disk); ssd: in walk order; auto (default):",
        "ask sysfs about the device under each directory",
    ])]),
    Flag::new("no-cache-pollution", Many, |_, p, _| {
        p.o.tree.drop_cold = true;
        Ok(())
    })
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "drop from the page cache the files this run read",
        "that were not in it before",
    ])]),
    Flag::new("cache", Many, cache)
        .optional_value("PATH")
        .tools(Tools::FASTSUM)
        .help(&[said(&[
            "answer unchanged files from a checksum cache (default",
            "$XDG_CACHE_HOME/fastsum/cache.sqlite); also with -c.",
            "PATH only after '=': --cache x.sqlite hashes x.sqlite",
        ])]),
    Flag::new("cache-stats", Many, |_, p, _| {
        p.o.cache_stats = true;
        Ok(())
    })
    .tools(Tools::FASTSUM)
    .help(&[said(&[
        "after the run, print cache hits and misses to stderr",
        "(with --cache), and the files too recent to keep:",
        "changed less than 35 s before the run (the kernel's",
        "writeback window; FASTSUM_SETTLE_SECONDS sets it)",
    ])]),
    // fastsum's own mode: -q too, and in every mode (GNU: --quiet, -c only).
    Flag::new("quiet", Many, |_, p, _| {
        (p.o.status_only, p.o.warn, p.o.quiet) = (false, false, true);
        Ok(())
    })
    .short_in(b'q', Tools::FASTSUM)
    .subcommand_help("Print no notices on stderr (summaries of a run without trouble, links left out), only errors and trouble: cron mails only that")
    .help(&[said(&[
        "print no notices (links left out ...), only errors and",
        "trouble, so that cron mails only that; with -c, no OK",
        "for each successfully verified file either",
    ])]),
    Flag::new("ignore-missing", Verify, |_, p, _| {
        p.o.ignore_missing = true;
        Ok(())
    })
    .help(&[said(&["don't fail or report status for missing files"])]),
    Flag::new("status", Verify, |_, p, _| {
        (p.o.status_only, p.o.warn, p.o.quiet) = (true, false, false);
        Ok(())
    })
    .help(&[said(&["don't output anything, status code shows success"])]),
    Flag::new("strict", Verify, |_, p, _| {
        p.o.strict = true;
        Ok(())
    })
    .help(&[said(&[
        "exit non-zero for improperly formatted checksum lines",
    ])]),
    Flag::new("warn", Verify, |_, p, _| {
        (p.o.status_only, p.o.warn, p.o.quiet) = (false, true, false);
        Ok(())
    })
    .short(b'w')
    .help(&[said(&["warn about improperly formatted checksum lines"])]),
    Flag::new("help", Info, |_, p, _| {
        p.info = Some(Asked::Help);
        Ok(())
    })
    .short_in(b'h', Tools::FASTSUM)
    .tools(Tools::ALL)
    .help(&[said(&["display this help and exit"])]),
    Flag::new("version", Info, |_, p, _| {
        p.info = Some(Asked::Version);
        Ok(())
    })
    .tools(Tools::ALL)
    .help(&[said(&["output version information and exit"])]),
];

/// `--format=NAME`: hashdeep's lists written (`hashdeep`), or, with `-c`,
/// the format lists are read in.
fn format(run: &mut Run, o: &mut Options, value: &[u8]) -> Result<(), Ended> {
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

/// `--cache[=PATH]`: the cache file (the default one without `=PATH`).
fn cache(run: &mut Run, p: &mut Parsed, value: Vec<u8>) -> Result<(), Ended> {
    p.cache_without_path = value.is_empty();
    p.o.remote.cache = true;
    let given = (!value.is_empty()).then(|| fastsum::name::path(&value).into_owned());
    match crate::term::cache::path(given) {
        Ok(path) => p.o.cache = Some(path),
        Err(m) => {
            run.error(m.as_bytes());
            return Err(Ended(1));
        }
    }
    Ok(())
}

/// `--exclude-from=FILE`: FILE's globs (`term::exclude_file`, as the
/// subcommands read it), or an error naming FILE.
fn exclude_from(run: &mut Run, p: &mut Parsed, value: Vec<u8>) -> Result<(), Ended> {
    use crate::term::exclude_file::{read_exclude_file, ExcludeFileError};
    match read_exclude_file(&fastsum::name::path(&value)) {
        Ok(globs) => p.o.tree.walk.excludes.extend(globs),
        Err(ExcludeFileError::Io(e)) => {
            return Err(crate::mode::files0::cannot_read(run, &value, &e))
        }
        Err(e @ ExcludeFileError::TooLarge) => {
            let mut m = run.quoting.quote(&value);
            m.extend_from_slice(b": ");
            m.extend_from_slice(e.to_string().as_bytes());
            run.error(&m);
            return Err(Ended(1));
        }
    }
    Ok(())
}
