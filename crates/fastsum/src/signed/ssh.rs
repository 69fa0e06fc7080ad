//! SSH signatures (`ssh-keygen -Y sign`) through RustCrypto's `ssh-key`
//! (`SshSig`), with the `allowed_signers` file of ssh-keygen(1) read here:
//! `principals [options] keytype base64 [comment]`, the options
//! `namespaces="..."`, `valid-after`, `valid-before` honoured and
//! `cert-authority` lines refused (no certificates). The principal is the
//! one the file gives the signature's key, as `ssh-keygen -Y
//! find-principals` finds it.

use std::time::UNIX_EPOCH;

use ssh_key::{HashAlg, PublicKey, SshSig};

use super::{Refusal, RefusalKind, Scheme, Signer, VerifyOptions};

/// One line of an `allowed_signers` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedSigner {
    /// The principals (comma-separated patterns), as written.
    pub principals: String,
    /// `namespaces="..."`: the namespaces the key may sign for.
    pub namespaces: Option<Vec<String>>,
    /// `valid-after` / `valid-before`, seconds since the epoch (UTC).
    pub valid: (Option<u64>, Option<u64>),
    /// `cert-authority`: the key signs certificates, not files.
    pub cert_authority: bool,
    /// The key.
    pub key: PublicKey,
}

/// The lines of an `allowed_signers` file; `Err` names the first line
/// that could not be read.
pub fn parse_allowed_signers(text: &[u8]) -> Result<Vec<AllowedSigner>, Refusal> {
    let text = String::from_utf8_lossy(text);
    let mut signers = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let signer = parse_line(line).map_err(|why| {
            Refusal::malformed(format!("allowed_signers line {}: {why}", index + 1))
        })?;
        signers.push(signer);
    }
    Ok(signers)
}

/// The next field of `line`: up to unquoted white space.
fn field(line: &str) -> (&str, &str) {
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                return (&line[..i], line[i..].trim_start());
            }
            _ => {}
        }
    }
    (line, "")
}

fn is_key_type(word: &str) -> bool {
    ["ssh-", "ecdsa-sha2-", "sk-ssh-", "sk-ecdsa-", "rsa-sha2-"]
        .iter()
        .any(|p| word.starts_with(p))
}

fn parse_line(line: &str) -> Result<AllowedSigner, String> {
    let (principals, rest) = field(line);
    let (mut next, mut rest) = field(rest);
    let mut signer_options = None;
    if !is_key_type(next) {
        signer_options = Some(next);
        (next, rest) = field(rest);
    }
    let (base64, _comment) = field(rest);
    if next.is_empty() || base64.is_empty() {
        return Err("no key (principals [options] keytype base64)".to_owned());
    }
    let key = PublicKey::from_openssh(&format!("{next} {base64}"))
        .map_err(|e| format!("not a public key ({e})"))?;
    let mut signer = AllowedSigner {
        principals: principals.trim_matches('"').to_owned(),
        namespaces: None,
        valid: (None, None),
        cert_authority: false,
        key,
    };
    for option in signer_options.map(split_options).unwrap_or_default() {
        apply_option(&mut signer, &option)?;
    }
    Ok(signer)
}

/// The options field split at unquoted commas.
fn split_options(options: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    for c in options.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().into_iter().for_each(|s| s.push(c)),
        }
    }
    out
}

fn apply_option(signer: &mut AllowedSigner, option: &str) -> Result<(), String> {
    let (name, value) = option.split_once('=').unwrap_or((option, ""));
    match name.to_ascii_lowercase().as_str() {
        "cert-authority" => signer.cert_authority = true,
        "namespaces" => {
            signer.namespaces = Some(value.split(',').map(str::to_owned).collect());
        }
        "valid-after" => signer.valid.0 = Some(timestamp(value)?),
        "valid-before" => signer.valid.1 = Some(timestamp(value)?),
        _ => return Err(format!("unknown option {name:?}")),
    }
    Ok(())
}

