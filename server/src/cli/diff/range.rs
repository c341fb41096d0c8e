//! Sides of `diff` that are stored ranges: `--base-range` / `--new-range` read as times, asked
//! as ProfileTracing of the store (`--db`, `--clickhouse-url`: the service's own routes in
//! process, as the MCP tools ask them) or of a running service (`--url`), and the link to the
//! viewer's differential view of two ranges (the page's own URL parameters).

use std::path::Path;

use embers_model::contract::request::{request_to_url_pairs, ProfileRequest};
use embers_model::Profile;

use crate::http::state::AppState;
use crate::mcp::api::{self, Api};
use crate::store::Synchronous;
use crate::store_args::{open_store, ClickHouseArgs};

/// The path ProfileTracing is asked at.
const PROFILE_TRACING: &str = "/v1/profile/ProfileTracing";

/// A range as `--base-range` / `--new-range` give it: `START..END`, each Unix seconds, RFC 3339
/// (`2026-11-28T10:00:00Z`), `now` or `now-DURATION` (`now-1h`); or `DURATION` alone, the last
/// stretch ending now. Inclusive Unix seconds.
pub fn parse_range(text: &str, now: i64) -> Result<(i64, i64), String> {
    let text = text.trim();
    let (start, end) = match text.split_once("..") {
        Some((start, end)) => (time(start, now)?, time(end, now)?),
        None => (now - duration(text)? + 1, now),
    };
    if start <= 0 || start > end {
        return Err(format!(
            "'{text}': the start ({start}) must be a positive time before the end ({end})"
        ));
    }
    Ok((start, end))
}

fn time(text: &str, now: i64) -> Result<i64, String> {
    let text = text.trim();
    if text == "now" {
        return Ok(now);
    }
    if let Some(ago) = text.strip_prefix("now-") {
        return Ok(now - duration(ago)?);
    }
    if let Ok(secs) = text.parse::<i64>() {
        return Ok(secs);
    }
    let at = humantime::parse_rfc3339_weak(text).map_err(|_| {
        format!("'{text}' is not a time: Unix seconds, 2026-11-28T10:00:00Z, now or now-1h")
    })?;
    at.duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .map_err(|_| format!("'{text}' is before 1970"))
}

