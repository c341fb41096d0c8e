//! Snapshots: saved ProfileTracing answers that outlive the querier's retention. What the
//! service lists and splices into a stored answer's front (`"snapshot": {...}`), the body that
//! saves one, and what a snapshot id looks like.
//!
//! | call | body | answer |
//! |---|---|---|
//! | `POST /v1/profile/snapshots` | [`SnapshotSave`] | envelope, `result` = [`SnapshotMeta`] |
//! | `GET /v1/profile/snapshots` | | envelope, `result` = `[SnapshotMeta]`, newest first |
//! | `GET /v1/profile/snapshots/{id}` | | the stored answer, `"snapshot": SnapshotMeta` first |
//! | `DELETE /v1/profile/snapshots/{id}` | | envelope, `result` = the deleted [`SnapshotMeta`] |

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::contract::request::ProfileRequest;

/// The snapshots API below the base URL.
pub const SNAPSHOTS_PATH: &str = "/v1/profile/snapshots";

/// The member carrying [`SnapshotMeta`] at the front of a stored answer.
pub const SNAPSHOT_MEMBER: &str = "snapshot";

/// Characters of an id: 16 random bytes in unpadded RFC 4648 base32 (`A`-`Z`, `2`-`7`).
pub const ID_LEN: usize = 26;

/// What a snapshot is: its id, name, the request it answers, its size and when it was saved.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotMeta {
    /// URL-safe id, see [`is_valid_id`].
    pub id: String,
    /// A readable name.
    pub name: String,
    /// The request the stored answer answers.
    pub request: ProfileRequest,
    /// Bytes of the stored answer.
    pub size: u64,
    /// Unix seconds.
    pub saved_at: i64,
}

/// The body of `POST /v1/profile/snapshots`. The viewer writes it piecewise (the answer goes
/// back as the chunks it arrived in), so these member names are the contract.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotSave<'a> {
    /// What the answer answers.
    pub request: ProfileRequest,
    /// The ProfileTracing answer exactly as received (envelope included).
    #[serde(borrow)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub response: &'a RawValue,
    /// A name; without one the service names it after the process and the time range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Whether `id` has the form the service gives ids ([`ID_LEN`] base32 characters); anything
/// else cannot name a snapshot.
pub fn is_valid_id(id: &str) -> bool {
    id.len() == ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_base32_of_the_right_length() {
        assert!(is_valid_id("ABCDEFGHIJKLMNOPQRSTUVWXYZ"));
        assert!(is_valid_id("AAAAAAAAAAAAAAAAAAAAAA2345"));
        assert!(!is_valid_id("abcdefghijklmnopqrstuvwxyz"), "lower case");
        assert!(
            !is_valid_id("ABCDEFGHIJKLMNOPQRSTUVWXY1"),
            "1 is not base32"
        );
        assert!(!is_valid_id("ABCDEFGHIJKLMNOPQRSTUVWXY"), "short");
        assert!(!is_valid_id("../../../../etc/passwd/xxx"));
        assert!(!is_valid_id(""));
    }

    #[test]
    fn the_save_body_borrows_the_answer_as_sent() {
        let body = br#"{"request":{"app_service":"a","profile_language_type":"eBPF","profile_event_type":"on-cpu","time_start":1,"time_end":2},"response": {"OPT_STATUS" : "SUCCESS","result":null} }"#;
        let save: SnapshotSave<'_> = serde_json::from_slice(body).expect("parse");
        assert_eq!(
            save.response.get(),
            r#"{"OPT_STATUS" : "SUCCESS","result":null}"#
        );
        assert_eq!(save.request.app_service.as_deref(), Some("a"));
        assert_eq!(save.name, None);
        let extra = br#"{"request":{},"response":null,"nmae":"x"}"#;
        assert!(serde_json::from_slice::<SnapshotSave<'_>>(extra).is_err());
    }
}