/// `YYYYMMDD[HHMM[SS]][Z]` as seconds since the epoch, read as UTC.
fn timestamp(value: &str) -> Result<u64, String> {
    let digits = value.strip_suffix(['Z', 'z']).unwrap_or(value);
    let bad = || format!("invalid time {value:?} (YYYYMMDD[HHMM[SS]]Z)");
    if !matches!(digits.len(), 8 | 12 | 14) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let number = |range: std::ops::Range<usize>| -> u64 {
        digits.get(range).and_then(|s| s.parse().ok()).unwrap_or(0)
    };
    let (y, m, d) = (number(0..4), number(4..6), number(6..8));
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || y < 1970 {
        return Err(bad());
    }
    let days = days_from_civil(y, m, d);
    Ok(days * 86_400 + number(8..10) * 3600 + number(10..12) * 60 + number(12..14))
}

/// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
pub(crate) fn days_from_civil(y: u64, m: u64, d: u64) -> u64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe).saturating_sub(719_468)
}

/// `message` against an SSH signature (PEM), the key and principal from
/// `allowed_signers`, the namespace `options.namespace`.
pub fn verify(
    message: &[u8],
    signature: &[u8],
    allowed_signers: &[u8],
    options: &VerifyOptions,
) -> Result<Signer, Refusal> {
    let signature = SshSig::from_pem(signature)
        .map_err(|e| Refusal::malformed(format!("invalid SSH signature: {e}")))?;
    let signers = parse_allowed_signers(allowed_signers)?;
    let key = signature.public_key();
    let fingerprint = key.fingerprint(HashAlg::Sha256);
    if signature.namespace() != options.namespace {
        return Err(Refusal::new(
            RefusalKind::WrongNamespace,
            format!(
                "made for namespace {:?}, not {:?} (--namespace)",
                signature.namespace(),
                options.namespace
            ),
        ));
    }
    let now = options
        .now
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let listed: Vec<&AllowedSigner> = signers
        .iter()
        .filter(|s| !s.cert_authority && s.key.key_data() == key)
        .collect();
    if listed.is_empty() {
        return Err(Refusal::new(
            RefusalKind::WrongKey,
            format!("signed by key {fingerprint}, which allowed_signers does not list"),
        ));
    }
    let Some(signer) = listed.iter().find(|s| allows(s, &options.namespace, now)) else {
        return Err(refuse_listed(&listed, &options.namespace, &fingerprint));
    };
    PublicKey::new(key.clone(), "")
        .verify(&options.namespace, message, &signature)
        .map_err(|_| {
            Refusal::new(
                RefusalKind::Changed,
                "the signature does not match: the list changed after signing",
            )
        })?;
    Ok(Signer {
        scheme: Scheme::Ssh,
        who: format!("principal {} (key {fingerprint})", signer.principals),
        notes: Vec::new(),
    })
}

fn allows(signer: &AllowedSigner, namespace: &str, now: u64) -> bool {
    let in_namespace = signer
        .namespaces
        .as_ref()
        .is_none_or(|n| n.iter().any(|n| n == namespace));
    in_namespace
        && signer.valid.0.is_none_or(|after| now >= after)
        && signer.valid.1.is_none_or(|before| now <= before)
}

fn refuse_listed(listed: &[&AllowedSigner], namespace: &str, fingerprint: &impl std::fmt::Display) -> Refusal {
    let in_namespace = listed.iter().any(|s| {
        s.namespaces
            .as_ref()
            .is_none_or(|n| n.iter().any(|n| n == namespace))
    });
    if in_namespace {
        Refusal::new(
            RefusalKind::Expired,
            format!("key {fingerprint} is not valid now (allowed_signers valid-after/valid-before)"),
        )
    } else {
        Refusal::new(
            RefusalKind::WrongNamespace,
            format!("key {fingerprint} may not sign for namespace {namespace:?} (allowed_signers namespaces=)"),
        )
    }
}

/// The seconds since the epoch of `time` (0 before it): OpenPGP's expiry
/// check's.
#[cfg(feature = "openpgp")]
pub(crate) fn unix_seconds(time: std::time::SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
