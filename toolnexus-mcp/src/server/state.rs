//! The `requestState` of an `input_required` result: the suspension and the call's
//! arguments, sealed with an HMAC so that the state a client echoes back (untrusted, by
//! the protocol) is accepted only as this server wrote it, for the tool it was written for.

use rmcp::model::{RequestStateCodec, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolnexus::{Answer, Request};

use super::asked::Asked;
use crate::McpError;

/// What a retried call needs to resume: the requests it answers (the first under
/// `request`, as state sealed before calls asked several holds it), the answers a
/// retry gave to some of them, and the arguments of the call that suspended (a retry with
/// other arguments is refused).
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Continuation {
    pub(super) request: Request,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) more: Vec<Request>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) answered: Vec<Answer>,
    pub(super) args: Value,
}

impl Continuation {
    /// The state of `asked`, a call with `args`; `None` for a round that asks nothing.
    pub(super) fn of(asked: &Asked, args: Value) -> Option<Self> {
        let (request, more) = asked.requests.split_first()?;
        Some(Self {
            request: request.clone(),
            more: more.to_vec(),
            answered: asked.answers.clone(),
            args,
        })
    }

    /// The round this state carries.
    pub(super) fn into_asked(self) -> Asked {
        let mut requests = Vec::with_capacity(1 + self.more.len());
        requests.push(self.request);
        requests.extend(self.more);
        Asked {
            requests,
            answers: self.answered,
        }
    }
}

pub(super) struct Sealer {
    codec: RequestStateCodec,
}

impl Sealer {
    /// A sealer under `key`, which must be long enough for its HMAC to hold.
    pub(super) fn new(key: Vec<u8>) -> Result<Self, McpError> {
        let min = RequestStateCodec::MIN_KEY_LENGTH;
        if key.len() < min {
            return Err(McpError::ShortStateKey {
                len: key.len(),
                min,
            });
        }
        Ok(Self {
            codec: RequestStateCodec::new_unchecked(key),
        })
    }

    /// A sealer under a key of its own, drawn at random.
    pub(super) fn random() -> Self {
        Self {
            codec: RequestStateCodec::new_unchecked(random_key()),
        }
    }

    pub(super) fn seal(&self, tool: &str, continuation: &Continuation) -> Result<String, String> {
        self.codec
            .seal_json_with(
                continuation,
                &SealOptions::new().associated_data(tool.as_bytes()),
            )
            .map_err(|e| e.to_string())
    }

    pub(super) fn open(&self, tool: &str, sealed: &str) -> Result<Continuation, String> {
        self.codec
            .open_json_with(sealed, tool.as_bytes())
            .map_err(|e| e.to_string())
    }
}

/// 32 bytes from the OS's random source (two v4 UUIDs carry 244 random bits).
fn random_key() -> Vec<u8> {
    let mut key = Vec::with_capacity(32);
    key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    key
}
