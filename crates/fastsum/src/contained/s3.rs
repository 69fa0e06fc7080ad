//! Objects in S3 below `s3://bucket/prefix` as an archive, decided by
//! the rule of `diff`'s S3 side: every digest S3 keeps of an
//! object (`s3::claim::claims_of`: the single-part ETag that is the MD5,
//! each full-object and composite checksum, a multipart ETag with its part
//! sizes) must agree with a source file's bytes, computed here in each
//! one's form from one read (`s3::local::digests_in_forms`), for the
//! object to hold them. One that disagrees is enough to say it does not:
//! an MD5 collision beside a CRC-64/NVME is caught by the CRC, a forged
//! CRC by the MD5.
//!
//! Cost grows with what can match, as for a tree: the listing gives every
//! object's size, and only the objects of a size an open source file has
//! are asked for their digests (one HeadObject each, `-j` at a time, from
//! the claim cache where `--cache` keeps one); only the source files of
//! a size such an object has are read, each once, in the forms of all
//! the objects of its size.
//!
//! An object S3 gives no digest of that fastsum can compute (SSE-KMS, a
//! composite checksum whose part sizes are not to be had, an ETag that
//! is no MD5), or one whose HeadObject failed or lied, cannot say whether
//! it holds a file of its size: such a file, unless another object or
//! archive holds it, is a problem (`Answers::doubts`), never "not
//! contained". With `--download` such an object's bytes are streamed
//! (never stored) and hashed in SHA-256, and that digest stands in for
//! the ones S3 could not give; with `--verify`, each object found to
//! hold a file is streamed and compared with it byte for byte before the
//! file is called contained. Keys are never paths here (nothing is
//! written): a key is only shown, escaped, as the copy's name.

use std::collections::BTreeMap;
use std::path::Path;

use rayon::prelude::*;

use super::answers::{Answers, Problems};
use super::{ArchiveCopy, ContainedOptions};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::dupes::items::{is_version_of, Candidates};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::FileStamp;
use crate::s3::cache::{claims_kept_or_asked, ClaimCache};
use crate::s3::claim::{Claim, Kind};
use crate::s3::http::Client;
use crate::s3::listing::{io_error, shown, DEFAULT_REQUESTS};
use crate::s3::xml::Listed;
use crate::s3::{S3Config, S3Url};

/// What an object of a candidate size came to.
enum Object {
    /// Its digests, each of a form fastsum computes.
    Decided(Vec<Claim>),
    /// Why it cannot say whether it holds a file of its size, and whether
    /// `--download` could (its bytes can be asked for).
    Undecided(String, bool),
}

/// The objects of one size: those that can say (with their digests), and
/// why each other cannot.
type OfSize<'a> = (Vec<(&'a Listed, Vec<Claim>)>, Vec<String>);

