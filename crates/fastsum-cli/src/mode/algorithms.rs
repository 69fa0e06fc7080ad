//! The run's algorithm, from `-a` to the one value every part of the run
//! reads, so no part can use another algorithm. Follow `-a` here: [`Chosen`]
//! is what the options said, in the order given (`-a`, cksum's families, sum's
//! `-r`/`-s`, `-l`, `--part-size`, `--base64`); [`Chosen::resolve`] checks it
//! against the tool and the mode, once, in coreutils' order and words; the
//! [`Algorithms`] it gives (`Options::algorithms`) is the only place the run's
//! algorithm is held. The tree hasher, the renderer and the cache are bound to
//! it when built; `--update` adopts its list's ([`Algorithms::adopt`]).

use crate::mode::run::Ended;
use fastsum::manifest::gnu::Family;
use fastsum::Algorithm;

use crate::mode::run::Run;
use crate::personality::{Tool, ToolKind};

/// What the command line said of the algorithm, before it is resolved.
#[derive(Default)]
pub(super) struct Chosen {
    /// The last `-a`: an algorithm, or cksum's sha2, sha3 or blake2b.
    family: Option<Family>,
    /// fastsum's `-a`, each algorithm named once, in order.
    named: Vec<Algorithm>,
    /// sum's `-r` (BSD) or `-s` (System V), the last given.
    sum: Option<Algorithm>,
    /// `-l BITS` as given (the last one counts), and its text.
    length: Option<(u64, Vec<u8>)>,
    /// `--part-size=SIZE` (fastsum's own): the bytes, and the text given.
    part_size: Option<(u64, Vec<u8>)>,
    /// `--base64`.
    base64: bool,
}

/// The run's algorithm(s) and how digests are written, resolved once.
#[derive(Clone, Debug)]
pub(super) struct Algorithms {
    /// The algorithm the run hashes with (its length and parts applied);
    /// with several `-a`, the last named.
    one: Algorithm,
    /// Several `-a` (one read, several digests: `multi.rs`): each, in the
    /// order named; empty with one algorithm.
    several: Vec<Algorithm>,
    /// cksum's `-a NAME`: the family named (with `-c`, each line says its
    /// own length).
    family: Option<Family>,
    /// `-a` was given: untagged lines are read with it when checking, and
    /// `--update`'s list must be of it.
    specified: bool,
    /// `--base64`: digests written in base64, not hexadecimal.
    base64: bool,
}

impl Chosen {
    /// `-a VALUE` as `kind` reads it: for cksum, one of its names; for
    /// fastsum, any algorithm's name. `Err(status)`: refused, said.
    pub(super) fn algorithm(&mut self, run: &mut Run, value: &[u8]) -> Result<(), Ended> {
        let Some(family) = parse_algorithm(run.tool.kind, value) else {
            return Err(invalid_algorithm(run, value));
        };
        self.family = Some(family);
        let a = default_member(family);
        if run.tool.policy().several_algorithms && !self.named.contains(&a) {
            self.named.push(a);
        }
        Ok(())
    }

    /// sum's `-r` or `-s`.
    pub(super) fn sum(&mut self, algorithm: Algorithm) {
        self.sum = Some(algorithm);
    }

    /// `-l BITS` (its value is checked once the algorithm is known).
    pub(super) fn length(&mut self, bits: u64, text: Vec<u8>) {
        self.length = Some((bits, text));
    }

    /// `--part-size=SIZE`.
    pub(super) fn part_size(&mut self, bytes: u64, text: Vec<u8>) {
        self.part_size = Some((bytes, text));
    }

    /// `--base64`.
    pub(super) fn base64(&mut self) {
        self.base64 = true;
    }

    /// Whether `-l` was given.
    pub(super) fn length_given(&self) -> bool {
        self.length.is_some()
    }

    /// The algorithm(s) for `tool` (`check`: with `-c`): `-l` applied,
    /// then `--part-size`, then `-c` refused for cksum's and sum's
    /// numbers. `Err(status)`: refused, said.
    pub(super) fn resolve(
        self,
        run: &mut Run,
        tool: Tool,
        check: bool,
    ) -> Result<Algorithms, Ended> {
        let given = match (self.family, self.sum) {
            (Some(family), _) => default_member(family),
            (None, Some(sum)) => sum,
            (None, None) => tool.default_algorithm,
        };
        let one = match (tool.kind, self.length) {
            (ToolKind::Cksum, length) => cksum_length(run, self.family, length, check)?,
            (_, Some((bits, text))) => with_length(run, given, bits, &text)?,
            (_, None) => given,
        };
        let several = (self.named.len() > 1).then(|| self.named.clone());
        let mut algorithms = Algorithms {
            one,
            several: several.unwrap_or_default(),
            family: self.family,
            specified: self.family.is_some(),
            base64: self.base64,
        };
        if let Some(size) = self.part_size {
            algorithms.in_parts(run, &self.named, size)?;
        }
        algorithms.refuse_legacy_check(run, check)?;
        Ok(algorithms)
    }
}

