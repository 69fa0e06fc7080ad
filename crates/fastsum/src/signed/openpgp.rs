//! OpenPGP signatures through rPGP (`pgp`, pure Rust: RSA, EdDSA, ECDSA
//! and DSA keys), against a keyring the caller gives (binary, as
//! `/usr/share/keyrings/*.gpg`, or armored). What `gpgv` judges besides
//! the mathematics is judged here: the signing key found by the
//! signature's issuer (a primary key or a bound subkey), the signature's
//! expiry, and a revoked key, which `gpgv` accepts (`REVKEYSIG`) and
//! fastsum refuses.

use std::time::SystemTime;

use pgp::composed::{Deserializable, DetachedSignature, SignedPublicKey, SignedPublicSubKey};
use pgp::crypto::hash::HashAlgorithm;
use pgp::packet::{Signature, SignatureType};
use pgp::types::KeyDetails;

use super::clearsigned::{self, Block};
use super::ssh::unix_seconds;
use super::{Refusal, RefusalKind, Scheme, Signer};

/// The keys of a keyring; keys rPGP cannot read are passed over (a
/// keyring of many keys may hold an old one), none at all is refused.
fn keyring(key: &[u8]) -> Result<Vec<SignedPublicKey>, Refusal> {
    let (keys, _) = SignedPublicKey::from_reader_many(key)
        .map_err(|e| Refusal::malformed(format!("invalid OpenPGP keyring: {}", brief(&e))))?;
    let keys: Vec<SignedPublicKey> = keys.filter_map(Result::ok).collect();
    if keys.is_empty() {
        return Err(Refusal::malformed("invalid OpenPGP keyring: no public key in it"));
    }
    Ok(keys)
}

/// rPGP's error, cut to one short line: some carry the bytes they could
/// not read, hundreds of numbers long.
fn brief(e: &dyn std::fmt::Display) -> String {
    let text = e.to_string();
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

fn signatures(signature: &[u8]) -> Result<Vec<Signature>, Refusal> {
    let bad = |e: &dyn std::fmt::Display| {
        Refusal::malformed(format!("invalid OpenPGP signature: {}", brief(e)))
    };
    let (found, _) = DetachedSignature::from_reader_many(signature).map_err(|e| bad(&e))?;
    let mut out = Vec::new();
    for signature in found {
        out.push(signature.map_err(|e| bad(&e))?.signature);
    }
    if out.is_empty() {
        return Err(bad(&"no signature packet"));
    }
    Ok(out)
}

/// `message` against a detached signature (`gpg --detach-sign`, armored
/// or binary) with the keys of `key`.
pub fn verify_detached(
    message: &[u8],
    signature: &[u8],
    key: &[u8],
    now: SystemTime,
) -> Result<Signer, Refusal> {
    shielded(|| verify_all(message, &signatures(signature)?, &keyring(key)?, now))
}

/// A clearsigned block's signature (split by `clearsigned::split`).
pub fn verify_cleartext(block: &Block, key: &[u8], now: SystemTime) -> Result<Signer, Refusal> {
    let signed = clearsigned::signed_bytes(&block.message);
    shielded(|| {
        let signatures = signatures(&block.signature)?;
        for signature in &signatures {
            hash_header_names(block, signature)?;
        }
        verify_all(&signed, &signatures, &keyring(key)?, now)
    })
}

/// A clearsigned block's `Hash:` headers must name each signature's hash,
/// as gpgv demands: a block without one, or whose header says another,
/// is refused (RFC 9580 §7.1: a v4 signature's block names its hash).
fn hash_header_names(block: &Block, signature: &Signature) -> Result<(), Refusal> {
    let Some(hash) = signature.hash_alg() else {
        return Err(Refusal::malformed("a signature that names no hash algorithm"));
    };
    let name = hash.to_string();
    if block.hashes.contains(&name) {
        return Ok(());
    }
    let said = match block.hashes.as_slice() {
        [] => "the clearsigned block has no Hash: header".to_owned(),
        named => format!("its Hash: header says {}", named.join(", ")),
    };
    Err(Refusal::malformed(format!(
        "{said}, its signature is made over {name} (gpgv refuses such a block too)"
    )))
}

/// rPGP's parsers can panic on hostile input (pgp 0.21.0, the newest:
/// an armor footer it cannot read leaves its reader in a state whose next
/// read panics, "invalid state", found by this crate's fuzz target
/// `signed`). A panic there is a signature or keyring that could not be
/// read: refused as malformed, never a verdict, never a crash of the run.
/// (Built with `panic = "abort"`, the process would still stop: no
/// signature is ever taken as good.)
fn shielded(verify: impl FnOnce() -> Result<Signer, Refusal>) -> Result<Signer, Refusal> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(verify)).unwrap_or_else(|_| {
        Err(Refusal::malformed(
            "invalid OpenPGP signature or keyring: the OpenPGP parser could not read it",
        ))
    })
}

