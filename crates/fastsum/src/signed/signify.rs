//! OpenBSD's signify: Ed25519 over the whole message, keys and signatures
//! in two lines (`untrusted comment: ...`, then base64 of the algorithm
//! `Ed`, an 8-byte key number and the key or signature), read here as
//! signify reads them; `-e` files carry the message after those two lines
//! (OpenBSD's `SHA256.sig`, which `signify -C` checks).

use base64ct::{Base64, Encoding};
use ed25519_dalek::{Signature, VerifyingKey};

use super::{Opened, Refusal, RefusalKind, Scheme, Signer};

const COMMENT: &[u8] = b"untrusted comment: ";
/// signify's `COMMENTMAXLEN`.
const COMMENT_MOST: usize = 1024;

/// A public key: its key number and Ed25519 key.
pub(crate) struct PublicKey {
    pub(crate) keynum: [u8; 8],
    key: VerifyingKey,
}

/// The two lines at the start of `text` (comment, base64 blob of `size`
/// bytes starting `Ed`): the blob and what follows.
pub(crate) fn two_lines<'t>(
    text: &'t [u8],
    size: usize,
    what: &str,
) -> Result<(Vec<u8>, &'t [u8]), Refusal> {
    let bad = |why: &str| Refusal::malformed(format!("invalid {what}: {why}"));
    let rest = text
        .strip_prefix(COMMENT)
        .ok_or_else(|| bad("no 'untrusted comment: ' line"))?;
    let end = rest
        .iter()
        .position(|&b| b == b'\n')
        .ok_or_else(|| bad("no line after the comment"))?;
    if end >= COMMENT_MOST {
        return Err(bad("comment too long"));
    }
    let rest = rest.get(end + 1..).unwrap_or_default();
    let end = rest
        .iter()
        .position(|&b| b == b'\n')
        .ok_or_else(|| bad("its base64 line does not end"))?;
    let line = rest.get(..end).unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = std::str::from_utf8(line).map_err(|_| bad("not base64"))?;
    let blob = Base64::decode_vec(text).map_err(|_| bad("not base64"))?;
    if blob.len() != size {
        return Err(bad("wrong length"));
    }
    Ok((blob, rest.get(end + 1..).unwrap_or_default()))
}

/// signify's one algorithm.
fn ed25519_only(blob: &[u8], what: &str) -> Result<(), Refusal> {
    if blob.get(..2) == Some(b"Ed") {
        return Ok(());
    }
    Err(Refusal::new(
        RefusalKind::Unsupported,
        format!("{what}: unsupported algorithm (not Ed25519)"),
    ))
}

/// A signify (or minisign) public key file.
pub(crate) fn public_key(text: &[u8]) -> Result<PublicKey, Refusal> {
    let (blob, _) = two_lines(text, 42, "public key")?;
    ed25519_only(&blob, "public key")?;
    let keynum: [u8; 8] = array(blob.get(2..10))?;
    let key: [u8; 32] = array(blob.get(10..42))?;
    let key = VerifyingKey::from_bytes(&key)
        .map_err(|_| Refusal::malformed("invalid public key: not an Ed25519 point"))?;
    Ok(PublicKey { keynum, key })
}

fn array<const N: usize>(bytes: Option<&[u8]>) -> Result<[u8; N], Refusal> {
    bytes
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| Refusal::malformed("truncated"))
}

/// `message` against a detached signify signature (`signify -V`).
pub fn verify_detached(message: &[u8], signature: &[u8], key: &[u8]) -> Result<Signer, Refusal> {
    let (blob, _) = two_lines(signature, 74, "signature")?;
    verify_blob(message, &blob, key)
}

fn verify_blob(message: &[u8], blob: &[u8], key: &[u8]) -> Result<Signer, Refusal> {
    ed25519_only(blob, "signature")?;
    let key = public_key(key)?;
    let keynum: [u8; 8] = array(blob.get(2..10))?;
    if keynum != key.keynum {
        return Err(Refusal::new(
            RefusalKind::WrongKey,
            format!(
                "signed by another key (key number {}, the key given is {})",
                hex(&keynum),
                hex(&key.keynum)
            ),
        ));
    }
    let signature: [u8; 64] = array(blob.get(10..74))?;
    key.key
        .verify_strict(message, &Signature::from_bytes(&signature))
        .map_err(|_| {
            Refusal::new(
                RefusalKind::Changed,
                "the signature does not match: the list changed after signing",
            )
        })?;
    Ok(Signer {
        scheme: Scheme::Signify,
        who: format!("key number {}", hex(&keynum)),
        notes: Vec::new(),
    })
}

/// A signify `-e` file (signature, then the message) verified and opened.
pub fn open_embedded(file: &[u8], key: &[u8]) -> Result<Opened, Refusal> {
    let (blob, message) = two_lines(file, 74, "signature")?;
    let signer = verify_blob(message, &blob, key)?;
    Ok(Opened {
        signer,
        message: message.to_vec(),
        unsigned: Vec::new(),
    })
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
