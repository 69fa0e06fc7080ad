//! Reading fastsum's own `--json` records back: a small parser for JSON
//! objects whose values are strings, numbers, `null`, `true` and `false`,
//! and objects of those one level down (several `-a`'s `"digests"`): all
//! that a record holds (docs/JSON.md).

/// A value of a flat record.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A string, unescaped.
    Text(String),
    /// A number, as written.
    Number(String),
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An object of flat values (a record's `"digests"`), in order.
    Object(Vec<(String, Value)>),
}

/// The fields of one JSON object on one line, in order; `Err` says what is
/// wrong with it.
pub fn parse_object(line: &str) -> Result<Vec<(String, Value)>, String> {
    let mut p = Parser {
        text: line,
        s: line.as_bytes(),
        at: 0,
    };
    p.space();
    let fields = p.object(true)?;
    p.space();
    if p.at != p.s.len() {
        return Err(format!("text after the object at byte {}", p.at));
    }
    Ok(fields)
}

struct Parser<'a> {
    /// The line; `s` is its bytes. The parser stops only at ASCII bytes,
    /// so every piece it takes is a `str` slice of it, never checked again.
    text: &'a str,
    s: &'a [u8],
    at: usize,
}

/// Up to this many members a record's keys are compared one by one (a
/// record holds under a dozen); past it, a set: a hostile line may hold
/// millions.
const MEMBERS_SCANNED: usize = 16;

