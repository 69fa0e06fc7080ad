//! The requests: signed by `rusty-s3` (SigV4 query signing), sent by
//! `ureq` (blocking, one connection per worker thread, kept alive),
//! retried with backoff on 500, 502, 503 (SlowDown), 504, 429 and on
//! transport errors (timeouts, resets). Every answer is read with a limit.
//!
//! Timeouts catch a stalled server, never a slow steady one: 10 s to
//! connect, and [`IDLE`] without a byte read or written (ureq's per-read
//! and per-write timeouts, restarted at each transfer); no cap on a whole
//! request, so a large `--download` streams as long as bytes keep coming.
//! `FASTSUM_S3_IDLE_TIMEOUT=SECONDS` shortens the idle time, for tests.
//! An XML answer or a HEAD (small, whatever the object's size) has a cap
//! on the whole request too, [`ANSWER_CAP`] idle periods, so a server
//! that trickles a listing a byte at a time cannot hold a run forever.

use std::collections::HashMap;
use std::time::Duration;

use rusty_s3::{Bucket, Credentials, S3Action, UrlStyle};

use super::config::S3Config;
use super::xml::{self, Attributes, Listed};

/// How long a signature is good for.
const SIGNED_FOR: Duration = Duration::from_secs(15 * 60);
/// Tries of one request, the first included.
const TRIES: u32 = 6;
/// The first wait before a retry, doubled at each (50 ms .. 1.6 s).
const FIRST_WAIT: Duration = Duration::from_millis(50);
/// A listing page or attributes answer larger than this is garbage.
const MAX_XML: u64 = 64 << 20;
/// How long a server may send or take nothing before the request fails.
const IDLE: Duration = Duration::from_secs(60);

/// A whole listing page, attributes answer or HEAD may take this many
/// idle periods (5 minutes by default).
const ANSWER_CAP: u32 = 5;