/// Matches the open source files against the objects below `operand`,
/// archive number `archive`. A listing that cannot be had or believed is
/// an error (a shorter one would make false "not contained" answers).
pub(super) fn match_s3(
    operand: &Path,
    archive: usize,
    src: &Candidates,
    options: &ContainedOptions,
    answers: &mut Answers,
    problems: &Problems,
) -> Result<()> {
    let bytes = crate::fs::name::path_bytes(operand);
    let Some(url) = S3Url::parse(bytes) else {
        let why = "not an s3://BUCKET[/PREFIX] operand".to_string();
        return Err(Error::with_path(operand, io_error(why)));
    };
    let config = S3Config::from_environment(options.s3.path_style);
    let client = Client::new(&config, &url.bucket)
        .map_err(|e| Error::with_path(url.to_string(), io_error(e)))?;
    let open: Vec<usize> = (0..src.len()).filter(|&i| answers.open(i)).collect();
    let mut sizes: Vec<u64> = open.iter().map(|&i| src.stamps[i].size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let listing = crate::s3::listing::listing(&client, &url)?;
    // Only the objects a source file's size could be: the rest are never
    // asked for anything. A key `keys.rs` refuses (outside the prefix, a
    // `.` or `..` component, `//`, not UTF-8) is never asked for either:
    // a request for it could reach another object, so it holds nothing it can show.
    let objects: Vec<(&Listed, Option<&String>)> = listing
        .iter()
        .filter(|(o, _)| sizes.binary_search(&o.size).is_ok())
        .map(|(o, relative)| (o, relative.as_ref().err()))
        .collect();
    let cache = options
        .s3
        .cache
        .as_deref()
        .and_then(|path| ClaimCache::open(path, &config));
    let ask = |&(object, refused): &(&Listed, Option<&String>)| match refused {
        Some(why) => Object::Undecided(format!("{why}: it is never asked for"), false),
        None => decide(&client, &url, object, options, cache.as_ref()),
    };
    let decided =
        crate::s3::listing::in_parallel(&objects, options.s3.jobs, DEFAULT_REQUESTS, &ask);
    // By size: the objects that can say, and why the others cannot.
    let mut by_size: BTreeMap<u64, OfSize> = BTreeMap::new();
    for ((object, _), outcome) in objects.iter().zip(decided) {
        let entry = by_size.entry(object.size).or_default();
        match outcome {
            Object::Decided(claims) => entry.0.push((object, claims)),
            Object::Undecided(why, downloadable) => {
                let name = crate::escape::display_path(&shown(&url, &object.key));
                let hint = match downloadable && !options.s3.download {
                    true => "; --download compares them",
                    false => "",
                };
                entry.1.push(format!(
                    "{name}, of its size, cannot say whether it holds its bytes ({why}){hint}"
                ))
            }
        }
    }
    let found: Vec<(usize, Found)> = open
        .par_iter()
        .filter_map(|&i| {
            let (decidable, undecided) = by_size.get(&src.stamps[i].size)?;
            let found = match holder(src.path(i), &src.stamps[i], decidable) {
                // --verify: the object's bytes themselves, streamed.
                Ok(Some(object)) if options.verify => {
                    match verified(&client, &url, object, src.path(i)) {
                        Ok(()) => Found::Copy(ArchiveCopy {
                            archive,
                            path: shown(&url, &object.key),
                            stamp: None,
                        }),
                        Err(why) => {
                            problems.add(src.path(i), why);
                            Found::Trouble
                        }
                    }
                }
                Ok(Some(object)) => Found::Copy(ArchiveCopy {
                    archive,
                    path: shown(&url, &object.key),
                    stamp: None,
                }),
                Ok(None) => match undecided.first() {
                    Some(why) => Found::Doubt(why.clone()),
                    None => return None,
                },
                Err(why) => {
                    problems.add(src.path(i), why);
                    Found::Trouble
                }
            };
            Some((i, found))
        })
        .collect();
    for (i, found) in found {
        match found {
            Found::Copy(copy) => answers.copies[i] = Some(copy),
            Found::Doubt(why) => answers.doubts.push((i, why)),
            Found::Trouble => answers.trouble[i] = true,
        }
    }
    Ok(())
}

/// What the objects of a source file's size said of it (nothing: none
/// holds it, and every one of them could say).
enum Found {
    Copy(ArchiveCopy),
    /// None held it, but this one could not say.
    Doubt(String),
    /// The file could not be read (said).
    Trouble,
}

/// `Ok` when `object`'s bytes, streamed, are the file's (`--verify`);
/// else why not.
fn verified(
    client: &Client,
    url: &S3Url,
    object: &Listed,
    path: &Path,
) -> std::result::Result<(), String> {
    let name = || crate::escape::display_path(&shown(url, &object.key));
    match crate::s3::download::same_bytes(client, object, path) {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!(
            "its archive copy {} has its digests but other bytes (--verify)",
            name()
        )),
        Err(why) => Err(format!("its archive copy {}: {why} (--verify)", name())),
    }
}