/// Every signature by a key of the keyring must hold (as `gpgv`: one bad
/// signature fails the lot); at least one must be by a key it holds.
/// Signatures by keys it does not hold are said in the notes.
fn verify_all(
    message: &[u8],
    signatures: &[Signature],
    keys: &[SignedPublicKey],
    now: SystemTime,
) -> Result<Signer, Refusal> {
    let mut signer: Option<Signer> = None;
    let mut unknown = Vec::new();
    for signature in signatures {
        match find_key(signature, keys) {
            None => unknown.push(issuer(signature)),
            Some((key, subkey)) => {
                let who = verify_one(message, signature, key, subkey, now)?;
                match signer.as_mut() {
                    Some(first) => first.notes.push(format!("also signed by {}", who.who)),
                    None => signer = Some(who),
                }
            }
        }
    }
    let Some(mut signer) = signer else {
        return Err(Refusal::new(
            RefusalKind::WrongKey,
            format!("signed by key {}, which the keyring does not hold", unknown.join(", ")),
        ));
    };
    for id in unknown {
        signer.notes.push(format!("also signed by key {id}, which the keyring does not hold"));
    }
    Ok(signer)
}

fn issuer(signature: &Signature) -> String {
    if let Some(fingerprint) = signature.issuer_fingerprint().first() {
        return format!("{fingerprint:X}");
    }
    match signature.issuer_key_id().first() {
        Some(id) => id.as_ref().iter().map(|b| format!("{b:02X}")).collect(),
        None => "(no issuer)".to_owned(),
    }
}

fn names(signature: &Signature, key: &impl KeyDetails) -> bool {
    let fingerprint = key.fingerprint();
    let id = key.legacy_key_id();
    signature.issuer_fingerprint().iter().any(|f| **f == fingerprint)
        || signature.issuer_key_id().iter().any(|k| **k == id)
}

/// The key (and subkey) a signature names.
fn find_key<'k>(
    signature: &Signature,
    keys: &'k [SignedPublicKey],
) -> Option<(&'k SignedPublicKey, Option<&'k SignedPublicSubKey>)> {
    keys.iter().find_map(|key| {
        if names(signature, &key.primary_key) {
            return Some((key, None));
        }
        key.public_subkeys
            .iter()
            .find(|sub| names(signature, &sub.key))
            .map(|sub| (key, Some(sub)))
    })
}

fn verify_one(
    message: &[u8],
    signature: &Signature,
    key: &SignedPublicKey,
    subkey: Option<&SignedPublicSubKey>,
    now: SystemTime,
) -> Result<Signer, Refusal> {
    let who = format!("key {:X} ({})", key.primary_key.fingerprint(), user_id(key));
    weak_hash(signature, &who)?;
    let verified = match subkey {
        Some(sub) => {
            bound(key, sub)?;
            signature.verify(&sub.key, message)
        }
        None => signature.verify(&key.primary_key, message),
    };
    verified.map_err(|_| {
        Refusal::new(
            RefusalKind::Changed,
            format!("BAD signature by {who}: the list changed after signing"),
        )
    })?;
    if !matches!(signature.typ(), Some(SignatureType::Binary | SignatureType::Text)) {
        return Err(Refusal::malformed(format!(
            "a signature by {who} that does not sign a document"
        )));
    }
    expiry(signature, now, &who)?;
    revocation(key, subkey, &who)?;
    Ok(Signer {
        scheme: Scheme::OpenPgp,
        who,
        notes: Vec::new(),
    })
}

