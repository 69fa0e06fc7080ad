//! `--help` and `--version` texts.

use fastsum::Algorithm;

use crate::personality::{Tool, ToolKind};

/// The `--help` text of `tool` called as `program`: fastsum's own (in the
/// layout of coreutils 9.1's), or coreutils 9.10's (`personality/gnu/usage.rs`).
pub fn gnu_help(tool: Tool, program: &[u8]) -> String {
    let program = String::from_utf8_lossy(program);
    let mut s = format!("Usage: {program} [OPTION]... [FILE]...\n");
    if tool.kind != ToolKind::Fastsum {
        return crate::personality::gnu::usage::usage(tool, program.as_bytes());
    }
    s.push_str(&format!(
        "  or:  {program} SUBCOMMAND [ARGS]...  (see {program} help SUBCOMMAND)\n"
    ));
    s.push_str("Print or check file checksums, fast, with constant memory.\n");
    // The subcommands first: they are what a newcomer looks for.
    s.push_str("\nSubcommands:\n");
    for sub in &crate::SUBCOMMANDS {
        s.push_str(&format!("  {:<16}{}\n", sub.name, sub.about));
    }
    s.push_str("A file named as a subcommand is hashed as ./NAME or after --\n");
    s.push_str("(fastsum -- help hashes the file help).\n");
    s.push_str("\nWith no FILE, or when FILE is -, read standard input.\n");
    s.push_str("\nMandatory arguments to long options are mandatory for short options too.\n");
    s.push_str("  -a, --algorithm=NAME  the digest to compute (default md5); see ALGORITHMS;\n");
    s.push_str("                          repeated, several digests from one read\n");
    s.push_str("      --part-size=SIZE  S3's digest of an upload in parts of SIZE (8MiB ...):\n");
    s.push_str("                          the ETag with -a s3etag or md5, the composite\n");
    s.push_str("                          checksum with crc32, crc32c, sha1, sha256, sha512,\n");
    s.push_str("                          xxh64, xxh3, xxh128 (HEX-N);\n");
    s.push_str("                          one part gives the plain digest. s3etag's default:\n");
    s.push_str("                          8MiB, the part size of aws s3 cp and boto3\n");
    s.push_str("      --base64          print digests in base64: S3's form for crc32, crc32c,\n");
    s.push_str("                          crc64nvme, md5, sha1, sha256, sha512, xxh64, xxh3,\n");
    s.push_str("                          xxh128 (BASE64-N with --part-size)\n");
    s.push_str("  -b, --binary          read in binary mode\n");
    s.push_str("  -c, --check           read checksums from the FILEs and check them: GNU and\n");
    s.push_str("                          BSD lines, fastsum's --json, hashdeep, SFV, Debian\n");
    s.push_str("                          Release files (told from their content)\n");
    s.push_str("  -l, --length=BITS     digest length in bits; must not exceed the max for\n");
    s.push_str("                          the blake2 algorithm and must be a multiple of 8\n");
    s.push_str("      --tag             create a BSD-style checksum (the default for every\n");
    s.push_str("                          algorithm but md5, so that -c knows each line's)\n");
    s.push_str("      --untagged        create a GNU-style line even for other algorithms\n");
    s.push_str("                          (as sha256sum, b2sum, b3sum, xxhsum print it)\n");
    s.push_str("  -t, --text            read in text mode (default)\n");
    s.push_str("  -z, --zero            end each output line with NUL, not newline,\n");
    s.push_str("                          and disable file name escaping\n");
    s.push_str("\nMany files:\n");
    s.push_str(
        "  -r, --recursive       hash the files under each directory FILE, sorted by path\n",
    );
    s.push_str("                          (no FILE: the working directory, as -r .)\n");
    s.push_str("  -j, --threads=N       hashing threads (default: all cores)\n");
    s.push_str("      --unordered       print each result when ready, not in sorted order\n");
    s.push_str("  -L, --follow          follow symbolic links met in directories (without it\n");
    s.push_str("                          they are left out, and counted on stderr)\n");
    s.push_str("  -P, --no-follow       do not follow them where the format does by default\n");
    s.push_str("                          (--format=hashdeep follows them, as hashdeep does)\n");
    s.push_str("      --one-file-system  stay on the file system of each directory FILE\n");
    s.push_str("      --exclude=GLOB    leave out matching paths (gitignore syntax; repeatable)\n");
    s.push_str("      --max-depth=N     go at most N levels below each directory FILE\n");
    s.push_str("                          (1: its own files only), as find -maxdepth\n");
    s.push_str("      --update=MANIFEST  bring MANIFEST up to date in place (its own shape and\n");
    s.push_str("                          algorithm; through the cache: only changed files are\n");
    s.push_str("                          read); say what changed (A, D, M and the path)\n");
    s.push_str("      --format=hashdeep  write hashdeep's list (SIZE,DIGEST...,NAME), for -a\n");
    s.push_str("                          md5, sha1, sha256 (several -a: several columns);\n");
    s.push_str("                          names as given, as hashdeep -l writes them (hashdeep\n");
    s.push_str("                          writes absolute ones): audit with hashdeep -l -a, or\n");
    s.push_str(
        "                          name the tree absolutely (-r \"$PWD/dir\") for hashdeep's\n",
    );
    s.push_str("                          own lines\n");
    s.push_str("      --format=NAME     with -c: read the lists as NAME (gnu, bsd, json,\n");
    s.push_str("                          hashdeep, sfv, release), not as their content says\n");
    s.push_str("      --debug           with -c: say which format each list was read as\n");
    s.push_str("      --signature=SIG   with -c: verify the list's detached signature first\n");
    s.push_str("                          (minisign, signify, SSH, OpenPGP); refused: exit 2\n");
    s.push_str("      --key=KEY         with -c: the key to trust (a minisign or signify key,\n");
    s.push_str("                          allowed_signers, an OpenPGP keyring); alone, for a\n");
    s.push_str("                          clearsigned list or signify's SHA256.sig\n");
    s.push_str("      --namespace=NS    with -c: the SSH signature's namespace (file)\n");
    s.push_str(
        "      --dirs            also print each directory's digest (DIGEST  DIR/), after\n",
    );
    s.push_str("                          its files: docs/DIRECTORY-DIGEST.md; with -c, check\n");
    s.push_str(
        "                          the list's directory lines (without it, DIR/ is a file)\n",
    );
    s.push_str("      --prune-matching=F  with -r --json: leave out the directories whose\n");
    s.push_str("                          digests F lists (as fastsum diff sends a host)\n");
    s.push_str("      --files0-from=F   hash the NUL-terminated names in F (-: standard\n");
    s.push_str("                          input) instead of FILE operands\n");
    s.push_str("      --json            print one JSON object per file instead of lines\n");
    s.push_str("      --stamps          with --json: each file's device, inode, mtime and\n");
    s.push_str("                          ctime too, for fastsum scrub --manifest\n");
    s.push_str("      --no-progress     never show the progress bar\n");
    s.push_str("  -e, --rsh=COMMAND     the transport for HOST:PATH operands (default ssh;\n");
    s.push_str("                          also FASTSUM_RSH)\n");
    s.push_str("      --remote-method=NAME  fastsum, coreutils, bsd, perl or python (default:\n");
    s.push_str("                          the first the remote host has, in that order)\n");
    s.push_str("      --remote-fastsum=PATH  the fastsum to run on the remote host\n");
    s.push_str("      --upload-self     copy this fastsum to a private temporary directory on\n");
    s.push_str("                          the host when its uname -sm matches, run it there,\n");
    s.push_str("                          and remove it\n");
    s.push_str("      --download        for s3://BUCKET/PREFIX operands (with -r; lines name\n");
    s.push_str("                          keys below PREFIX): stream and hash an object S3\n");
    s.push_str("                          keeps no digest of in the form asked; without it,\n");
    s.push_str("                          such an object is an error (exit 1). Without -a,\n");
    s.push_str("                          each object's best digest, tagged as its own\n");
    s.push_str("                          algorithm (crc64nvme when downloaded); with\n");
    s.push_str("                          --cache, what S3 said is kept beside the cache\n");
    s.push_str("                          (PATH.s3): an unchanged re-run costs one listing\n");
    s.push_str("      --s3-path-style   address s3:// buckets path-style (endpoint/BUCKET/KEY)\n");
    s.push_str("  -v, --verbose         say which remote method ran (with -c: which format)\n");
    s.push_str("      --io=MODE         auto (default), read or mmap\n");
    s.push_str("      --read-size=BYTES  read size for --io=read (K, M suffixes)\n");
    s.push_str(
        "      --io-depth=N      threads reading ahead of the hashers when the page cache\n",
    );
    s.push_str("                          is cold (default 8; 0: none)\n");
    s.push_str("      --disk=KIND       hdd: read a walked tree's files in inode order (for a\n");
    s.push_str("                          spinning disk); ssd: in walk order; auto (default):\n");
    s.push_str("                          ask sysfs about the device under each directory\n");
    s.push_str("      --no-cache-pollution  drop from the page cache the files this run read\n");
    s.push_str("                          that were not in it before\n");
    s.push_str("      --cache[=PATH]    answer unchanged files from a checksum cache (default\n");
    s.push_str("                          $XDG_CACHE_HOME/fastsum/cache.sqlite); also with -c.\n");
    s.push_str("                          PATH only after '=': --cache x.sqlite hashes x.sqlite\n");
    s.push_str("      --cache-stats     after the run, print cache hits and misses to stderr\n");
    s.push_str("                          (with --cache), and the files too recent to keep:\n");
    s.push_str("                          changed less than 35 s before the run (the kernel's\n");
    s.push_str("                          writeback window; FASTSUM_SETTLE_SECONDS sets it)\n");
    s.push_str("  -q, --quiet           print no notices (links left out ...), only errors and\n");
    s.push_str("                          trouble, so that cron mails only that; with -c, no OK\n");
    s.push_str("                          for each successfully verified file either\n");
    s.push_str("\nThe following four options are useful only when verifying checksums:\n");
    s.push_str("      --ignore-missing  don't fail or report status for missing files\n");
    s.push_str("      --status          don't output anything, status code shows success\n");
    s.push_str("      --strict          exit non-zero for improperly formatted checksum lines\n");
    s.push_str("  -w, --warn            warn about improperly formatted checksum lines\n\n");
    s.push_str("  -h, --help        display this help and exit\n");
    s.push_str("      --version     output version information and exit\n");
    s.push_str("\nALGORITHMS: ");
    s.push_str(&Algorithm::valid_names());
    s.push_str("\n\nPersonalities: invoked through a link named md5sum, sha1sum, sha224sum,\n");
    s.push_str("sha256sum, sha384sum, sha512sum, b2sum, cksum, sum, b3sum or xxhsum, fastsum\n");
    s.push_str("behaves as that tool (scripts/install-links DIR makes the links).\n");
    s.push_str("When checking, BSD-style lines name their algorithm (MD5, SHA256, BLAKE2b,\n");
    s.push_str("BLAKE3, XXH64, ...); other lines use --algorithm.\n");
    s
}

/// The coreutils release whose behaviour the personalities follow (its
/// `-c` quoting, options and messages), named by every `--version`.
pub const GNU_RELEASE: &str = "9.11";

/// `--version`: says honestly what this is, and names the tool it stands in
/// for and the GNU release followed. fastsum's own first line starts with
/// `fastsum ` (the remote side's probe, `remote/script.rs`, looks for it).
pub fn version(name: &str) -> String {
    let v = env!("CARGO_PKG_VERSION");
    if name == "fastsum" {
        let schema = fastsum::output::render::Renderer::JSON_SCHEMA_VERSION;
        format!(
            "fastsum {v} (compatible with GNU coreutils {GNU_RELEASE})\n\
             JSON output schema {schema} (docs/JSON.md)\n"
        )
    } else {
        format!("{name} (fastsum {v}) compatible with GNU coreutils {GNU_RELEASE}\n")
    }
}