/// What S3 says of `object`'s bytes (the claim cache first), each digest
/// one fastsum can compute; with `download`, an object it gives none of
/// (or one it cannot compute beside the others) is streamed and hashed.
fn decide(
    client: &Client,
    url: &S3Url,
    object: &Listed,
    options: &ContainedOptions,
    cache: Option<&ClaimCache>,
) -> Object {
    let Ok(key) = std::str::from_utf8(&object.key) else {
        return Object::Undecided("its key is not UTF-8".into(), false);
    };
    let claims = match claims_kept_or_asked(cache, client, &url.bucket, key, object) {
        Ok(claims) => claims,
        Err(why) => return Object::Undecided(why, false),
    };
    let opaque = claims.iter().find_map(|c| match c {
        Claim::Opaque(why) => Some(why.clone()),
        _ => None,
    });
    let Some(why) = opaque else {
        return Object::Decided(claims);
    };
    if !options.s3.download {
        return Object::Undecided(why, true);
    }
    // The bytes themselves, in a digest no writer to the bucket can
    // forge; the claims S3 did give must still agree.
    match crate::s3::download::digest_of(client, object, Algorithm::Sha256) {
        Ok(digest) => {
            let mut claims: Vec<Claim> = claims
                .into_iter()
                .filter(|c| !matches!(c, Claim::Opaque(_)))
                .collect();
            claims.push(Claim::Whole {
                kind: Kind::Sha256,
                value: digest.as_bytes().to_vec(),
            });
            Object::Decided(claims)
        }
        Err(why) => Object::Undecided(format!("{why}, downloading it"), false),
    }
}

/// The first of `objects` (all of the file's size) whose every claim
/// agrees with the file's bytes, from one read of the version `stamp`
/// names in the forms of all their claims; `Err` for a file that could
/// not be so read.
fn holder<'a>(
    path: &Path,
    stamp: &FileStamp,
    objects: &'a [(&'a Listed, Vec<Claim>)],
) -> std::result::Result<Option<&'a Listed>, String> {
    if objects.is_empty() {
        return Ok(None);
    }
    // Each distinct form once (the objects of one size mostly share
    // theirs: an MD5 ETag, S3's default CRC-64/NVME).
    let mut forms: Vec<Claim> = Vec::new();
    let mut form_of: Vec<Vec<usize>> = Vec::with_capacity(objects.len());
    for (_, claims) in objects {
        let at = claims
            .iter()
            .map(|claim| {
                let form = form(claim);
                match forms.iter().position(|f| *f == form) {
                    Some(at) => at,
                    None => {
                        forms.push(form);
                        forms.len() - 1
                    }
                }
            })
            .collect();
        form_of.push(at);
    }
    let digests = read_in_forms(path, stamp, &forms)?;
    Ok(objects
        .iter()
        .zip(&form_of)
        .find(|((_, claims), at)| {
            let mine: Vec<Option<Digest>> = at.iter().map(|&f| digests[f]).collect();
            crate::s3::local::claims_agree(claims, &mine) == Some(true)
        })
        .map(|((object, _), _)| *object))
}

/// A claim without its value: what to compute.
fn form(claim: &Claim) -> Claim {
    match claim {
        Claim::Whole { kind, .. } => Claim::Whole {
            kind: *kind,
            value: Vec::new(),
        },
        Claim::Parts { kind, parts, .. } => Claim::Parts {
            kind: *kind,
            value: Vec::new(),
            parts: parts.clone(),
        },
        Claim::Opaque(why) => Claim::Opaque(why.clone()),
    }
}

/// The file's digests in `forms`, read once through the one safe open,
/// only as the version `stamp` names (`dupes::items::is_version_of`),
/// every byte of it: a file that is another now, or that ends short or
/// runs on, is "changed while reading".
fn read_in_forms(
    path: &Path,
    stamp: &FileStamp,
    forms: &[Claim],
) -> std::result::Result<Vec<Option<Digest>>, String> {
    let changed = || ErrorKind::ChangedWhileReading.to_string();
    let file = crate::fs::regular::open_regular(path).map_err(|e| e.kind().to_string())?;
    let opened = crate::fs::stat::fstat(&file).map_err(|e| e.to_string())?;
    if !is_version_of(&opened, stamp) {
        return Err(changed());
    }
    let mut counted = Counted { file, read: 0 };
    let digests = crate::s3::local::digests_in_forms(forms, &mut counted)
        .map_err(|e| ErrorKind::Io(e).to_string())?;
    if counted.read != stamp.size {
        return Err(changed());
    }
    Ok(digests)
}

/// A reader that counts what it gave.
struct Counted {
    file: std::fs::File,
    read: u64,
}

impl std::io::Read for Counted {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buffer)?;
        self.read += n as u64;
        Ok(n)
    }
}
