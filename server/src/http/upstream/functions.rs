//! The functions endpoint against a DeepFlow querier, which keeps no per-function table: the
//! range's services (the services statement), then the ProfileTracing answers of the busiest
//! `--upstream-fanout` of them, each decoded by the model and its frames summed
//! ([`frame_stats`]); a service whose name the querier could not be sent safely
//! ([`super::fields::is_sendable`]) is passed over. The answer's `coverage` names the services
//! read and says that the others' functions are not counted; shares stay of every service's
//! samples (the services statement sums them all). The function timeline would need one
//! ProfileTracing question per bucket: it is answered 501.

use axum::body::Bytes;
use axum::http::header;
use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::explore::{
    Coverage, FunctionSums, FunctionsAnswer, FunctionsQuery, SelfTotal, ServiceRow, ServicesQuery,
};
use embers_model::contract::request::ProfileRequest;
use embers_model::contract::selection::Selection;
use embers_model::tree::stats::frame_stats;
use embers_model::wire::decode_response_table;
use futures_util::future::join_all;

use super::relay::ReadError;
use super::{statements, Org, Upstream, ORG_HEADER};
use crate::error::Error;

/// Why the function timeline has no upstream answer.
pub const NO_TIMELINE: &str = "function_timeline needs Embers' own store: a DeepFlow querier \
     keeps no per-function data, and its ProfileTracing answers cover a whole range (one \
     question per bucket would be needed); run Embers on its own store (--db or \
     --clickhouse-url) for function timelines";

/// Why a function's lines have no upstream answer.
pub const NO_LINES: &str = "function_lines needs Embers' own store: a DeepFlow querier stores \
     stacks of function names only (profile_location_str), no source lines; run Embers on its \
     own store (--db or --clickhouse-url) and send it profiles with lines (pprof, JFR, OTLP, \
     perf script with srcline)";

/// The services `sel` reads, busiest first: the named one, or every one but `Total`.
fn candidates(rows: Vec<ServiceRow>, sel: &Selection) -> Vec<ServiceRow> {
    rows.into_iter()
        .filter(|r| match &sel.app_service {
            Some(app) => &r.app_service == app,
            None => r.app_service != TOTAL_APP_SERVICE,
        })
        .collect()
}

/// The note of an answer covering `read` of `all` services.
fn note(read: usize, all: usize, fanout: usize) -> String {
    let which = if read >= all {
        format!("all {all} services of this range")
    } else {
        format!("the {read} busiest of {all} services of this range (--upstream-fanout {fanout}); functions of the others are not counted")
    };
    format!(
        "From a DeepFlow querier, which keeps no per-function table: summed from the \
         ProfileTracing answers of {which}."
    )
}

impl Upstream {
    /// `POST /v1/profile/functions` from the querier.
    pub(crate) async fn functions(
        &self,
        org: &Org,
        q: &FunctionsQuery,
    ) -> Result<FunctionsAnswer, Error> {
        if let Some((name, _)) = &q.group_by {
            return Err(Error::not_implemented(format!(
                "group_by ('{name}') needs Embers' own store: a DeepFlow querier's \
                 ProfileTracing answers are not broken down by tag"
            )));
        }
        let listed = candidates(self.ranked(org, &q.selection).await?, &q.selection);
        // A name the querier would paste into SQL unescaped is counted, never asked for.
        let read: Vec<ServiceRow> = listed
            .iter()
            .filter(|r| super::fields::is_sendable(r))
            .take(self.options.fanout)
            .cloned()
            .collect();
        let now = self.side(org, &q.selection, &listed, &read).await?;
        let base = match &q.baseline {
            Some(b) => {
                let all = candidates(self.ranked(org, b).await?, b);
                Some(self.side(org, b, &all, &read).await?)
            }
            None => None,
        };
        let mut answer = FunctionsAnswer::finish(q, now, base);
        let mut names: Vec<String> = Vec::new();
        for r in &read {
            if !names.contains(&r.app_service) {
                names.push(r.app_service.clone());
            }
        }
        let mut every: Vec<&str> = listed.iter().map(|r| r.app_service.as_str()).collect();
        every.sort_unstable();
        every.dedup();
        answer.coverage = Some(Coverage {
            note: note(names.len(), every.len(), self.options.fanout),
            services: names,
            services_in_range: every.len() as u64,
        });
        Ok(answer)
    }

    /// The range's services by value (the services statement).
    async fn ranked(&self, org: &Org, sel: &Selection) -> Result<Vec<ServiceRow>, Error> {
        let q = ServicesQuery {
            selection: Selection {
                app_service: None,
                ..sel.clone()
            },
        };
        Ok(self.services(org, &q).await?.values)
    }

    /// One side's sums: every listed service's value, the functions of those `read`.
    async fn side(
        &self,
        org: &Org,
        sel: &Selection,
        listed: &[ServiceRow],
        read: &[ServiceRow],
    ) -> Result<FunctionSums, Error> {
        let mut sums = FunctionSums {
            all: listed.iter().fold(0u64, |a, r| a.saturating_add(r.value)),
            ..FunctionSums::default()
        };
        let answers = join_all(read.iter().map(|r| self.profile(org, sel, r))).await;
        for (row, answer) in read.iter().zip(answers) {
            let profile = answer?;
            let place = sums.place(&(row.app_service.clone(), None));
            sums.add_all(place, row.value);
            for s in frame_stats(&profile) {
                let value = SelfTotal {
                    self_value: s.self_value,
                    total: s.total,
                };
                if s.total > 0 || s.self_value > 0 {
                    sums.add(profile.function_name(s.func), place, value);
                }
            }
        }
        Ok(sums)
    }

    /// The ProfileTracing answer of one service over `sel`, decoded.
    async fn profile(
        &self,
        org: &Org,
        sel: &Selection,
        row: &ServiceRow,
    ) -> Result<embers_model::Profile, Error> {
        let request = ProfileRequest {
            app_service: Some(row.app_service.clone()),
            profile_language_type: row.profile_language_type.clone(),
            profile_event_type: row.profile_event_type.clone(),
            tag_filter: statements::render_filter(&sel.filter)
                .map_err(|e| Error::invalid(e.to_string()))?,
            time_start: sel.time_start,
            time_end: sel.time_end,
            max_kernel_stack_depth: None,
        };
        let body = serde_json::to_vec(&request).map_err(Error::internal)?;
        let url = self.url();
        let mut ask = self
            .client
            .post(&url)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Bytes::from(body));
        if let Some(org) = org.header() {
            ask = ask.header(ORG_HEADER, org.clone());
        }
        let mut answer = ask
            .send()
            .await
            .map_err(|e| Error::upstream(&url, self.describe(&e)))?;
        if let Some(description) = self.redirected(&url, &answer) {
            return Err(Error::bad_gateway(description));
        }
        let status = answer.status().as_u16();
        let bytes = match self.read_bounded(&mut answer).await {
            Ok(b) => b,
            Err(ReadError::TooBig) => return Err(Error::bad_gateway(self.too_big())),
            Err(ReadError::Failed(e)) => return Err(Error::upstream(&url, self.describe(&e))),
        };
        let decoded = decode_response_table(status, &bytes).map_err(|e| {
            Error::bad_gateway(format!(
                "the querier's ProfileTracing answer for {}: {e}",
                row.app_service
            ))
        })?;
        Ok(decoded.build().profile)
    }
}
