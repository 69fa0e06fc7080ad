//! By which digest a list of several digests a file is compared: the
//! one `-a` names, else all of them at once (a joint digest), else (a
//! digest of parts) the hardest to forge; and whether a list that also
//! gives digests fastsum cannot compute may be read at all. The one rule
//! the tagged, JSON and hashdeep readers share.

use crate::algo::Algorithm;
use crate::digest::Digest;

/// What `diff`, `contained`, `audit` and `scrub` compare a list of
/// `algorithms` a file by: `given` (`-a`) where it names one of them,
/// else every one at once ([`Algorithm::joint`]: a file is the same only
/// when each of its digests agrees, as `-c` checks each line, BLAKE2b of
/// several lengths too), else (a member a joint digest cannot hold: a
/// digest of parts) the hardest to forge ([`deciding`]). The one rule for tagged lines of several
/// `-a`, `--json` records with `"digests"` and hashdeep's columns: one
/// digest deciding let a pair that collides in it pass (the SHAttered
/// pair in a list of SHA-1 and MD5, an MD5 collision beside XXH128).
pub(crate) fn compared_by(algorithms: &[Algorithm], given: Option<Algorithm>) -> Option<Algorithm> {
    if let Some(given) = given.filter(|g| among(*g, algorithms)) {
        return Some(given);
    }
    Algorithm::joint(algorithms).or_else(|| deciding(algorithms.iter().copied()))
}

/// Whether `given` is one of `algorithms`, or all of them at once (their
/// joint algorithm).
pub(super) fn among(given: Algorithm, algorithms: &[Algorithm]) -> bool {
    algorithms.contains(&given) || Algorithm::joint(algorithms) == Some(given)
}

/// A file's digest in `algorithm` from the digests a list gives it (each
/// with its algorithm): the one of that algorithm, or every member's
/// joined for a joint one; `Err` names the member it lacks.
pub(crate) fn digest_as(
    algorithm: Algorithm,
    digests: &[(Algorithm, Digest)],
) -> Result<Digest, Algorithm> {
    let of = |a: Algorithm| digests.iter().find(|(b, _)| *b == a).map(|(_, d)| *d).ok_or(a);
    match algorithm {
        Algorithm::Joint { .. } => {
            let members: Vec<Digest> = algorithm.members().map(of).collect::<Result<_, _>>()?;
            Ok(Algorithm::joined(&members))
        }
        one => of(one),
    }
}

/// Of `algorithms`, the hardest to forge (any cryptographic digest over a
/// CRC or an xxHash, SHA-1 over MD5, then the longest), the first listed
/// among equals: what decides where they cannot be compared at once
/// ([`compared_by`]).
pub(crate) fn deciding(algorithms: impl IntoIterator<Item = Algorithm>) -> Option<Algorithm> {
    let mut best: Option<Algorithm> = None;
    for algorithm in algorithms {
        if best.is_none_or(|b| forge_cost(algorithm) > forge_cost(b)) {
            best = Some(algorithm);
        }
    }
    best
}

/// Whether `decider` may decide a list that also gives digests fastsum
/// cannot compute (`unknown`: hashdeep's tiger or whirlpool columns, a
/// `"digests"` member of another name or not a string): where it is
/// sound (SHA-2, SHA-3, BLAKE2b, BLAKE3, SM3), or named by `-a`. Beside
/// only MD5, SHA-1 or a CRC, the digest left out might be the one that
/// tells a forged file (an MD5 collision passed beside a tiger column,
/// exit 0), so the list is refused, never read as if that were all.
pub(super) fn decides_beside_unknown(
    decider: Algorithm,
    unknown: &str,
    given: Option<Algorithm>,
) -> Result<(), String> {
    if forge_cost(decider).0 >= 3 || given.is_some() {
        return Ok(());
    }
    let give = match decider {
        Algorithm::Joint { .. } => {
            let names: Vec<String> = decider.members().map(|m| format!("-a {m}")).collect();
            format!("give {} to compare by one of them", names.join(" or "))
        }
        one => format!("give -a {one} to compare by it"),
    };
    Err(format!(
        "{unknown} cannot be computed here, and {decider} alone is easily forged: {give}"
    ))
}

/// How hard a digest of `algorithm` is to forge, comparable: its class
/// (no cryptographic claim, broken, weakened, sound), then its length. A
/// sound function cut short is only as good as its length: BLAKE2b-8 is
/// one byte, forged in 256 tries (when it decided over MD5, a
/// forged file passed `diff`, `audit` and `scrub --manifest`), so below
/// 128 bits it has no claim, and below 224 it ranks with SHA-1.
fn forge_cost(algorithm: Algorithm) -> (u8, usize) {
    use Algorithm as A;
    let len = algorithm.output_len();
    let class = match algorithm {
        A::Bsd | A::Sysv | A::Crc | A::Crc32b | A::Crc32 | A::Crc32c | A::Crc64Nvme => 0,
        A::Xxh32 | A::Xxh64 | A::Xxh3 | A::Xxh128 => 0,
        A::Md5 | A::S3Etag { .. } => 1,
        A::Composite { of, .. } => forge_cost(of.algorithm()).0,
        A::Joint { .. } => algorithm.members().map(|m| forge_cost(m).0).max().unwrap_or(0),
        A::Sha1 => 2,
        _ if len < 16 => 0,
        _ if len < 28 => 2,
        _ => 3,
    };
    (class, len)
}