fn duration(text: &str) -> Result<i64, String> {
    let d = humantime::parse_duration(text.trim())
        .map_err(|_| format!("'{text}' is not a duration such as 30m, 1h or 2d"))?;
    Ok(i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Where stored ranges are asked.
pub enum Source {
    /// The store itself, through the service's routes in process.
    Store(Api),
    /// A running service.
    Url {
        /// Its base URL, without a trailing `/`.
        base: String,
        /// `--token-file`'s token, sent as `Authorization: Bearer`.
        token: Option<String>,
        /// The HTTP client.
        client: reqwest::Client,
    },
}

impl Source {
    /// The service at `url` when given, else the store `--db` or `--clickhouse-url` name.
    pub fn open(
        url: Option<&str>,
        token_file: Option<&Path>,
        db: Option<&Path>,
        clickhouse: &ClickHouseArgs,
    ) -> Result<Source, String> {
        if let Some(url) = url {
            let token = token_file.map(read_token).transpose()?;
            return Ok(Source::Url {
                base: url.trim_end_matches('/').to_owned(),
                token,
                client: reqwest::Client::new(),
            });
        }
        if clickhouse.urls.is_empty() {
            // Opening a missing file would create an empty database and then report "no
            // samples": name the real mistake.
            let path = db.map_or_else(crate::store_args::default_db_path, Path::to_path_buf);
            if !path.is_file() {
                return Err(format!(
                    "no database at {}: give --db PATH or --url URL",
                    path.display()
                ));
            }
        }
        let store = open_store(db, clickhouse, Synchronous::Normal)?;
        Ok(Source::Store(Api::new(crate::router::internal_app(
            AppState::new(store),
        ))))
    }

    /// The profile of `request`.
    pub async fn profile(&self, request: &ProfileRequest) -> Result<Profile, String> {
        match self {
            // The command's errors are its printed text.
            Source::Store(api) => {
                let text = api.post(PROFILE_TRACING, request).await;
                let text = text.map_err(|e| e.to_string())?;
                api::profile(text).await.map_err(|e| e.to_string())
            }
            Source::Url {
                base,
                token,
                client,
            } => {
                let url = format!("{base}{PROFILE_TRACING}");
                let mut post = client.post(&url).json(request);
                if let Some(token) = token {
                    post = post.bearer_auth(token);
                }
                let response = post.send().await.map_err(|e| format!("{url}: {e}"))?;
                let status = response.status().as_u16();
                let text = response.text().await.map_err(|e| format!("{url}: {e}"))?;
                embers_model::decode_response(status, &text)
                    .map(|d| d.profile)
                    .map_err(|e| format!("{url}: {e}"))
            }
        }
    }
}

/// The token in the file at `path` (one line), checked as the service checks its own.
fn read_token(path: &Path) -> Result<String, String> {
    crate::http::guard::token::Token::read(path)?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?;
    Ok(text.trim().to_owned())
}

/// The viewer at `viewer` showing the differential view: `new`'s query compared with
/// `base`'s range (the page's `baseline_*` parameters), self time, `select`ed.
pub fn diff_link(
    viewer: &str,
    new: &ProfileRequest,
    base: &ProfileRequest,
    select: Option<&str>,
) -> Result<String, String> {
    let mut url =
        reqwest::Url::parse(viewer).map_err(|e| format!("--link {viewer}: not a URL ({e})"))?;
    {
        let mut pairs = url.query_pairs_mut();
        for (k, v) in request_to_url_pairs(new) {
            pairs.append_pair(k, &v);
        }
        pairs.append_pair("baseline_time_start", &base.time_start.to_string());
        pairs.append_pair("baseline_time_end", &base.time_end.to_string());
        if base.tag_filter != new.tag_filter {
            pairs.append_pair("baseline_tag_filter", &base.tag_filter);
        }
        pairs.append_pair("metric", "self");
        if let Some(f) = select {
            pairs.append_pair("select", f);
        }
    }
    Ok(url.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_read_times_and_durations_and_say_what_is_wrong() {
        let now = 1_800_000_000;
        assert_eq!(parse_range("1h", now), Ok((now - 3599, now)));
        assert_eq!(
            parse_range("now-2h..now-1h", now),
            Ok((now - 7200, now - 3600))
        );
        assert_eq!(parse_range("100..200", now), Ok((100, 200)));
        assert_eq!(
            parse_range("2026-11-28T10:00:00Z..2026-11-28T11:00:00Z", now),
            Ok((1_795_860_000, 1_795_863_600))
        );
        assert!(parse_range("200..100", now)
            .unwrap_err()
            .contains("before the end"));
        assert!(parse_range("soon", now)
            .unwrap_err()
            .contains("not a duration"));
        assert!(parse_range("yesterday..now", now)
            .unwrap_err()
            .contains("not a time"));
    }

    #[test]
    fn the_link_is_the_pages_compare_view() {
        let new = ProfileRequest {
            app_service: Some("bench".into()),
            profile_language_type: "eBPF".into(),
            profile_event_type: "on-cpu".into(),
            time_start: 200,
            time_end: 299,
            ..ProfileRequest::default()
        };
        let base = ProfileRequest {
            time_start: 100,
            time_end: 199,
            ..new.clone()
        };
        let link = diff_link("https://embers.example/", &new, &base, Some("a&b c")).expect("url");
        assert_eq!(
            link,
            "https://embers.example/?app_service=bench&profile_language_type=eBPF&\
             profile_event_type=on-cpu&time_start=200&time_end=299&baseline_time_start=100&\
             baseline_time_end=199&metric=self&select=a%26b+c"
        );
        assert!(diff_link("not a url", &new, &base, None).is_err());
    }
}
