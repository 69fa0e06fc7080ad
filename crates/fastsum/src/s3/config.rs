//! Credentials, region, endpoint and addressing style from the places the
//! AWS CLI and SDKs read them: the environment (`AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`,
//! `AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`,
//! `AWS_PROFILE`), then the profile's section of `~/.aws/credentials`
//! (`AWS_SHARED_CREDENTIALS_FILE`) and `~/.aws/config` (`AWS_CONFIG_FILE`),
//! with its nested `s3 =` block (`addressing_style = path`), and the
//! `[services NAME]` section its `services = NAME` names (`s3 =` then
//! `endpoint_url = ...`, the AWS CLI's service-specific endpoints).

use std::collections::HashMap;
use std::path::PathBuf;

/// Where and as whom S3 is reached.
#[derive(Clone, Debug, Default)]
pub(crate) struct S3Config {
    /// The access key id (none: requests go unsigned).
    pub access_key: Option<String>,
    /// The secret access key.
    pub secret_key: Option<String>,
    /// A session token (temporary credentials).
    pub session_token: Option<String>,
    /// The region (default `us-east-1`).
    pub region: String,
    /// The endpoint, `https://s3.REGION.amazonaws.com` unless one is set.
    pub endpoint: String,
    /// Path-style addressing (`endpoint/bucket/key`) rather than
    /// virtual-host style (`bucket.endpoint/key`).
    pub path_style: bool,
}

/// One profile's settings: `key = value` lines of its section, the
/// nested `s3 =` block's as `s3.key`.
type Section = HashMap<String, String>;

/// The section `wanted` of an INI-style AWS file (`[profile NAME]` or
/// `[NAME]`; `default` is `[default]` in both).
fn section(text: &str, wanted: &[String]) -> Section {
    let mut out = Section::new();
    let mut inside = false;
    let mut nested: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            inside = wanted.iter().any(|w| w == name.trim());
            nested = None;
            continue;
        }
        if !inside {
            continue;
        }
        let Some((key, value)) = trimmed.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim().to_ascii_lowercase(), value.trim().to_string());
        let indented = line.starts_with([' ', '\t']);
        match (&nested, indented) {
            (Some(block), true) => {
                out.insert(format!("{block}.{key}"), value);
            }
            _ if value.is_empty() => nested = Some(key),
            _ => {
                nested = None;
                out.insert(key, value);
            }
        }
    }
    out
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn home_file(variable: &str, name: &str) -> Option<PathBuf> {
    env(variable)
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".aws").join(name)))
}

fn read_section(path: Option<PathBuf>, wanted: &[String]) -> Section {
    path.and_then(|p| std::fs::read_to_string(p).ok())
        .map_or_else(Section::new, |text| section(&text, wanted))
}

