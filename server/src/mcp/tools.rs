//! The tools: each reads its arguments, asks the service's API ([`super::api`]) and answers
//! deterministic, bounded text — summaries and comparisons written by the model's
//! [`embers_model::summary`], lists by [`super::text`]. A bad argument or a refused request is
//! a tool error whose text says what to change.
//!
//! Adding a tool: an argument struct in `args.rs` (or a file of its own, as `functions.rs`), a
//! method here calling `self.api`, its text in `text.rs` or the model.

use embers_model::contract::envelope::Table;
use embers_model::contract::explore::{
    FunctionOrder, FunctionsAnswer, ServiceRow, ServicesRequest, TimelineAnswer, TimelineRequest,
};
use embers_model::contract::request::ProfileRequest;
use embers_model::contract::snapshot::{is_valid_id, SnapshotMeta, ID_LEN, SNAPSHOTS_PATH};
use embers_model::summary::title::{
    compare_title, profile_title, range_label, side_label, snapshot_title, when_label,
};
use embers_model::summary::{compare_summary, profile_summary, Subject, DEFAULT_ROWS};
use embers_model::Profile;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::schemars::{self, JsonSchema};
use rmcp::{tool, tool_router};
use serde::Deserialize;

use super::api;
use super::args::{non_blank, now, Range, Which};
use super::error::ToolError;
use super::functions::{self, FunctionsArgs};
use super::{text, Embers};

/// `list_services`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ServicesArgs {
    /// The time range.
    #[serde(flatten)]
    pub range: Range,
    /// Only this event type (`on-cpu`, `off-cpu`, ...); default all.
    pub event_type: Option<String>,
    /// Only this language type (`eBPF`, ...); default all.
    pub language: Option<String>,
    /// Rows per event type (default 20, at most 50).
    pub rows: Option<usize>,
}

/// `summarize_profile`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ProfileArgs {
    /// Which samples.
    #[serde(flatten)]
    pub which: Which,
    /// The time range.
    #[serde(flatten)]
    pub range: Range,
    /// Rows per list (default 10, at most 50).
    pub rows: Option<usize>,
}

/// `compare_profiles`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CompareArgs {
    /// Which samples (both sides).
    #[serde(flatten)]
    pub which: Which,
    /// The comparison's range (default the last hour).
    #[serde(flatten)]
    pub range: Range,
    /// The baseline's start, Unix seconds. Without any baseline argument the baseline is the
    /// range of the same length just before the comparison.
    pub baseline_time_start: Option<i64>,
    /// The baseline's end, Unix seconds.
    pub baseline_time_end: Option<i64>,
    /// The baseline as the range of this length just before the comparison, e.g. `1h`.
    pub baseline_last: Option<String>,
    /// A saved snapshot's id as the baseline (`list_snapshots` lists them).
    pub baseline_snapshot: Option<String>,
    /// Rows per list (default 10, at most 50).
    pub rows: Option<usize>,
}

/// `timeline`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TimelineArgs {
    /// The process; default every process (the per-host `Total` left out).
    pub app_service: Option<String>,
    /// `on-cpu` (default), `off-cpu`, ...
    pub event_type: Option<String>,
    /// `eBPF` (default), ...
    pub language: Option<String>,
    /// Conditions such as `host='node-a'`.
    pub tag_filter: Option<String>,
    /// The time range.
    #[serde(flatten)]
    pub range: Range,
    /// Bucket length in seconds (default: picked for the range).
    pub interval: Option<i64>,
    /// A tag, `app_service` or `thread` to break the series down by.
    pub group_by: Option<String>,
}

/// `read_snapshot`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SnapshotArgs {
    /// The snapshot's id (26 characters A-Z and 2-7), as `list_snapshots` shows it.
    pub id: String,
    /// Rows per list (default 10, at most 50).
    pub rows: Option<usize>,
}

/// The ProfileTracing request for `which` over `(start, end)`.
fn request(which: &Which, (start, end): (i64, i64)) -> ProfileRequest {
    ProfileRequest {
        app_service: Some(which.app_service.trim().to_owned()),
        profile_language_type: which.language(),
        profile_event_type: which.event_type(),
        tag_filter: non_blank(&which.tag_filter).unwrap_or_default().to_owned(),
        time_start: start,
        time_end: end,
        max_kernel_stack_depth: None,
    }
}