/// The rule for a signature's hash: one made over MD5, SHA-1 or
/// RIPEMD-160 is refused as weak, before any check, never reported as a
/// list changed after signing (rPGP's Ed25519 check fails on them, which
/// read as "BAD signature"). apt refuses such signatures too; gpgv still
/// accepts SHA-1 ones.
fn weak_hash(signature: &Signature, who: &str) -> Result<(), Refusal> {
    let name = match signature.hash_alg() {
        Some(HashAlgorithm::Md5) => "MD5",
        Some(HashAlgorithm::Sha1) => "SHA-1",
        Some(HashAlgorithm::Ripemd160) => "RIPEMD-160",
        _ => return Ok(()),
    };
    Err(Refusal::new(
        RefusalKind::Unsupported,
        format!(
            "the signature by {who} is made over {name}, a hash too weak to trust \
             (apt refuses it too): sign with SHA-256 or stronger"
        ),
    ))
}

/// A subkey signs for its primary key only when a binding signature by
/// the primary key holds.
fn bound(key: &SignedPublicKey, sub: &SignedPublicSubKey) -> Result<(), Refusal> {
    let bound = sub.signatures.iter().any(|sig| {
        matches!(sig.typ(), Some(SignatureType::SubkeyBinding))
            && sig.verify_subkey_binding(&key.primary_key, &sub.key).is_ok()
    });
    if bound {
        return Ok(());
    }
    Err(Refusal::new(
        RefusalKind::WrongKey,
        format!("subkey {:X} is not bound to its primary key", sub.key.fingerprint()),
    ))
}

fn expiry(signature: &Signature, now: SystemTime, who: &str) -> Result<(), Refusal> {
    let (Some(created), Some(lasts)) = (signature.created(), signature.signature_expiration_time())
    else {
        return Ok(());
    };
    let lasts = u64::from(lasts.as_secs());
    let ends = u64::from(created.as_secs()) + lasts;
    if lasts > 0 && unix_seconds(now) >= ends {
        return Err(Refusal::new(
            RefusalKind::Expired,
            format!("the signature by {who} expired (made at {}, valid {lasts} s)", created.as_secs()),
        ));
    }
    Ok(())
}

fn revocation(key: &SignedPublicKey, subkey: Option<&SignedPublicSubKey>, who: &str) -> Result<(), Refusal> {
    let revoked = key
        .details
        .revocation_signatures
        .iter()
        .any(|sig| sig.verify_key(&key.primary_key).is_ok());
    let sub_revoked = subkey.is_some_and(|sub| {
        sub.signatures.iter().any(|sig| {
            matches!(sig.typ(), Some(SignatureType::SubkeyRevocation))
                && sig.verify_subkey_binding(&key.primary_key, &sub.key).is_ok()
        })
    });
    if revoked || sub_revoked {
        return Err(Refusal::new(
            RefusalKind::Revoked,
            format!("{who} is revoked (gpgv accepts such signatures; fastsum does not)"),
        ));
    }
    Ok(())
}

fn user_id(key: &SignedPublicKey) -> String {
    let users = &key.details.users;
    let primary = users
        .iter()
        .find(|u| u.signatures.iter().any(Signature::is_primary))
        .or(users.first());
    primary.map_or_else(
        || "no user id".to_owned(),
        |u| String::from_utf8_lossy(u.id.id()).into_owned(),
    )
}
