//! The parts of OpenAI's chat-completion wire format that a whole reply and a stream's
//! chunks share: a tool call (a chunk's call delta, which a whole reply's call is with every
//! field there), the token counts, and the message keys that hold reasoning.

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::client::run::result::Usage;

/// The message keys holding reasoning, in the order
/// [`ProviderState::reasoning`](crate::ProviderState::reasoning) reads them.
pub(super) const REASONING_KEYS: [&str; 3] =
    ["reasoning_content", "reasoning", "reasoning_details"];

/// A tool call as a chunk carries it (and, with every field there, as a whole reply does).
#[derive(Default)]
pub(super) struct CallDelta {
    pub(super) index: Option<u32>,
    pub(super) id: Option<String>,
    pub(super) function: Option<FunctionDelta>,
    /// Everything else the server put on the call, which it wants back.
    pub(super) extra: Map<String, Value>,
}

/// Read key by key: `#[serde(flatten)]` would buffer every delta before reading it.
impl<'de> Deserialize<'de> for CallDelta {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = CallDelta;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a tool call delta")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<CallDelta, A::Error> {
                let mut delta = CallDelta::default();
                while let Some(key) = map.next_key::<CallKey>()? {
                    match key {
                        CallKey::Index => delta.index = map.next_value()?,
                        CallKey::Id => delta.id = map.next_value()?,
                        CallKey::Function => delta.function = map.next_value()?,
                        CallKey::Type => {
                            map.next_value::<IgnoredAny>()?;
                        }
                        CallKey::Other(key) => {
                            delta.extra.insert(key, map.next_value()?);
                        }
                    }
                }
                Ok(delta)
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// A key of a tool call: the known ones are matched where they lie in the body, and only
/// a key kept in `extra` is copied.
enum CallKey {
    Index,
    Id,
    Function,
    Type,
    Other(String),
}

impl<'de> Deserialize<'de> for CallKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = CallKey;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }

            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<CallKey, E> {
                Ok(match key {
                    "index" => CallKey::Index,
                    "id" => CallKey::Id,
                    "function" => CallKey::Function,
                    "type" => CallKey::Type,
                    other => CallKey::Other(other.to_owned()),
                })
            }
        }
        deserializer.deserialize_identifier(Visitor)
    }
}

#[derive(Deserialize)]
pub(super) struct FunctionDelta {
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) arguments: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

/// A field sent as `null` carries nothing to send back.
pub(super) fn without_nulls(mut map: Map<String, Value>) -> Map<String, Value> {
    map.retain(|_, v| !v.is_null());
    map
}

impl From<WireUsage> for Usage {
    fn from(u: WireUsage) -> Self {
        let cached = u.prompt_tokens_details.and_then(|d| d.cached_tokens);
        let reasoning = u.completion_tokens_details.and_then(|d| d.reasoning_tokens);
        Usage::counted(u.prompt_tokens, u.completion_tokens, u.total_tokens)
            .with_cache(cached.unwrap_or(0), 0)
            .with_reasoning(reasoning.unwrap_or(0))
    }
}