fn subject(title: String, event_type: &str, rows: Option<usize>) -> Subject {
    Subject {
        title,
        event_type: event_type.to_owned(),
        rows: rows.unwrap_or(DEFAULT_ROWS),
    }
}

impl Embers {
    async fn profile(&self, request: &ProfileRequest) -> Result<Profile, ToolError> {
        if request.app_service.as_deref().is_none_or(str::is_empty) {
            return Err(ToolError::argument(
                "app_service is required: name a process (list_services lists them)",
            ));
        }
        let text = self.api.post("/v1/profile/ProfileTracing", request).await?;
        api::profile(text).await
    }

    async fn snapshot(&self, id: &str) -> Result<(SnapshotMeta, Profile), ToolError> {
        let id = id.trim();
        if !is_valid_id(id) {
            return Err(ToolError::Argument(format!(
                "'{id}' is not a snapshot id: ids are {ID_LEN} characters A-Z and 2-7 (list_snapshots lists them)"
            )));
        }
        let text = self.api.get(&format!("{SNAPSHOTS_PATH}/{id}")).await?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| ToolError::Answer(format!("unexpected snapshot: {e}")))?;
        let meta: SnapshotMeta = serde_json::from_value(value["snapshot"].clone())
            .map_err(|e| ToolError::Answer(format!("unexpected snapshot metadata: {e}")))?;
        Ok((meta, api::profile(text).await?))
    }

    async fn baseline(
        &self,
        args: &CompareArgs,
        (start, end): (i64, i64),
    ) -> Result<(String, Profile), ToolError> {
        let range = Range {
            time_start: args.baseline_time_start,
            time_end: args.baseline_time_end,
            last: args.baseline_last.clone(),
        };
        let given_range = range.time_start.is_some() || range.time_end.is_some();
        match non_blank(&args.baseline_snapshot) {
            Some(_) if given_range || non_blank(&range.last).is_some() => Err(ToolError::argument(
                "give either baseline_snapshot or a baseline range, not both",
            )),
            Some(id) => {
                let (meta, profile) = self.snapshot(id).await?;
                let label = side_label(&meta.request, Some((&meta.id, &meta.name)));
                Ok((label, profile))
            }
            None => {
                let (b_start, b_end) = if given_range {
                    range.resolve(start, "baseline_")?
                } else {
                    // `baseline_last` (or the comparison's own length) ending just before it.
                    let length = format!("{}s", end - start + 1);
                    let last = Range {
                        last: Some(non_blank(&range.last).map_or(length, str::to_owned)),
                        ..Range::default()
                    };
                    last.resolve(start - 1, "baseline_")?
                };
                let asked = request(&args.which, (b_start, b_end));
                let profile = self.profile(&asked).await?;
                Ok((side_label(&asked, None), profile))
            }
        }
    }
}

