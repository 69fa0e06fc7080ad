//! Keys are untrusted: what a listing says is below the prefix becomes a
//! path below the local directory only when every component is a plain
//! name. A key with `..` or `.`, a leading `/`, `//`, a NUL, or bytes that
//! are not UTF-8 (S3 keys are UTF-8; such a key is a server's lie) is
//! refused with the reason, and never joined to a path.

/// `s3://bucket/prefix`, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct S3Url {
    /// The bucket.
    pub bucket: String,
    /// The prefix the listing asks for: empty (the whole bucket) or ending
    /// in `/`, so that `s3://b/site` is `site/` and below, never
    /// `site-old/`.
    pub prefix: String,
}

impl S3Url {
    /// `s3://bucket[/prefix]`, or `None` for anything else.
    pub fn parse(operand: &[u8]) -> Option<S3Url> {
        let rest = std::str::from_utf8(operand.strip_prefix(b"s3://")?).ok()?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return None;
        }
        // Taken as it is: a key may begin with '/', so `s3://b//p` is the
        // prefix `/p/`, never `p/`.
        let mut prefix = prefix.to_string();
        if !prefix.is_empty() && !prefix.ends_with('/') {
            prefix.push('/');
        }
        Some(S3Url {
            bucket: bucket.to_string(),
            prefix,
        })
    }

    /// The key's part below the prefix, if it is a safe relative path;
    /// `Ok(None)` for a directory marker (`dir/`, empty); `Err` why not.
    pub(crate) fn relative<'k>(&self, key: &'k [u8]) -> Result<Option<&'k str>, String> {
        let rest = key
            .strip_prefix(self.prefix.as_bytes())
            .ok_or("the listing gave a key outside the prefix asked for")?;
        let text = std::str::from_utf8(rest).map_err(|_| "the key is not UTF-8".to_string())?;
        if text.contains('\0') {
            return Err("the key holds a NUL".into());
        }
        if text.is_empty() || text.ends_with('/') {
            return Ok(None);
        }
        if text.starts_with('/') {
            return Err("the key has a leading '/' below the prefix".into());
        }
        for component in text.split('/') {
            match component {
                "" => return Err("the key holds '//'".into()),
                "." | ".." => return Err(format!("the key holds a '{component}' component")),
                _ if cfg!(windows) && (component.contains('\\') || component.contains(':')) => {
                    return Err("the key holds '\\' or ':' (a path on Windows)".into())
                }
                _ => {}
            }
        }
        Ok(Some(text))
    }
}

impl std::fmt::Display for S3Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_is_a_directory() {
        let url = S3Url::parse(b"s3://b/site").unwrap();
        assert_eq!(url.prefix, "site/");
        assert!(url.relative(b"site-old/x").is_err());
        assert_eq!(url.relative(b"site/a/b").unwrap(), Some("a/b"));
        assert_eq!(S3Url::parse(b"s3://b").unwrap().prefix, "");
        assert_eq!(S3Url::parse(b"s3://b/").unwrap().prefix, "");
        assert!(S3Url::parse(b"s3:///x").is_none());
        assert_eq!(S3Url::parse(b"s3://b//p").unwrap().prefix, "/p/");
        assert_eq!(S3Url::parse(b"s3://b/p//").unwrap().prefix, "p//");
        assert!(S3Url::parse(b"host:/x").is_none());
    }

    #[test]
    fn hostile_keys_are_refused() {
        let url = S3Url::parse(b"s3://b/p").unwrap();
        for key in [
            &b"p/../x"[..],
            b"p/a/../../x",
            b"p//etc/passwd",
            b"p/a//b",
            b"p/./a",
            b"p/a\0b",
            b"p/\xff",
            b"p/..",
        ] {
            assert!(url.relative(key).is_err(), "{key:?}");
        }
        assert_eq!(url.relative(b"p/dir/").unwrap(), None);
        assert_eq!(url.relative(b"p/..a/b..").unwrap(), Some("..a/b.."));
    }
}
