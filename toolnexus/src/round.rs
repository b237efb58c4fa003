//! A door's own state carried inside a suspension's request id.
//!
//! A tool re-run after a suspension receives only the [`Answer`](crate::Answer), whose id
//! echoes the [`Request`](crate::Request)'s. A tool that continues something remote (an A2A
//! task, an MCP server's input round) needs that something's keys to go on; putting them in
//! the id makes the transcript of a halted run all a resume needs, in this process or
//! another, with nothing else stored.
//!
//! An id is the door's `prefix`, then the URL-safe base64 (no padding) of a JSON object
//! holding the door's fields and a fresh nonce under `n`, so two interruptions that carry
//! the same fields still get distinct ids. The fields come back as the remote sent them:
//! treat them as untrusted.
//!
//! ```
//! use toolnexus::round;
//! use toolnexus::serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, PartialEq, Serialize, Deserialize)]
//! #[serde(crate = "toolnexus::serde")]
//! struct Task {
//!     #[serde(rename = "t")]
//!     task: String,
//! }
//!
//! let id = round::encode("remote-", &Task { task: "42".into() });
//! assert!(id.starts_with("remote-"));
//! assert_ne!(id, round::encode("remote-", &Task { task: "42".into() }));
//! assert_eq!(round::decode::<Task>("remote-", &id)?, Task { task: "42".into() });
//! assert!(matches!(
//!     round::decode::<Task>("other-", &id),
//!     Err(round::RoundIdError::OtherPrefix)
//! ));
//! # Ok::<(), round::RoundIdError>(())
//! ```
//!
//! A door names its fields' type once, with its prefix, through [`RoundId`].

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The JSON key of the nonce; a door's own fields must not use it.
const NONCE: &str = "n";

/// What an id holds: the door's fields beside the nonce, in one flat object.
#[derive(Serialize)]
struct Written<'a, T> {
    #[serde(flatten)]
    fields: &'a T,
    #[serde(rename = "n")]
    nonce: String,
}

#[derive(Deserialize)]
struct Read<T> {
    #[serde(flatten)]
    fields: T,
    // Required, so an id some other scheme wrote under the same prefix is not taken for a
    // round; its value only ever made the id unique.
    #[serde(rename = "n")]
    _nonce: serde::de::IgnoredAny,
}

/// Why [`decode`] did not read a round from an id.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RoundIdError {
    /// The id does not start with the door's prefix: it is not one of its rounds.
    #[error("the id does not start with the round's prefix")]
    OtherPrefix,
    /// After the prefix, the id is not URL-safe base64.
    #[error("the round in the id is not URL-safe base64")]
    Encoding,
    /// The decoded round is not a JSON object with the door's fields and a nonce.
    #[error("the round in the id does not hold the expected fields: {0}")]
    Fields(#[source] serde_json::Error),
}

/// The request id carrying `fields` (any value that serializes as a JSON object without an
/// `n` key): `prefix`, then the base64url JSON of the fields and a fresh nonce.
pub fn encode<T: Serialize>(prefix: &str, fields: &T) -> String {
    let written = Written {
        fields,
        nonce: uuid::Uuid::new_v4().simple().to_string(),
    };
    debug_assert!(
        serde_json::to_value(fields)
            .map(|v| v.get(NONCE).is_none())
            .unwrap_or(true),
        "a round's fields must not use the nonce's key `{NONCE}`"
    );
    // A struct of strings and options serializes; a type that does not (a map with
    // non-string keys) gets the empty object, which decodes to nothing.
    let json = serde_json::to_vec(&written).unwrap_or_default();
    let mut id = String::with_capacity(prefix.len() + json.len().div_ceil(3) * 4);
    id.push_str(prefix);
    URL_SAFE_NO_PAD.encode_string(json, &mut id);
    id
}

