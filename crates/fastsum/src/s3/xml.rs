//! The two XML answers read: a ListObjectsV2 page and GetObjectAttributes.
//! S3's answers are flat and regular, so a small reader of named elements
//! does; what it is given is untrusted (a server's bytes): anything not as
//! expected is an error that says what, never a shorter answer. Keys are
//! asked for URL-encoded (`encoding-type=url`) and decoded here to bytes,
//! so a key that is not UTF-8 arrives as it is and is refused by the
//! caller with its bytes shown, never silently respelled.

/// One object of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Listed {
    /// The key's bytes, decoded.
    pub key: Vec<u8>,
    pub size: u64,
    /// The ETag without its quotes.
    pub etag: String,
    pub last_modified: String,
}

/// One page of a listing.
#[derive(Debug, Default)]
pub(crate) struct Page {
    pub objects: Vec<Listed>,
    /// The token of the next page, for a truncated listing.
    pub next: Option<String>,
}

/// The text of each `<name>…</name>` directly in `xml` (no attributes on
/// the tag, as S3 writes them).
fn elements<'a>(xml: &'a str, name: &str) -> Vec<&'a str> {
    let (open, close) = (format!("<{name}>"), format!("</{name}>"));
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        out.push(&after[..end]);
        rest = &after[end + close.len()..];
    }
    out
}

fn element<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    elements(xml, name).into_iter().next()
}

/// XML's five entities and numeric references undone.
fn unescape(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let end = rest[at..]
            .find(';')
            .ok_or_else(|| format!("an unterminated entity in {text:?}"))?;
        let entity = &rest[at + 1..at + end];
        let c = match entity {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code = match entity.strip_prefix("#x") {
                    Some(hex) => u32::from_str_radix(hex, 16).ok(),
                    None => entity.strip_prefix('#').and_then(|d| d.parse().ok()),
                };
                code.and_then(char::from_u32)
                    .ok_or_else(|| format!("an unknown entity &{entity}; in {text:?}"))?
            }
        };
        out.push(c);
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A URL-encoded key's bytes (`+` is a space, as AWS form-encodes keys).
fn url_decode(text: &str) -> Result<Vec<u8>, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| format!("a bad %-escape in the key {text:?}"))?;
                out.push(hex);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// A ListObjectsV2 page; `Err` says what is wrong with it.
pub(crate) fn parse_listing(body: &str) -> Result<Page, String> {
    if !body.contains("<ListBucketResult") {
        return Err(format!("not a ListObjectsV2 answer: {:?}", snippet(body)));
    }
    // A page cut short (its closing tag or IsTruncated missing) could
    // pass for the last one: keys left out would read as deleted.
    if !body.trim_end().ends_with("</ListBucketResult>") {
        return Err("a listing page cut short (no </ListBucketResult> at its end)".into());
    }
    if element(body, "IsTruncated").is_none() {
        return Err("a listing page without IsTruncated".into());
    }
    let url_encoded = element(body, "EncodingType") == Some("url");
    let mut page = Page::default();
    for contents in elements(body, "Contents") {
        let raw = element(contents, "Key").ok_or("an object without a Key")?;
        let text = unescape(raw)?;
        let key = if url_encoded {
            url_decode(&text)?
        } else {
            text.into_bytes()
        };
        let shown = String::from_utf8_lossy(&key).into_owned();
        let size = element(contents, "Size")
            .and_then(|s| s.trim().parse::<u64>().ok())
            .ok_or_else(|| format!("{shown:?}: no size, or not a number"))?;
        let etag = unescape(element(contents, "ETag").unwrap_or(""))?;
        page.objects.push(Listed {
            key,
            size,
            etag: etag.trim_matches('"').to_string(),
            last_modified: element(contents, "LastModified").unwrap_or("").to_string(),
        });
    }
    let truncated = element(body, "IsTruncated").map(str::trim);
    page.next = match (truncated, element(body, "NextContinuationToken")) {
        (Some("true"), Some(token)) if !token.is_empty() => Some(unescape(token)?),
        (Some("true"), _) => return Err("a truncated listing without a token".into()),
        (Some("false") | None, _) => None,
        (Some(other), _) => return Err(format!("IsTruncated is {other:?}")),
    };
    Ok(page)
}

/// What GetObjectAttributes says: the part sizes (none where the server
/// gives none) and the part count.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Attributes {
    pub parts_count: Option<u64>,
    pub part_sizes: Vec<(u64, u64)>,
    pub truncated: bool,
    pub next_marker: Option<u64>,
}

/// A GetObjectAttributes answer (its `ObjectParts`).
pub(crate) fn parse_attributes(body: &str) -> Result<Attributes, String> {
    if !body.contains("<GetObjectAttributesResponse")
        && !body.contains("<GetObjectAttributesOutput")
    {
        return Err(format!(
            "not a GetObjectAttributes answer: {:?}",
            snippet(body)
        ));
    }
    let mut out = Attributes::default();
    let Some(parts) = element(body, "ObjectParts") else {
        return Ok(out);
    };
    let number = |xml: &str, name: &str| -> Result<Option<u64>, String> {
        element(xml, name)
            .map(|v| {
                v.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("{name} is {v:?}"))
            })
            .transpose()
    };
    out.parts_count = number(parts, "TotalPartsCount")?.or(number(parts, "PartsCount")?);
    for part in elements(parts, "Part") {
        let n = number(part, "PartNumber")?.ok_or("a part without a number")?;
        let size = number(part, "Size")?.ok_or("a part without a size")?;
        out.part_sizes.push((n, size));
    }
    out.truncated = element(parts, "IsTruncated").map(str::trim) == Some("true");
    out.next_marker = number(parts, "NextPartNumberMarker")?;
    Ok(out)
}

/// The start of an answer, for a message.
fn snippet(body: &str) -> &str {
    let end = body.char_indices().nth(80).map_or(body.len(), |(i, _)| i);
    &body[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_decoded_to_their_bytes() {
        let body = "<ListBucketResult><EncodingType>url</EncodingType>\
            <Contents><Key>a+b%2Bc%FF%26</Key><Size>3</Size><ETag>&quot;x&quot;</ETag></Contents>\
            <IsTruncated>false</IsTruncated></ListBucketResult>";
        let page = parse_listing(body).unwrap();
        assert_eq!(page.objects[0].key, b"a b+c\xff&");
        assert_eq!(page.objects[0].etag, "x");
        assert_eq!(page.next, None);
    }

    #[test]
    fn garbage_and_lies_are_errors() {
        assert!(parse_listing("<html>hello</html>").is_err());
        let truncated = "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>";
        assert!(parse_listing(truncated).is_err());
        let no_size = "<ListBucketResult><Contents><Key>a</Key></Contents></ListBucketResult>";
        assert!(parse_listing(no_size).is_err());
        let bad_escape = "<ListBucketResult><EncodingType>url</EncodingType>\
            <Contents><Key>a%G</Key><Size>1</Size></Contents></ListBucketResult>";
        assert!(parse_listing(bad_escape).is_err());
    }
}
