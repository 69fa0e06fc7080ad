//! Signed lists: a checksum list's signature verified before
//! any file it names is read, each format through a pure-Rust library made
//! for it:
//!
//! * minisign: `minisign-verify` (by minisign's author, no dependencies);
//! * signify: Ed25519 over the file (`ed25519-dalek`), its two-line
//!   base64 format read here (`signify`);
//! * SSH signatures (`ssh-keygen -Y sign`): RustCrypto's `ssh-key`
//!   (`SshSig`), the `allowed_signers` file read here (`ssh`);
//! * OpenPGP, detached and clearsigned, against a keyring (`openpgp`
//!   feature): rPGP (`pgp`), the signature's key, expiry and revocation
//!   judged here.
//!
//! The key is always the caller's: nothing is fetched, nothing is taken
//! from the list. A verdict is a [`Signer`] (who signed) or a [`Refusal`]
//! (why not); nothing here panics on any input (fuzzed in
//! `crate::fuzzing`).
//!
//! [`open`] is the one entry point: a list and its signature (detached,
//! or carried in the list) in, the signed text out. The schemes are this
//! module's own.

use std::fmt;
use std::time::SystemTime;

parsers! {
    pub(crate) mod clearsigned;
    pub(crate) mod minisign;
    pub(crate) mod release;
    pub(crate) mod signify;
    pub(crate) mod ssh;
}
#[cfg(feature = "openpgp")]
parsers! {
    pub(crate) mod openpgp;
}

/// A signature format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scheme {
    /// minisign (`minisign -S`).
    Minisign,
    /// OpenBSD's signify (`signify -S`, `-e` embedded).
    Signify,
    /// An SSH signature (`ssh-keygen -Y sign`).
    Ssh,
    /// OpenPGP (`gpg --detach-sign`, `--clearsign`).
    OpenPgp,
}

impl Scheme {
    /// The format's name, as its tool spells it.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Minisign => "minisign",
            Scheme::Signify => "signify",
            Scheme::Ssh => "SSH",
            Scheme::OpenPgp => "OpenPGP",
        }
    }

    /// The format of a detached signature, told from its first bytes;
    /// `None`: none known.
    pub fn of_signature(signature: &[u8]) -> Option<Scheme> {
        let text = signature.strip_prefix(b"\xef\xbb\xbf").unwrap_or(signature);
        if text.starts_with(b"-----BEGIN SSH SIGNATURE-----") {
            Some(Scheme::Ssh)
        } else if text.starts_with(b"-----BEGIN PGP SIGNATURE-----")
            || signature.first().is_some_and(|b| b & 0x80 != 0)
        {
            Some(Scheme::OpenPgp)
        } else if text.starts_with(b"untrusted comment:") {
            let trusted = text
                .split(|&b| b == b'\n')
                .nth(2)
                .is_some_and(|l| l.starts_with(b"trusted comment:"));
            Some(if trusted {
                Scheme::Minisign
            } else {
                Scheme::Signify
            })
        } else {
            None
        }
    }
}

/// Who signed, in the words of the format: the OpenPGP primary key's
/// fingerprint and user id, the SSH principal and key fingerprint, the
/// minisign key id (the signify key is the caller's file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signer {
    /// The format.
    pub scheme: Scheme,
    /// Who signed, for a person to read (`key id 0123ABCD…`).
    pub who: String,
    /// What the signature says besides (minisign's trusted comment, a
    /// key that has expired since): one line each.
    pub notes: Vec<String>,
}

/// Why a signature was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusalKind {
    /// The signature or the key could not be read.
    Malformed,
    /// The signature was made by another key than the ones given.
    WrongKey,
    /// The signature does not match the list: changed after signing.
    Changed,
    /// An SSH signature made for another namespace.
    WrongNamespace,
    /// The signature (or its key, when it signed) has expired.
    Expired,
    /// The key that signed was revoked.
    Revoked,
    /// A clearsigned file with more than one signed block.
    TwoBlocks,
    /// A signature this build cannot check (an algorithm, or OpenPGP
    /// without the `openpgp` feature).
    Unsupported,
}

/// A signature refused, with why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The kind of refusal.
    pub kind: RefusalKind,
    /// Why, in a sentence for a person.
    pub detail: String,
}

impl Refusal {
    pub(crate) fn new(kind: RefusalKind, detail: impl Into<String>) -> Refusal {
        Refusal {
            kind,
            detail: detail.into(),
        }
    }

    pub(crate) fn malformed(detail: impl Into<String>) -> Refusal {
        Refusal::new(RefusalKind::Malformed, detail)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)
    }
}

impl std::error::Error for Refusal {}

/// What a verification takes besides the bytes.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// The SSH namespace the signature must have been made for (`file`
    /// unless told otherwise, as `ssh-keygen -Y sign`'s common use).
    pub namespace: String,
    /// The time expiry is judged at (now, except in tests).
    pub now: SystemTime,
}

impl Default for VerifyOptions {
    fn default() -> VerifyOptions {
        VerifyOptions {
            namespace: "file".to_owned(),
            now: SystemTime::now(),
        }
    }
}