/// The fields an id written by [`encode`] with the same `prefix` carries.
pub fn decode<T: DeserializeOwned>(prefix: &str, id: &str) -> Result<T, RoundIdError> {
    let encoded = id.strip_prefix(prefix).ok_or(RoundIdError::OtherPrefix)?;
    let json = URL_SAFE_NO_PAD
        .decode(encoded)
        .map_err(|_| RoundIdError::Encoding)?;
    let read: Read<T> = serde_json::from_slice(&json).map_err(RoundIdError::Fields)?;
    Ok(read.fields)
}

/// A door's round: fields carried in a request id under the door's own prefix, by
/// [`encode`] and [`decode`]. A door implements it with only its [`PREFIX`](Self::PREFIX).
///
/// ```
/// use toolnexus::round::RoundId;
/// use toolnexus::serde::{Deserialize, Serialize};
///
/// #[derive(Debug, PartialEq, Serialize, Deserialize)]
/// #[serde(crate = "toolnexus::serde")]
/// struct Task {
///     #[serde(rename = "t")]
///     task: String,
/// }
///
/// impl RoundId for Task {
///     const PREFIX: &'static str = "remote-";
/// }
///
/// let id = Task { task: "42".into() }.to_id();
/// assert!(id.starts_with("remote-"));
/// assert_eq!(Task::from_id(&id), Some(Task { task: "42".into() }));
/// assert_eq!(Task::from_id("other-abc"), None);
/// ```
pub trait RoundId: Serialize + DeserializeOwned {
    /// What every id of this door starts with, telling its rounds from any other id.
    const PREFIX: &'static str;

    /// A request id naming this round, new on every call (even for the same fields).
    fn to_id(&self) -> String {
        encode(Self::PREFIX, self)
    }

    /// The round an answer's id names, or `None` when the id is not one of this door's
    /// ([`decode`] says why).
    fn from_id(id: &str) -> Option<Self> {
        decode(Self::PREFIX, id).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Fields {
        #[serde(rename = "k")]
        key: String,
        #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
        state: Option<String>,
    }

    #[test]
    fn fields_survive_their_id_and_every_id_is_new() {
        let fields = Fields {
            key: "ask \"1\"/2".into(),
            state: Some("st.ate\n".into()),
        };
        let id = encode("x-", &fields);
        assert!(id["x-".len()..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert_eq!(decode::<Fields>("x-", &id).unwrap(), fields);
        assert_ne!(encode("x-", &fields), id);
    }

    #[test]
    fn an_id_that_is_not_a_round_is_refused_by_kind() {
        let id = encode(
            "x-",
            &Fields {
                key: "k".into(),
                state: None,
            },
        );
        assert!(matches!(
            decode::<Fields>("y-", &id),
            Err(RoundIdError::OtherPrefix)
        ));
        assert!(matches!(
            decode::<Fields>("x-", "x-!!!"),
            Err(RoundIdError::Encoding)
        ));
        let array = format!("x-{}", URL_SAFE_NO_PAD.encode("[1]"));
        assert!(matches!(
            decode::<Fields>("x-", &array),
            Err(RoundIdError::Fields(_))
        ));
        // The fields without a nonce: not something `encode` wrote.
        let bare = format!("x-{}", URL_SAFE_NO_PAD.encode(r#"{"k":"k"}"#));
        assert!(matches!(
            decode::<Fields>("x-", &bare),
            Err(RoundIdError::Fields(_))
        ));
    }

    #[test]
    fn ids_written_before_the_shared_encoding_still_decode() {
        // What the A2A and MCP doors wrote when each kept its own copy of this encoding.
        let old = format!(
            "mcp-{}",
            URL_SAFE_NO_PAD.encode(r#"{"k":"ask","s":"state","n":"0123456789abcdef"}"#)
        );
        assert_eq!(
            decode::<Fields>("mcp-", &old).unwrap(),
            Fields {
                key: "ask".into(),
                state: Some("state".into())
            }
        );
    }
}