impl Algorithms {
    /// The tool's own algorithm, nothing asked (until the options are
    /// resolved).
    pub(super) fn new(tool: Tool) -> Algorithms {
        Algorithms {
            one: tool.default_algorithm,
            several: Vec::new(),
            family: None,
            specified: false,
            base64: false,
        }
    }

    /// The algorithm the run hashes with (with several `-a`, the last
    /// named: see [`Algorithms::all`]).
    pub(super) fn one(&self) -> Algorithm {
        self.one
    }

    /// Each algorithm a file is hashed with: the several `-a`, or the one.
    pub(super) fn all(&self) -> &[Algorithm] {
        match self.several.is_empty() {
            true => std::slice::from_ref(&self.one),
            false => &self.several,
        }
    }

    /// Several `-a`: one read, several digests (`multi.rs`).
    pub(super) fn several(&self) -> bool {
        !self.several.is_empty()
    }

    /// cksum's `-a NAME`, if given.
    pub(super) fn family(&self) -> Option<Family> {
        self.family
    }

    /// Whether `-a` was given.
    pub(super) fn specified(&self) -> bool {
        self.specified
    }

    /// `--base64`.
    pub(super) fn base64(&self) -> bool {
        self.base64
    }

    /// `--update`: the list's algorithm(s), in its order, as `-a` gives them.
    pub(super) fn adopt(&mut self, algorithms: &[Algorithm], base64: bool) {
        self.one = algorithms.last().copied().unwrap_or(self.one);
        if algorithms.len() > 1 {
            self.several = algorithms.to_vec();
        }
        self.base64 |= base64;
    }

    /// `--part-size=SIZE`: the algorithm (each of several `-a`) as S3
    /// keeps it for an upload in parts of SIZE: the ETag for MD5 and
    /// s3etag, the composite checksum for CRC-32, CRC-32C, SHA-1 and
    /// SHA-256. `named`: the `-a` given, each once.
    fn in_parts(
        &mut self,
        run: &mut Run,
        named: &[Algorithm],
        size: (u64, Vec<u8>),
    ) -> Result<(), Ended> {
        let (size, text) = size;
        let wanted = match named.is_empty() {
            true => vec![self.one],
            false => named.to_vec(),
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
                    _ => "S3 keeps digests of parts for s3etag, md5, crc32, crc32c, sha1, sha256, sha512, xxh64, xxh3 and xxh128",
                });
                return Err(run.usage_error(Some(&m)));
            };
            done.push(parts);
        }
        // `one` is among those just mapped.
        self.one = self.one.in_parts(size).unwrap_or(done[0]);
        if self.several() {
            self.several = done;
        }
        Ok(())
    }

    /// `-c` with cksum's and sum's numbers, which are not digests:
    /// refused, as coreutils refuses it; fastsum's own `-c` checks crc32b
    /// (`rhash --simple`'s and SFV's CRC-32).
    fn refuse_legacy_check(&self, run: &mut Run, check: bool) -> Result<(), Ended> {
        let kind = run.tool.kind;
        let own_crc32b = run.tool.policy().checks_crc32b && self.one == Algorithm::Crc32b;
        if check
            && self.one.is_legacy()
            && !own_crc32b
            && (kind != ToolKind::Cksum || self.specified)
        {
            run.error(b"--check is not supported with --algorithm={bsd,sysv,crc,crc32b}");
            return Err(run.ended_by_finish(1));
        }
        Ok(())
    }
}

