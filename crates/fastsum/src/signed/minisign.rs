//! minisign signatures, through `minisign-verify` (by minisign's author;
//! no dependencies): prehashed (BLAKE2b-512, minisign's default) and
//! legacy signatures, which `minisign -V` accepts too; the trusted comment
//! is signed with the signature and said with the signer.

use minisign_verify::{Error, PublicKey, Signature};

use super::signify;
use super::{Refusal, RefusalKind, Scheme, Signer};

/// `message` against a minisign signature file, with a minisign public
/// key file (or its base64 line alone, as `minisign -P` takes it).
pub fn verify(message: &[u8], signature: &[u8], key: &[u8]) -> Result<Signer, Refusal> {
    let text = std::str::from_utf8(signature)
        .map_err(|_| Refusal::malformed("invalid minisign signature: not text"))?;
    let signature = Signature::decode(text)
        .map_err(|e| Refusal::malformed(format!("invalid minisign signature: {e}")))?;
    let key_text = std::str::from_utf8(key)
        .map_err(|_| Refusal::malformed("invalid minisign public key: not text"))?;
    let public = if key_text.starts_with("untrusted comment:") {
        PublicKey::decode(key_text)
    } else {
        PublicKey::from_base64(key_text.trim())
    }
    .map_err(|e| Refusal::malformed(format!("invalid minisign public key: {e}")))?;
    public
        .verify(message, &signature, true)
        .map_err(|e| refusal(e, signature_key_id(text), key_id(key_text)))?;
    Ok(Signer {
        scheme: Scheme::Minisign,
        who: format!("key id {}", key_id(key_text)),
        notes: vec![format!("trusted comment: {}", signature.trusted_comment())],
    })
}

fn refusal(e: Error, signed_by: String, given: String) -> Refusal {
    match e {
        Error::UnexpectedKeyId => Refusal::new(
            RefusalKind::WrongKey,
            format!("signed by another key (key id {signed_by}, the key given is {given})"),
        ),
        Error::InvalidSignature => Refusal::new(
            RefusalKind::Changed,
            "the signature does not match: the list (or the trusted comment) changed after signing",
        ),
        Error::UnsupportedAlgorithm => Refusal::new(RefusalKind::Unsupported, e.to_string()),
        e => Refusal::malformed(e.to_string()),
    }
}

/// minisign's key id: the 8 key-number bytes as a little-endian integer
/// in upper-case hex (`minisign -V` prints it so).
fn key_id_of(keynum: &[u8]) -> String {
    keynum.iter().rev().map(|b| format!("{b:02X}")).collect()
}

fn key_id(key_text: &str) -> String {
    let mut text = key_text.to_owned();
    if !text.starts_with("untrusted comment:") {
        text = format!("untrusted comment: \n{}\n", key_text.trim());
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    match signify::public_key(text.as_bytes()) {
        Ok(key) => key_id_of(&key.keynum),
        Err(_) => "?".to_owned(),
    }
}

fn signature_key_id(text: &str) -> String {
    let mut lines = text.lines();
    let (Some(comment), Some(line)) = (lines.next(), lines.next()) else {
        return "?".to_owned();
    };
    let two = format!("{comment}\n{line}\n");
    match signify::two_lines(two.as_bytes(), 74, "signature") {
        Ok((blob, _)) => key_id_of(blob.get(2..10).unwrap_or_default()),
        Err(_) => "?".to_owned(),
    }
}