impl Parser<'_> {
    /// `{...}` from here; `nest`: its values may be objects (flat ones).
    fn object(&mut self, nest: bool) -> Result<Vec<(String, Value)>, String> {
        self.expect(b'{')?;
        let mut fields = Vec::new();
        self.space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(fields);
        }
        // A member named twice is refused: JSON readers disagree on which
        // one counts (this one would take the first, jq and Python's json
        // take the last), so `{"digest":GOOD,"digest":BAD}` must not read
        // as either. A scan of the few members of a record, a set past
        // `MEMBERS_SCANNED`.
        let mut seen: Option<std::collections::HashSet<String>> = None;
        loop {
            self.space();
            let at = self.at;
            let key = self.string()?;
            let again = match &mut seen {
                Some(set) => !set.insert(key.clone()),
                None if fields.len() < MEMBERS_SCANNED => fields.iter().any(|(k, _)| *k == key),
                None => {
                    let mut set: std::collections::HashSet<String> =
                        fields.iter().map(|(k, _)| k.clone()).collect();
                    let again = !set.insert(key.clone());
                    seen = Some(set);
                    again
                }
            };
            if again {
                return Err(format!(
                    "the member {key:?} is given twice (at byte {at}): which one counts is not said"
                ));
            }
            self.space();
            self.expect(b':')?;
            self.space();
            let value = match self.peek() {
                Some(b'{') if nest => Value::Object(self.object(false)?),
                _ => self.value()?,
            };
            fields.push((key, value));
            self.space();
            match self.next() {
                Some(b',') => continue,
                Some(b'}') => return Ok(fields),
                _ => return Err(format!("expected ',' or '}}' at byte {}", self.at)),
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek();
        self.at += 1;
        b
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, b: u8) -> Result<(), String> {
        match self.next() {
            Some(c) if c == b => Ok(()),
            _ => Err(format!("expected '{}' at byte {}", b as char, self.at - 1)),
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some(b'"') => self.string().map(Value::Text),
            Some(b'n') => self.word("null", Value::Null),
            Some(b't') => self.word("true", Value::Bool(true)),
            Some(b'f') => self.word("false", Value::Bool(false)),
            Some(b'-' | b'0'..=b'9') => {
                let start = self.at;
                while matches!(
                    self.peek(),
                    Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                ) {
                    self.at += 1;
                }
                // Only ASCII digits and signs were taken.
                let text = self.text.get(start..self.at).unwrap_or_default();
                Ok(Value::Number(text.to_string()))
            }
            _ => Err(format!("no value at byte {} (records hold no arrays)", self.at)),
        }
    }

    fn word(&mut self, word: &str, value: Value) -> Result<Value, String> {
        if self
            .s
            .get(self.at..)
            .unwrap_or_default()
            .starts_with(word.as_bytes())
        {
            self.at += word.len();
            Ok(value)
        } else {
            Err(format!("unknown word at byte {}", self.at))
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .s
            .get(self.at..self.at + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| format!("bad \\u escape at byte {}", self.at))?;
        self.at += 4;
        Ok(digits)
    }

    /// The bytes from here to the string's closing quote (or to the end of
    /// the text, for one that does not end).
    fn raw_string_len(&self) -> usize {
        let rest = self.s.get(self.at..).unwrap_or_default();
        let mut i = 0;
        while let Some(found) = memchr::memchr2(b'"', b'\\', rest.get(i..).unwrap_or_default()) {
            match rest.get(i + found) {
                Some(b'"') => return i + found,
                _ => i += found + 2,
            }
        }
        rest.len()
    }

    /// From `self.at` to the next `"` or `\\` (or the end), and moves there.
    fn plain_run(&mut self) -> &str {
        let start = self.at;
        let rest = self.s.get(start..).unwrap_or_default();
        self.at += memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
        // Both ends are ASCII bytes (or the end) of a str: char boundaries.
        self.text.get(start..self.at).unwrap_or_default()
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        // Room for the whole string first, fallibly: its text unescaped is
        // never longer than as written, so the pushes below never grow it,
        // and a string memory cannot hold is an error naming its size,
        // not an abort.
        let mut out = String::new();
        let raw = self.raw_string_len();
        out.try_reserve_exact(raw)
            .map_err(|_| format!("a string of {raw} bytes is {}", super::lines::TOO_MUCH))?;
        loop {
            let run = self.plain_run();
            out.push_str(run);
            match self.next() {
                Some(b'"') => return Ok(out),
                Some(b'\\') => {}
                _ => return Err("a string that does not end".to_string()),
            }
            let c = match self.next() {
                Some(b'"') => '"',
                Some(b'\\') => '\\',
                Some(b'/') => '/',
                Some(b'b') => '\u{8}',
                Some(b'f') => '\u{c}',
                Some(b'n') => '\n',
                Some(b'r') => '\r',
                Some(b't') => '\t',
                Some(b'u') => {
                    let high = self.hex4()?;
                    let code = if (0xd800..0xdc00).contains(&high) {
                        self.expect(b'\\')?;
                        self.expect(b'u')?;
                        let low = self.hex4()?;
                        0x10000 + ((high - 0xd800) << 10) + (low.wrapping_sub(0xdc00) & 0x3ff)
                    } else {
                        high
                    };
                    char::from_u32(code).ok_or_else(|| format!("bad \\u escape {code:x}"))?
                }
                _ => return Err(format!("bad escape at byte {}", self.at - 1)),
            };
            out.push(c);
        }
    }
}

/// A record's fields, and its path.
pub(crate) type RecordHead = (Vec<(String, Value)>, Vec<u8>);

/// A fastsum `--json` record's fields and its path (from `path_base64`
/// or `path`); `None` for a skipped entry's record; an error for a line
/// that is no record, has no path, or lists its file as unreadable. The
/// one reading of a record's head, for `diff`/`--update` and for `-c`.
pub(crate) fn record_head(line: &[u8]) -> Result<Option<RecordHead>, String> {
    let fields = std::str::from_utf8(line)
        .map_err(|_| "not UTF-8".to_string())
        .and_then(parse_object)
        .map_err(|why| format!("not a fastsum --json record: {why}"))?;
    let text = |key: &str| text_field(&fields, key);
    // A size given is a whole number of bytes, or the record is malformed
    // (`-c` checks it: a size of -1, 2.5, "x" or null was passed over, and
    // the file called OK whatever its size).
    let sized = fields.iter().any(|(k, _)| k == "size");
    if sized && number_field::<u64>(&fields, "size").is_none() {
        return Err("a size that is not a whole number of bytes".to_string());
    }
    let path = match (text("path_base64"), text("path")) {
        (Some(b64), _) => {
            let mut path = Vec::new();
            let room = b64.len() / 4 * 3;
            path.try_reserve_exact(room)
                .map_err(|_| format!("a name of {room} bytes is {}", super::lines::TOO_MUCH))?;
            match crate::digest::decode_base64_into(b64, &mut path) {
                true => path,
                false => return Err("bad path_base64".to_string()),
            }
        }
        (None, Some(p)) => super::lines::held(p.as_bytes())?,
        (None, None) => return Err("a record without a path".to_string()),
    };
    if text("skipped").is_some() {
        return Ok(None);
    }
    if let Some(error) = text("error") {
        let path = String::from_utf8_lossy(&path);
        return Err(format!("{path} was listed as unreadable: {error}"));
    }
    Ok(Some((fields, path)))
}

/// The text of the field `key` of a parsed object, if it is text.
pub fn text_field<'a>(fields: &'a [(String, Value)], key: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| match v {
            Value::Text(t) => Some(t.as_str()),
            _ => None,
        })
}

