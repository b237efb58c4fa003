//! The `requestState` of an `input_required` result: the suspension and the call's
//! arguments, sealed with an HMAC so that the state a client echoes back (untrusted, by
//! the protocol) is accepted only as this server wrote it, for the tool it was written for.

use rmcp::model::{RequestStateCodec, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolnexus::Request;

use crate::McpError;

/// What a retried call needs to resume: the request it answers and the arguments of the
/// call that suspended (a retry with other arguments is refused).
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Continuation {
    pub(super) request: Request,
    pub(super) args: Value,
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
