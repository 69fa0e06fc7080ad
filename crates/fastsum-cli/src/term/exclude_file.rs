//! `--exclude-from=FILE`'s file read into globs: one reading for
//! fastsum's own mode (`mode/flags/defs.rs`) and the subcommands
//! (`cmd/args.rs`).

/// Why an `--exclude-from` file gave no globs.
#[derive(Debug)]
pub enum ExcludeFileError {
    /// It could not be opened or read.
    Io(std::io::Error),
    /// It holds more than [`EXCLUDE_FILE_MAX`] bytes.
    TooLarge,
}

/// The most of an `--exclude-from` file read: a run holds no more of it
/// than this, whatever it is given.
pub const EXCLUDE_FILE_MAX: u64 = 16 << 20;

impl std::fmt::Display for ExcludeFileError {
    /// The cause, as a message after the file's name says it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io(e) => f.write_str(&fastsum::Error::os_message(e)),
            Self::TooLarge => write!(
                f,
                "more than {} MiB of exclude patterns",
                EXCLUDE_FILE_MAX >> 20
            ),
        }
    }
}

/// `--exclude-from=FILE` (fastsum's own mode and the subcommands): each of
/// FILE's lines a glob as `--exclude` takes it, but blank ones and comments
/// (`#` first) and lines of blanks only, as in a `.gitignore`, a CRLF
/// line's CR, and a leading byte-order mark. FILE may be a
/// pipe (`<(...)`), read to its end.
pub fn read_exclude_file(path: &std::path::Path) -> Result<Vec<String>, ExcludeFileError> {
    use std::io::Read;
    let mut text = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(EXCLUDE_FILE_MAX + 1).read_to_end(&mut text))
        .map_err(ExcludeFileError::Io)?;
    if text.len() as u64 > EXCLUDE_FILE_MAX {
        return Err(ExcludeFileError::TooLarge);
    }
    // A UTF-8 byte-order mark (a Windows editor's) is not the first
    // pattern's, as git reads it too.
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&text);
    Ok(text
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        // Blank: empty, or blanks only (empty once gitignore cuts its
        // trailing blanks), never a pattern that matches every file.
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace) && !line.starts_with(b"#"))
        .map(|line| String::from_utf8_lossy(line).into_owned())
        .collect())
}