#[tool_router(vis = "pub(super)")]
impl Embers {
    #[tool(
        description = "List the services (processes) with samples in a time range, by value, per event type, with each one's share and unit. Start here to learn the names the other tools take."
    )]
    async fn list_services(
        &self,
        Parameters(args): Parameters<ServicesArgs>,
    ) -> Result<String, ToolError> {
        let (start, end) = args.range.resolve(now(), "")?;
        let body = ServicesRequest {
            time_start: start,
            time_end: end,
            profile_language_type: non_blank(&args.language).map(str::to_owned),
            profile_event_type: non_blank(&args.event_type).map(str::to_owned),
            tag_filter: String::new(),
        };
        let answer = self.api.post("/v1/profile/services", &body).await?;
        let table: Table<ServiceRow> = api::result(&answer)?;
        Ok(text::services(
            &table.values,
            &range_label(start, end),
            args.rows,
        ))
    }

    #[tool(
        description = "Summarise one service's profile over a time range: total, the hottest functions by self and by total value, and the hottest call paths, with shares and units."
    )]
    async fn summarize_profile(
        &self,
        Parameters(args): Parameters<ProfileArgs>,
    ) -> Result<String, ToolError> {
        let range = args.range.resolve(now(), "")?;
        let request = request(&args.which, range);
        let profile = self.profile(&request).await?;
        Ok(profile_summary(
            &profile,
            &subject(
                profile_title(&request),
                &request.profile_event_type,
                args.rows,
            ),
        ))
    }

    #[tool(
        description = "Compare a service's profile over a time range (the comparison, default the last hour) with a baseline: a range (default the same length just before), or a saved snapshot. Lists what grew and what shrank, as shares of each side's total, where the change starts first."
    )]
    async fn compare_profiles(
        &self,
        Parameters(args): Parameters<CompareArgs>,
    ) -> Result<String, ToolError> {
        let range = args.range.resolve(now(), "")?;
        let request = request(&args.which, range);
        let (baseline_label, baseline) = self.baseline(&args, range).await?;
        let comparison = self.profile(&request).await?;
        let comparison_label = side_label(&request, None);
        let subject = subject(
            compare_title(&request),
            &request.profile_event_type,
            args.rows,
        );
        Ok(compare_summary(
            &baseline,
            &comparison,
            [&baseline_label, &comparison_label],
            &subject,
        ))
    }

    #[tool(
        description = "The hottest functions across every service (or one), by self (default) or total value, with shares and the services each runs in. With a baseline (`previous` period, `yesterday`, or baseline_time_start/end) it lists what grew, by the change of share in percentage points (by default the largest change inside one service), so the first line is where a regression starts."
    )]
    async fn top_functions(
        &self,
        Parameters(args): Parameters<FunctionsArgs>,
    ) -> Result<String, ToolError> {
        let range = args.range.resolve(now(), "")?;
        let (body, base) = functions::request(&args, range)?;
        let answer = self.api.post("/v1/profile/functions", &body).await?;
        let answer: FunctionsAnswer = api::result(&answer)?;
        let heading = profile_title(&ProfileRequest {
            app_service: Some(
                body.app_service
                    .clone()
                    .unwrap_or_else(|| "every service".to_owned()),
            ),
            profile_language_type: body.profile_language_type.clone().unwrap_or_default(),
            profile_event_type: body.profile_event_type.clone(),
            tag_filter: body.tag_filter.clone(),
            time_start: range.0,
            time_end: range.1,
            max_kernel_stack_depth: None,
        });
        let event = &body.profile_event_type;
        let baseline = base.map(|(start, end)| when_label(event, start, end));
        Ok(text::functions(
            &answer,
            &text::FunctionsAsked {
                heading: &heading,
                event_type: &body.profile_event_type,
                metric: body.metric.unwrap_or_default(),
                order: body.order_by.unwrap_or(FunctionOrder::Value),
                baseline: baseline.as_deref(),
            },
        ))
    }

    #[tool(
        description = "A service's (or every service's) values over time in buckets, optionally one series per tag value (group_by), with the peak and the quietest bucket."
    )]
    async fn timeline(
        &self,
        Parameters(args): Parameters<TimelineArgs>,
    ) -> Result<String, ToolError> {
        let range = args.range.resolve(now(), "")?;
        let which = Which {
            app_service: args.app_service.clone().unwrap_or_default(),
            event_type: args.event_type.clone(),
            language: args.language.clone(),
            tag_filter: args.tag_filter.clone(),
        };
        let mut profile = request(&which, range);
        profile.app_service = non_blank(&args.app_service).map(str::to_owned);
        let body = TimelineRequest {
            profile,
            interval: args.interval,
            group_by: non_blank(&args.group_by).map(str::to_owned),
            group_limit: None,
        };
        let answer = self.api.post("/v1/profile/timeline", &body).await?;
        let timeline: TimelineAnswer = api::result(&answer)?;
        let who = body
            .profile
            .app_service
            .as_deref()
            .unwrap_or("every service");
        let heading = format!(
            "{who}, {}, {}",
            body.profile.profile_event_type,
            range_label(range.0, range.1)
        );
        Ok(text::timeline(
            &timeline,
            &heading,
            &body.profile.profile_event_type,
        ))
    }

    #[tool(
        description = "List the saved snapshots (answers kept beyond the retention), newest first, with their ids."
    )]
    async fn list_snapshots(&self) -> Result<String, ToolError> {
        let answer = self.api.get(SNAPSHOTS_PATH).await?;
        let all: Vec<SnapshotMeta> = api::result(&answer)?;
        Ok(text::snapshots(&all))
    }

    #[tool(
        description = "Summarise a saved snapshot's profile (as summarize_profile does), with what it was saved from."
    )]
    async fn read_snapshot(
        &self,
        Parameters(args): Parameters<SnapshotArgs>,
    ) -> Result<String, ToolError> {
        let (meta, profile) = self.snapshot(&args.id).await?;
        let title = snapshot_title(&meta.id, &meta.name, &meta.request);
        Ok(profile_summary(
            &profile,
            &subject(title, &meta.request.profile_event_type, args.rows),
        ))
    }
}