/// A signed list opened: `list` verified with `key` (a minisign or
/// signify public key file, an `allowed_signers` file or OpenSSH public
/// key, an OpenPGP keyring, binary or armored) against its detached
/// `signature`, the format told from the signature, or, with `None`,
/// against the signature it carries (OpenPGP clearsigned, signify `-e`).
///
/// A Debian Release file's `Valid-Until` is judged at `options.now` as apt
/// judges it: past due is refused; a date still to come is one of the
/// signer's notes.
pub fn open(
    list: &[u8],
    signature: Option<&[u8]>,
    key: &[u8],
    options: &VerifyOptions,
) -> Result<Opened, Refusal> {
    let mut opened = match signature {
        Some(signature) => Opened {
            signer: verify_detached(list, signature, key, options)?,
            message: list.to_vec(),
            unsigned: Vec::new(),
        },
        None => open_embedded(list, key, options)?,
    };
    let now = options
        .now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if let Some(until) = release::check_valid_until(&opened.message, now)? {
        opened.signer.notes.push(format!("valid until {until}"));
    }
    Ok(opened)
}

/// `message` verified against a detached `signature` with `key`, the
/// format told from the signature.
pub(crate) fn verify_detached(
    message: &[u8],
    signature: &[u8],
    key: &[u8],
    options: &VerifyOptions,
) -> Result<Signer, Refusal> {
    match Scheme::of_signature(signature) {
        Some(Scheme::Minisign) => minisign::verify(message, signature, key),
        Some(Scheme::Signify) => signify::verify_detached(message, signature, key),
        Some(Scheme::Ssh) => ssh::verify(message, signature, key, options),
        Some(Scheme::OpenPgp) => verify_openpgp(message, signature, key, options),
        None => Err(Refusal::malformed(
            "not a signature fastsum knows (minisign, signify, SSH or OpenPGP)",
        )),
    }
}

#[cfg(feature = "openpgp")]
fn verify_openpgp(
    message: &[u8],
    signature: &[u8],
    key: &[u8],
    options: &VerifyOptions,
) -> Result<Signer, Refusal> {
    openpgp::verify_detached(message, signature, key, options.now)
}

#[cfg(not(feature = "openpgp"))]
fn verify_openpgp(_: &[u8], _: &[u8], _: &[u8], _: &VerifyOptions) -> Result<Signer, Refusal> {
    Err(openpgp_missing())
}

#[cfg(not(feature = "openpgp"))]
pub(crate) fn openpgp_missing() -> Refusal {
    Refusal::new(
        RefusalKind::Unsupported,
        "an OpenPGP signature: this fastsum was built without the openpgp feature",
    )
}

/// A signed list, opened: who signed, the signed text, and the text
/// outside the signed block of a list that carries its signature (never
/// checked; none for a detached signature).
#[derive(Clone, Debug)]
pub struct Opened {
    /// Who signed.
    pub signer: Signer,
    /// The signed text: the list to check.
    pub message: Vec<u8>,
    /// Lines outside the signed block (1-based line number, text): not
    /// signed, so never checked; said to the user.
    pub unsigned: Vec<(u64, Vec<u8>)>,
}

/// Whether `list` carries its own signature: an OpenPGP clearsigned block
/// or a signify `-e` file.
pub(crate) fn is_embedded(list: &[u8]) -> Option<Scheme> {
    let text = list.strip_prefix(b"\xef\xbb\xbf").unwrap_or(list);
    if clearsigned::has_header(text) {
        Some(Scheme::OpenPgp)
    } else if text.starts_with(b"untrusted comment:") {
        Some(Scheme::Signify)
    } else {
        None
    }
}

/// A list that carries its signature verified with `key`, and opened.
pub(crate) fn open_embedded(
    list: &[u8],
    key: &[u8],
    options: &VerifyOptions,
) -> Result<Opened, Refusal> {
    match is_embedded(list) {
        Some(Scheme::Signify) => signify::open_embedded(list, key),
        Some(_) => open_clearsigned(list, key, options),
        None => Err(Refusal::malformed(
            "carries no signature (no clearsigned block, no signify comment): give --signature",
        )),
    }
}

#[cfg(feature = "openpgp")]
fn open_clearsigned(list: &[u8], key: &[u8], options: &VerifyOptions) -> Result<Opened, Refusal> {
    let block = clearsigned::split(list)?;
    let signer = openpgp::verify_cleartext(&block, key, options.now)?;
    unsigned_trailing_blanks(&block.message)?;
    Ok(Opened {
        signer,
        message: block.message,
        unsigned: block.unsigned,
    })
}

/// OpenPGP signs a clearsigned line without its trailing spaces and
/// tabs: anyone may add some and the signature still holds, while the line
/// checked would name another file (`d ` for `d`). A list with such a line
/// is refused: what would be checked is not what was signed.
#[cfg(feature = "openpgp")]
fn unsigned_trailing_blanks(message: &[u8]) -> Result<(), Refusal> {
    for (index, line) in message.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if matches!(line.last(), Some(b' ' | b'\t')) {
            return Err(Refusal::new(
                RefusalKind::Changed,
                format!(
                    "line {} of the signed text ends in spaces or tabs, which the signature \
                     does not cover: the line checked would not be the line signed",
                    index + 1
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(not(feature = "openpgp"))]
fn open_clearsigned(list: &[u8], _: &[u8], _: &VerifyOptions) -> Result<Opened, Refusal> {
    clearsigned::split(list)?;
    Err(openpgp_missing())
}