/// [`IDLE`], or `FASTSUM_S3_IDLE_TIMEOUT` seconds (for tests) where set.
fn idle_timeout() -> Duration {
    std::env::var("FASTSUM_S3_IDLE_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
        .map_or(IDLE, Duration::from_secs_f64)
}

/// A connection to one bucket.
pub(crate) struct Client {
    /// For answers (listings, HEADs, attributes): capped as a whole.
    agent: ureq::Agent,
    /// For objects' bodies: only the idle timeout.
    bodies: ureq::Agent,
    bucket: Bucket,
    credentials: Option<Credentials>,
}

/// A HEAD's answer: its headers (names in lower case) and status.
pub(crate) struct Head {
    pub status: u16,
    pub headers: HashMap<String, String>,
    /// Names given twice with two values.
    pub twice: Vec<String>,
}

impl Head {
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

fn retryable(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504)
}

impl Client {
    /// A client for `bucket` as `config` says.
    pub(crate) fn new(config: &S3Config, bucket: &str) -> Result<Client, String> {
        let endpoint = config
            .endpoint
            .parse()
            .map_err(|e| format!("the endpoint {:?}: {e}", config.endpoint))?;
        let style = match config.path_style {
            true => UrlStyle::Path,
            false => UrlStyle::VirtualHost,
        };
        let bucket = Bucket::new(endpoint, style, bucket.to_string(), config.region.clone())
            .map_err(|e| format!("the bucket {bucket:?} at {}: {e}", config.endpoint))?;
        let credentials = match (&config.access_key, &config.secret_key) {
            (Some(key), Some(secret)) => Some(match &config.session_token {
                Some(token) => Credentials::new_with_token(key, secret, token),
                None => Credentials::new(key, secret),
            }),
            _ => None,
        };
        let idle = idle_timeout();
        let agent = |cap: Option<Duration>| -> ureq::Agent {
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_connect(Some(Duration::from_secs(10)))
                .timeout_per_read(Some(idle))
                .timeout_per_write(Some(idle))
                .timeout_global(cap)
                .build()
                .into()
        };
        Ok(Client {
            agent: agent(Some(idle * ANSWER_CAP)),
            bodies: agent(None),
            bucket,
            credentials,
        })
    }

    /// Sends what `request` builds (signed anew each try) until an answer
    /// that is not worth retrying, or the tries run out.
    fn send(
        &self,
        request: &dyn Fn() -> Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<ureq::http::Response<ureq::Body>, String> {
        let mut wait = FIRST_WAIT;
        let mut last = String::new();
        for attempt in 1..=TRIES {
            match request() {
                Ok(response) if !retryable(response.status().as_u16()) => return Ok(response),
                Ok(response) => last = format!("HTTP {}", response.status()),
                Err(e) => last = e.to_string(),
            }
            if attempt < TRIES {
                std::thread::sleep(wait);
                wait *= 2;
            }
        }
        Err(format!("{last} (after {TRIES} tries)"))
    }

    /// Every object below `prefix`, in the order the listing gave them.
    pub(crate) fn list(&self, prefix: &str) -> Result<Vec<Listed>, String> {
        let mut objects = Vec::new();
        let mut token: Option<String> = None;
        let mut pages = super::bounds::Pages::default();
        loop {
            let url = {
                let mut action = self.bucket.list_objects_v2(self.credentials.as_ref());
                if !prefix.is_empty() {
                    action.with_prefix(prefix);
                }
                if let Some(t) = &token {
                    action.with_continuation_token(t.clone());
                }
                action.sign(SIGNED_FOR)
            };
            let response = self.send(&|| self.agent.get(url.as_str()).call())?;
            let body = xml_body(response, "the listing")?;
            let page = xml::parse_listing(&body).map_err(|e| format!("the listing: {e}"))?;
            let keys = page.objects.iter().map(|o| &o.key[..]);
            let more = pages.page(keys, page.next.as_deref())?;
            objects.extend(page.objects);
            match (more, page.next) {
                (true, Some(next)) => token = Some(next),
                _ => return Ok(objects),
            }
        }
    }

    /// HeadObject with the checksums asked for (and a part, if given).
    pub(crate) fn head(&self, key: &str, part: Option<u64>) -> Result<Head, String> {
        let part = part.map(|p| p.to_string());
        let url = {
            let mut action = self.bucket.head_object(self.credentials.as_ref(), key);
            action
                .headers_mut()
                .insert("x-amz-checksum-mode", "ENABLED");
            if let Some(p) = &part {
                action.query_mut().insert("partNumber", p.clone());
            }
            action.sign(SIGNED_FOR)
        };
        let response = self.send(&|| {
            self.agent
                .head(url.as_str())
                .header("x-amz-checksum-mode", "ENABLED")
                .call()
        })?;
        // A header given twice with two values (two checksums, two
        // encryptions) is no answer: which one S3 meant is not to be told.
        let mut headers = HashMap::new();
        let mut twice = Vec::new();
        for (name, value) in response.headers() {
            let Ok(value) = value.to_str() else { continue };
            let name = name.as_str().to_ascii_lowercase();
            match headers.insert(name.clone(), value.to_string()) {
                Some(before) if before != value => twice.push(name),
                _ => {}
            }
        }
        Ok(Head {
            status: response.status().as_u16(),
            headers,
            twice,
        })
    }

    /// GetObjectAttributes' ObjectParts, every page of them.
    pub(crate) fn attributes(&self, key: &str) -> Result<Attributes, String> {
        let mut all = Attributes::default();
        let mut marker: Option<u64> = None;
        loop {
            let marker_text = marker.map(|m| m.to_string());
            let url = {
                let mut action = self.bucket.get_object(self.credentials.as_ref(), key);
                action.query_mut().insert("attributes", "");
                if let Some(m) = &marker_text {
                    action.query_mut().insert("part-number-marker", m.clone());
                }
                let names = "ObjectParts,ETag,Checksum";
                action
                    .headers_mut()
                    .insert("x-amz-object-attributes", names);
                action.sign(SIGNED_FOR)
            };
            let response = self.send(&|| {
                self.agent
                    .get(url.as_str())
                    .header("x-amz-object-attributes", "ObjectParts,ETag,Checksum")
                    .call()
            })?;
            let body = xml_body(response, "GetObjectAttributes")?;
            let page = xml::parse_attributes(&body)?;
            all.parts_count = all.parts_count.or(page.parts_count);
            all.part_sizes.extend(page.part_sizes);
            // Ever-new markers end at S3's part limit.
            let listed = all.part_sizes.len() as u64;
            super::bounds::at_most_parts(
                listed.max(all.parts_count.unwrap_or(0)),
                "GetObjectAttributes",
            )?;
            match (page.truncated, page.next_marker) {
                (true, Some(next)) if Some(next) > marker => marker = Some(next),
                (true, _) => return Err("GetObjectAttributes: parts that do not end".into()),
                (false, _) => return Ok(all),
            }
        }
    }

    /// The object's bytes, streamed.
    /// The object `key`'s body, pinned to the version listed: asked with
    /// `If-Match` its listed ETag, so an object replaced since the listing
    /// is an error (HTTP 412), never another object's bytes read as the
    /// listed one's.
    pub(crate) fn get(&self, key: &str, etag: &str) -> Result<ureq::Body, String> {
        let url = self
            .bucket
            .get_object(self.credentials.as_ref(), key)
            .sign(SIGNED_FOR);
        let pinned = format!("\"{etag}\"");
        let response = self.send(&|| {
            self.bodies
                .get(url.as_str())
                .header("If-Match", pinned.as_str())
                .call()
        })?;
        match response.status().as_u16() {
            200 => Ok(response.into_body()),
            412 => Err(format!(
                "GetObject: HTTP 412: the object is no longer the one listed (ETag {etag})"
            )),
            status => Err(format!("GetObject: HTTP {status}")),
        }
    }
}

/// An XML answer's body, read once with a limit; an answer that is not
/// 200 is an error with its `<Code>`, naming `what` was asked.
fn xml_body(mut response: ureq::http::Response<ureq::Body>, what: &str) -> Result<String, String> {
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_XML)
        .read_to_string()
        .map_err(|e| format!("{what}: {e}"))?;
    match status {
        200 => Ok(body),
        _ => Err(format!("{what}: HTTP {status}: {}", error_code(&body))),
    }
}

/// The `<Code>` of an S3 error answer, or its start.
pub(crate) fn error_code(body: &str) -> String {
    match (body.find("<Code>"), body.find("</Code>")) {
        (Some(a), Some(b)) if a + 6 <= b => body[a + 6..b].to_string(),
        _ => body.chars().take(80).collect(),
    }
}
