//! fastsum's own `-c LIST --signature SIG --key KEY` (and a list that
//! carries its signature, `--key` alone): the list's signature verified
//! by the library (`fastsum::signed`) before any file is read; refused,
//! nothing is checked and the run exits 2; held, who signed is said and
//! the signed text (never the file read again) is the list checked.

use crate::mode::run::Ended;
use std::io::Read;

use fastsum::signed::{self, Refusal, VerifyOptions};

use crate::mode::options::Options;
use crate::mode::run::Run;

/// The options that go with them; `Err` is the exit status.
pub(in crate::mode) fn combinations(run: &mut Run, o: &Options) -> Result<(), Ended> {
    let s = &o.signing;
    run.refuse_first(&[
        (
            s.wanted() && !o.check,
            "--signature, --key and --namespace verify a list's signature with -c",
        ),
        (
            s.wanted() && s.key.is_none(),
            "--signature and --namespace need --key (the key, allowed_signers or keyring to trust)",
        ),
    ])
}

/// The most a signed list may hold: it is read whole to be verified.
const LIST_MOST: u64 = 1 << 30;

fn read_file(path: &[u8], what: &str) -> Result<Vec<u8>, String> {
    let name = String::from_utf8_lossy(path);
    let file: Box<dyn Read> = if path == b"-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(
            fastsum::open_regular(&fastsum::name::path(path))
                .map_err(|e| format!("{what}: {e}"))?,
        )
    };
    let mut bytes = Vec::new();
    file.take(LIST_MOST + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{what} {name}: {}", fastsum::Error::os_message(&e)))?;
    if bytes.len() as u64 > LIST_MOST {
        return Err(format!("{what} {name}: over 1 GiB, not read"));
    }
    Ok(bytes)
}

fn os_bytes(path: &std::path::Path) -> Vec<u8> {
    fastsum::name::path_bytes(path).to_vec()
}

/// The list at `checkfile`, its signature verified: the signed text, or
/// `None` when refused (said, and the run's status made 2).
pub(in crate::mode) fn verified_list(
    run: &mut Run,
    o: &Options,
    checkfile: &[u8],
) -> Option<Vec<u8>> {
    let s = &o.signing;
    let options = VerifyOptions {
        namespace: s.namespace.clone().unwrap_or_else(|| "file".to_owned()),
        ..VerifyOptions::default()
    };
    let key_path = os_bytes(s.key.as_deref()?);
    let verdict = (|| -> Result<_, String> {
        let list = read_file(checkfile, "list")?;
        let key = read_file(&key_path, "key")?;
        let signature = match &s.signature {
            Some(signature) => Some(read_file(&os_bytes(signature), "signature")?),
            None => None,
        };
        signed::open(&list, signature.as_deref(), &key, &options)
            .map_err(|r: Refusal| r.to_string())
    })();
    let signed::Opened {
        signer,
        message,
        unsigned,
    } = match verdict {
        Ok(opened) => opened,
        Err(why) => return refuse(run, checkfile, &why),
    };
    say_signer(run, o, checkfile, &signer, &key_path);
    say_unsigned(run, checkfile, &unsigned);
    Some(message)
}

fn refuse(run: &mut Run, checkfile: &[u8], why: &str) -> Option<Vec<u8>> {
    let mut m = run.quoting.quotef(checkfile);
    m.extend_from_slice(format!(": signature refused, no file checked: {why}").as_bytes());
    run.error(&m);
    run.signature_refused = true;
    None
}

fn say_signer(run: &mut Run, o: &Options, checkfile: &[u8], signer: &signed::Signer, key: &[u8]) {
    if o.status_only {
        return;
    }
    let mut m = run.quoting.quotef(checkfile);
    let who = match signer.scheme {
        signed::Scheme::Signify => format!(
            "{}, key file {}",
            signer.who,
            String::from_utf8_lossy(&run.quoting.quotef(key))
        ),
        _ => signer.who.clone(),
    };
    let who = printable(&who);
    m.extend_from_slice(format!(": good {} signature by {who}", signer.scheme.name()).as_bytes());
    run.error(&m);
    for note in &signer.notes {
        let mut m = run.quoting.quotef(checkfile);
        m.extend_from_slice(format!(": {}", printable(note)).as_bytes());
        run.error(&m);
    }
}

/// Text from a key or a signature (a user id, minisign's trusted
/// comment) with its control characters escaped (`\u{1b}`): it cannot
/// colour, move or overprint the terminal's lines, or forge one.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| match c.is_control() {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect()
}

/// Text outside the signed block: never checked, said line by line.
fn say_unsigned(run: &mut Run, checkfile: &[u8], unsigned: &[(u64, Vec<u8>)]) {
    let lines: Vec<&(u64, Vec<u8>)> = unsigned
        .iter()
        .filter(|(_, text)| !text.iter().all(u8::is_ascii_whitespace))
        .collect();
    let Some(((first, _), (last, _))) = lines.first().zip(lines.last()) else {
        return;
    };
    let mut m = run.quoting.quotef(checkfile);
    m.extend_from_slice(
        format!(
            ": WARNING: {} line(s) outside the signed block (lines {first}-{last}) not signed, not checked",
            lines.len()
        )
        .as_bytes(),
    );
    run.error(&m);
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_signers_text_reaches_the_terminal_without_control_characters() {
        let shown = super::printable("Eve \u{1b}[2J\rfastsum: x: OK\nmore\u{8}é");
        assert_eq!(shown, "Eve \\u{1b}[2J\\rfastsum: x: OK\\nmore\\u{8}é");
        assert!(!shown.chars().any(char::is_control));
    }
}
