//! The timeline's default grouping over real HTTP and the SQLite store: with no `group_limit`,
//! the ten groups with the largest sums over the range are answered by name and every other
//! group is summed into `other`, per bucket (data and expectations in `common::groups`).

use crate::common;

use common::groups::{self, H, PODS};
use common::{ok, seeded_with, TestServer};
use embers_model::contract::explore::TimelineAnswer;
use serde_json::{json, Value};

async fn timeline(server: &TestServer, extra: Value) -> TimelineAnswer {
    let envelope = ok(server, "/v1/profile/timeline", groups::request(extra)).await;
    serde_json::from_value(envelope["result"].clone()).expect("timeline answer")
}

#[tokio::test]
async fn ten_largest_groups_by_name_and_the_rest_summed_as_other() {
    let (_db, server) = seeded_with(groups::batches()).await;
    let default = timeline(&server, json!({})).await;
    groups::check(&default);
    // The default is the limit 10, and an explicit 10 answers the same.
    let ten = timeline(&server, json!({"group_limit": 10})).await;
    assert_eq!(ten.values, default.values);
    // With room for every pod there is no `other`, and the sums are the pods' own.
    let all = timeline(&server, json!({"group_limit": PODS})).await;
    assert_eq!(all.values.len(), 2 * PODS as usize);
    assert!(all
        .values
        .iter()
        .all(|r| r.group.as_deref() != Some("other")));
    let second_minute_pod_01 = all
        .values
        .iter()
        .find(|r| r.time == H + 60 && r.group.as_deref() == Some("pod-01"))
        .map(|r| r.value);
    assert_eq!(second_minute_pod_01, Some(120));
    server.stop().await;
}