/// cksum's `-l BITS` (the last one given) checked against `-a` in
/// coreutils 9.10's order and words: the algorithm to hash with (for
/// `-c`, the family's default: each line says its own length).
fn cksum_length(
    run: &mut Run,
    family: Option<Family>,
    length: Option<(u64, Vec<u8>)>,
    check: bool,
) -> Result<Algorithm, Ended> {
    let family = family.unwrap_or(Family::One(Algorithm::Crc));
    let (bits, text) = length.unwrap_or((0, Vec::new()));
    let invalid = |run: &mut Run, then: &[u8]| {
        let mut m = b"invalid length: ".to_vec();
        m.extend(run.quoting.quote(&text));
        run.error(&m);
        run.error(then);
        Ended(1)
    };
    match family {
        Family::One(_) if bits != 0 => {
            run.error(b"--length is only supported with --algorithm blake2b, sha2, or sha3");
            Err(Ended(1))
        }
        Family::One(a) => Ok(a),
        Family::Sha2 | Family::Sha3 => {
            let name = if family == Family::Sha2 {
                "sha2"
            } else {
                "sha3"
            };
            if bits == 0 && text.is_empty() && !check {
                let m = format!(
                    "--algorithm={name} requires specifying --length 224, 256, 384, or 512"
                );
                run.error(m.as_bytes());
                return Err(Ended(1));
            }
            if (!check || !text.is_empty()) && !matches!(bits, 224 | 256 | 384 | 512) {
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
        (family, _) => default_member(family),
    }
}

/// `-l BITS` applied to the algorithm: BLAKE2b's length (0: its default);
/// refused past 512 bits and for any other algorithm, in coreutils' words.
fn with_length(
    run: &mut Run,
    algorithm: Algorithm,
    bits: u64,
    text: &[u8],
) -> Result<Algorithm, Ended> {
    if bits > 512 {
        let mut m = b"invalid length: ".to_vec();
        m.extend(run.quoting.quote(text));
        run.error(&m);
        let mut m = b"maximum digest length for ".to_vec();
        m.extend(run.quoting.quote(b"BLAKE2b"));
        m.extend_from_slice(b" is 512 bits");
        run.error(&m);
        return Err(Ended(1));
    }
    if !bits.is_multiple_of(8) {
        let mut m = b"invalid length: ".to_vec();
        m.extend(run.quoting.quote(text));
        run.error(&m);
        run.error(b"length is not a multiple of 8");
        return Err(Ended(1));
    }
    match algorithm {
        _ if bits == 0 => Ok(algorithm),
        Algorithm::Blake2b { .. } => Ok(Algorithm::Blake2b {
            output_len: (bits / 8) as u8,
        }),
        _ => {
            run.error(b"--length is only supported with --algorithm=blake2b");
            Err(Ended(1))
        }
    }
}

/// `cksum -a`'s names, in its order (coreutils 9.10 matches them exactly).
pub(super) const CKSUM_ALGORITHMS: [(&str, Family); 14] = [
    ("bsd", Family::One(Algorithm::Bsd)),
    ("sysv", Family::One(Algorithm::Sysv)),
    ("crc", Family::One(Algorithm::Crc)),
    ("crc32b", Family::One(Algorithm::Crc32b)),
    ("md5", Family::One(Algorithm::Md5)),
    ("sha1", Family::One(Algorithm::Sha1)),
    ("sha224", Family::One(Algorithm::Sha224)),
    ("sha256", Family::One(Algorithm::Sha256)),
    ("sha384", Family::One(Algorithm::Sha384)),
    ("sha512", Family::One(Algorithm::Sha512)),
    ("sha2", Family::Sha2),
    ("sha3", Family::Sha3),
    ("blake2b", Family::Blake2b),
    ("sm3", Family::One(Algorithm::Sm3)),
];

/// What `-a VALUE` names for `kind`: for cksum, one of its names; for
/// fastsum, any algorithm's name.
fn parse_algorithm(kind: ToolKind, value: &[u8]) -> Option<Family> {
    if kind == ToolKind::Cksum {
        return CKSUM_ALGORITHMS
            .iter()
            .find(|(name, _)| name.as_bytes() == value)
            .map(|&(_, f)| f);
    }
    let name = std::str::from_utf8(value).ok()?;
    Some(Family::One(crate::term::parse_algorithm(name).ok()?))
}

/// The algorithm a family means before its length is known.
pub(super) fn default_member(family: Family) -> Algorithm {
    match family {
        Family::One(a) => a,
        Family::Sha2 => Algorithm::Sha512,
        Family::Sha3 => Algorithm::Sha3_512,
        Family::Blake2b => Algorithm::BLAKE2B,
    }
}

fn invalid_algorithm(run: &mut Run, value: &[u8]) -> Ended {
    let mut m = b"invalid argument ".to_vec();
    m.extend(run.quoting.quote(value));
    m.extend_from_slice(b" for ");
    m.extend(run.quoting.quote(b"--algorithm"));
    run.error(&m);
    let mut list = b"Valid arguments are:\n".to_vec();
    let names: Vec<&str> = if run.tool.kind == ToolKind::Cksum {
        CKSUM_ALGORITHMS.iter().map(|&(name, _)| name).collect()
    } else {
        Algorithm::ALL.iter().map(|a| a.name()).collect()
    };
    for name in names {
        list.extend_from_slice(b"  - ");
        list.extend(run.quoting.quote(name.as_bytes()));
        list.push(b'\n');
    }
    run.out.err_raw(&list);
    run.usage_error(None)
}

#[cfg(test)]
mod tests {
    use fastsum::algo::parts::PartChecksum;
    use fastsum::Algorithm;

    use super::Algorithms;
    use crate::mode::parse::parse;
    use crate::mode::run::Run;
    use crate::personality::Tool;

    /// The algorithms `args` resolve to, run as `tool` (without `-c`).
    fn resolved(tool: Tool, args: &[&str]) -> Algorithms {
        let mut run = Run::new(tool, tool.name.as_bytes().to_vec());
        let args: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
        let parsed = parse(&mut run, &args).expect("the options parse");
        let chosen = parsed.algorithms;
        chosen.resolve(&mut run, tool, false).expect("they resolve")
    }

    fn tool(name: &str) -> Tool {
        Tool::from_program_name(name).expect("a coreutils tool")
    }

    #[test]
    fn nothing_asked_is_the_tools_own() {
        for (tool, args, wanted) in [
            (Tool::FASTSUM, &["f"][..], Algorithm::Md5),
            (tool("sha256sum"), &["f"], Algorithm::Sha256),
            (tool("cksum"), &["f"], Algorithm::Crc),
            (tool("sum"), &["f"], Algorithm::Bsd),
            (tool("sum"), &["-s", "f"], Algorithm::Sysv),
        ] {
            let a = resolved(tool, args);
            let got = (a.one(), a.all(), a.specified());
            assert_eq!(got, (wanted, &[wanted][..], false));
        }
    }

    #[test]
    fn several_a_are_each_named_once_in_order_and_the_last_is_the_runs() {
        let a = resolved(
            Tool::FASTSUM,
            &["-a", "sha256", "-a", "md5", "-a", "sha256"],
        );
        assert!(a.several() && a.specified());
        assert_eq!(a.all(), &[Algorithm::Sha256, Algorithm::Md5]);
        assert_eq!(a.one(), Algorithm::Sha256);
        let a = resolved(Tool::FASTSUM, &["-a", "sha1", "-a", "sha1"]);
        assert!(!a.several());
        assert_eq!(a.all(), &[Algorithm::Sha1]);
    }

    #[test]
    fn length_applies_to_the_family_named() {
        let blake2b_256 = Algorithm::Blake2b { output_len: 32 };
        assert_eq!(resolved(tool("b2sum"), &["-l", "256"]).one(), blake2b_256);
        assert_eq!(
            resolved(Tool::FASTSUM, &["-a", "blake2b", "-l", "256"]).one(),
            blake2b_256
        );
        let a = resolved(tool("cksum"), &["-a", "sha2", "-l", "384"]);
        assert_eq!(a.one(), Algorithm::Sha384);
        assert_eq!(a.family(), Some(fastsum::manifest::gnu::Family::Sha2));
    }

    #[test]
    fn part_size_applies_to_each_algorithm_and_base64_is_kept() {
        let part_size = 8 << 20;
        let a = resolved(
            Tool::FASTSUM,
            &["--part-size=8MiB", "--base64", "-a", "md5", "-a", "sha256"],
        );
        let sha256 = PartChecksum::of(Algorithm::Sha256).expect("S3 keeps SHA-256 of parts");
        let in_parts = [
            Algorithm::S3Etag { part_size },
            Algorithm::Composite {
                of: sha256,
                part_size,
            },
        ];
        assert_eq!(a.all(), &in_parts);
        assert_eq!(a.one(), in_parts[1]);
        assert!(a.base64());
    }

    #[test]
    fn update_adopts_the_lists_algorithm() {
        let mut a = resolved(Tool::FASTSUM, &["-r", "."]);
        a.adopt(&[Algorithm::Blake3], false);
        assert_eq!(a.all(), &[Algorithm::Blake3]);
    }
}
