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
/// in upper-case hex without leading zeros, as minisign writes it in a
/// public key's comment (`PRIX64`), so a user can match the two by eye.
fn key_id_of(keynum: &[u8]) -> String {
    let mut le = [0u8; 8];
    for (slot, byte) in le.iter_mut().zip(keynum) {
        *slot = *byte;
    }
    format!("{:X}", u64::from_le_bytes(le))
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

#[cfg(test)]
mod tests {
    use super::key_id_of;

    #[test]
    fn a_key_id_is_written_as_minisign_writes_it() {
        // minisign prints the id with PRIX64: no leading zeros (one key in
        // sixteen starts with a zero nibble; a padded id would not match
        // the one in the key file's comment).
        let keynum = [0x8F, 0xD9, 0x58, 0x82, 0xCD, 0xA4, 0xE2, 0x02];
        assert_eq!(key_id_of(&keynum), "2E2A4CD8258D98F");
        let keynum = [0x7F, 0xD1, 0x52, 0x1B, 0x8F, 0xAC, 0x94, 0x1C];
        assert_eq!(key_id_of(&keynum), "1C94AC8F1B52D17F");
    }
}