/// The number in the field `key` of a parsed object, if it is one that
/// fits `T`.
pub fn number_field<T: std::str::FromStr>(fields: &[(String, Value)], key: &str) -> Option<T> {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| match v {
            Value::Number(n) => n.parse().ok(),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_given_twice_is_refused_at_any_depth() {
        for line in [
            r#"{"path":"a","digest":"00","digest":"11"}"#,
            r#"{"path":"a","digests":{"md5":"00","md5":"11"}}"#,
            r#"{"path":"a","path":"b","digest":"00"}"#,
        ] {
            let e = parse_object(line).unwrap_err();
            assert!(e.contains("given twice"), "{line}: {e}");
        }
        // path and path_base64 are two members, as fastsum writes them.
        assert!(parse_object(r#"{"path":"a","path_base64":"YQ==","digest":"00"}"#).is_ok());
        // Past the members compared one by one, the set: a key repeated
        // on either side of the switch, and at its edge, is still found.
        for (n, twice) in [(40, 3), (40, 15), (40, 16), (40, 30), (16, 0), (17, 16)] {
            let mut line: Vec<String> = (0..n).map(|i| format!("\"k{i}\":{i}")).collect();
            line.push(format!("\"k{twice}\":0"));
            let line = format!("{{{}}}", line.join(","));
            let e = parse_object(&line).unwrap_err();
            assert!(e.contains("\"k"), "{n} {twice}: {e}");
            let distinct: Vec<String> = (0..n).map(|i| format!("\"k{i}\":{i}")).collect();
            let fields = parse_object(&format!("{{{}}}", distinct.join(","))).unwrap();
            assert_eq!(fields.len(), n);
        }
    }

    /// Strings with escapes among plain runs read back as Python's json
    /// writes them (the expected values written out by hand here).
    #[test]
    fn escapes_between_plain_runs_read_back() {
        let fields =
            parse_object(r#"{"a":"x\"y\\z\u00e9\ud83d\ude00\n","b":"","c":"\\","d":"é\/"}"#)
                .unwrap();
        let text = |k: &str| match &fields.iter().find(|(n, _)| n == k).unwrap().1 {
            Value::Text(t) => t.clone(),
            v => panic!("{v:?}"),
        };
        assert_eq!(text("a"), "x\"y\\z\u{e9}\u{1f600}\n");
        assert_eq!(text("b"), "");
        assert_eq!(text("c"), "\\");
        assert_eq!(text("d"), "é/");
        for bad in [r#"{"a":"x\"}"#, r#"{"a":"x\q"}"#, r#"{"a":"x"#, r#"{"a":"\u12"}"#] {
            assert!(parse_object(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn records_read_back() {
        let fields =
            parse_object(r#"{"path":"a \"q\"\\\n\u00e9\ud83d\ude00","size":3,"x":null,"ok":true}"#)
                .unwrap();
        assert_eq!(
            fields[0],
            ("path".into(), Value::Text("a \"q\"\\\né😀".into()))
        );
        assert_eq!(fields[1], ("size".into(), Value::Number("3".into())));
        assert_eq!(fields[2], ("x".into(), Value::Null));
        assert_eq!(fields[3], ("ok".into(), Value::Bool(true)));
        assert!(parse_object(r#"{"a":[1]}"#).is_err());
        let nested = parse_object(r#"{"d":{"md5":"ab","n":1},"e":{}}"#).unwrap();
        let inner = vec![
            ("md5".to_string(), Value::Text("ab".into())),
            ("n".to_string(), Value::Number("1".into())),
        ];
        assert_eq!(nested[0], ("d".into(), Value::Object(inner)));
        assert_eq!(nested[1], ("e".into(), Value::Object(Vec::new())));
        // One level down only: records are never deeper.
        assert!(parse_object(r#"{"d":{"e":{}}}"#).is_err());
        assert!(parse_object(r#"{"a":"b"} x"#).is_err());
        assert!(parse_object(r#"{"a":"b""#).is_err());
    }
}