/// Whether `endpoint`'s host is an IP address or `localhost`, where
/// virtual-host names cannot resolve: path style by default.
fn is_ip_or_localhost(endpoint: &str) -> bool {
    let rest = endpoint.split_once("://").map_or(endpoint, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or(rest);
    let host = match authority.strip_prefix('[') {
        Some(v6) => return v6.contains(']'),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    host == "localhost" || host.parse::<std::net::Ipv4Addr>().is_ok()
}

/// The endpoint in the AWS CLI's order: `AWS_ENDPOINT_URL_S3`,
/// `AWS_ENDPOINT_URL`, the profile's `[services NAME]` section's `s3 =`
/// block, the profile's own `s3 =` block and `endpoint_url`, else AWS's
/// for the region; `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true` (or the
/// profile's `ignore_configured_endpoint_urls = true`) leaves them all
/// out. A service's endpoint that fastsum did not read sent its requests
/// (and its cache's claims) to another server than the AWS CLI's.
fn endpoint_of(
    env: &dyn Fn(&str) -> Option<String>,
    config: &Section,
    services: &Section,
    region: &str,
) -> String {
    let is_true = |v: Option<String>| v.is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let ignore = is_true(env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"))
        || is_true(config.get("ignore_configured_endpoint_urls").cloned());
    let configured = || {
        env("AWS_ENDPOINT_URL_S3")
            .or_else(|| env("AWS_ENDPOINT_URL"))
            .or_else(|| services.get("s3.endpoint_url").cloned())
            .or_else(|| config.get("s3.endpoint_url").cloned())
            .or_else(|| config.get("endpoint_url").cloned())
    };
    (!ignore)
        .then(configured)
        .flatten()
        .unwrap_or_else(|| format!("https://s3.{region}.amazonaws.com"))
}

impl S3Config {
    /// The settings as the AWS CLI would find them; `path_style` forces
    /// path-style addressing (`--s3-path-style`).
    pub(crate) fn from_environment(path_style: bool) -> S3Config {
        let profile = env("AWS_PROFILE").unwrap_or_else(|| "default".into());
        let config_names = vec![format!("profile {profile}"), profile.clone()];
        let config = read_section(home_file("AWS_CONFIG_FILE", "config"), &config_names);
        let credentials = read_section(
            home_file("AWS_SHARED_CREDENTIALS_FILE", "credentials"),
            std::slice::from_ref(&profile),
        );
        let setting = |variable: &str, key: &str| {
            env(variable)
                .or_else(|| credentials.get(key).cloned())
                .or_else(|| config.get(key).cloned())
        };
        let region = env("AWS_REGION")
            .or_else(|| env("AWS_DEFAULT_REGION"))
            .or_else(|| config.get("region").cloned())
            .unwrap_or_else(|| "us-east-1".into());
        let services = match config.get("services") {
            Some(name) => read_section(
                home_file("AWS_CONFIG_FILE", "config"),
                &[format!("services {name}")],
            ),
            None => Section::new(),
        };
        let endpoint = endpoint_of(&env, &config, &services, &region);
        let path_style = path_style
            || config.get("s3.addressing_style").map(String::as_str) == Some("path")
            || is_ip_or_localhost(&endpoint);
        S3Config {
            access_key: setting("AWS_ACCESS_KEY_ID", "aws_access_key_id"),
            secret_key: setting("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"),
            session_token: setting("AWS_SESSION_TOKEN", "aws_session_token"),
            region,
            endpoint,
            path_style,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_sections_and_the_nested_s3_block() {
        let text = "[default]\nregion = eu-west-1\n[profile ci]\nregion = us-west-2\n\
                    s3 =\n  addressing_style = path\n  endpoint_url = http://127.0.0.1:9\n\
                    output = json\n";
        let ci = section(text, &["profile ci".into()]);
        assert_eq!(ci.get("region").map(String::as_str), Some("us-west-2"));
        assert_eq!(
            ci.get("s3.addressing_style").map(String::as_str),
            Some("path")
        );
        assert_eq!(
            ci.get("s3.endpoint_url").map(String::as_str),
            Some("http://127.0.0.1:9")
        );
        assert_eq!(ci.get("output").map(String::as_str), Some("json"));
        let default = section(text, &["default".into()]);
        assert_eq!(default.get("region").map(String::as_str), Some("eu-west-1"));
        assert!(!default.contains_key("s3.addressing_style"));
    }

    #[test]
    fn the_endpoint_in_the_aws_cli_s_order() {
        let text = "[profile ci]\nservices = local\nendpoint_url = http://127.0.0.1:1\n\
                    [services local]\ns3 =\n  endpoint_url = http://127.0.0.1:2\n\
                    sts =\n  endpoint_url = http://127.0.0.1:3\n";
        let config = section(text, &["profile ci".into()]);
        let services = section(text, &["services local".into()]);
        let none = |_: &str| None;
        assert_eq!(
            endpoint_of(&none, &config, &services, "r"),
            "http://127.0.0.1:2"
        );
        assert_eq!(
            endpoint_of(&none, &config, &Section::new(), "r"),
            "http://127.0.0.1:1"
        );
        let global = |k: &str| (k == "AWS_ENDPOINT_URL").then(|| "http://127.0.0.1:4".to_owned());
        assert_eq!(
            endpoint_of(&global, &config, &services, "r"),
            "http://127.0.0.1:4"
        );
        let s3 = |k: &str| match k {
            "AWS_ENDPOINT_URL_S3" => Some("http://127.0.0.1:5".to_owned()),
            "AWS_ENDPOINT_URL" => Some("http://127.0.0.1:4".to_owned()),
            _ => None,
        };
        assert_eq!(
            endpoint_of(&s3, &config, &services, "r"),
            "http://127.0.0.1:5"
        );
        let ignore = |k: &str| match k {
            "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS" => Some("TRUE".to_owned()),
            _ => s3(k),
        };
        assert_eq!(
            endpoint_of(&ignore, &config, &services, "eu-west-1"),
            "https://s3.eu-west-1.amazonaws.com"
        );
    }

    #[test]
    fn ip_and_localhost_endpoints_are_path_style() {
        assert!(is_ip_or_localhost("http://127.0.0.1:8333"));
        assert!(is_ip_or_localhost("http://localhost:9000/"));
        assert!(is_ip_or_localhost("http://[::1]:9000"));
        assert!(!is_ip_or_localhost("https://s3.us-east-1.amazonaws.com"));
    }
}
