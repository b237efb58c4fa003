//! [`ProviderState`]: what a provider sent with an assistant turn that it requires back,
//! verbatim and in order, when the conversation goes on — kept in the transcript as plain
//! serde data so a halted run parked anywhere resumes with it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::client::provider::Style;

/// The reasoning state of one assistant turn, in the wire shape of the style that produced
/// it. Serialized with a `style` tag: `openai`, `anthropic`, `responses` or `gemini`.
///
/// The loop fills it from the provider's reply and replays it to the same style on every
/// later turn: Anthropic, DeepSeek, OpenAI and Google refuse a tool turn whose reasoning did
/// not come back unchanged. A transcript continued on another style leaves it out (that
/// provider would refuse another's blocks), so only the neutral text and tool calls travel.
///
/// ```
/// use serde_json::json;
/// use toolnexus::{Message, ProviderState};
///
/// let turn: Message = serde_json::from_value(json!({
///     "role": "assistant",
///     "tool_calls": [{"id": "toolu_1", "name": "get_weather", "args": {"city": "Paris"}}],
///     "state": {"style": "anthropic", "content": [
///         {"type": "thinking", "thinking": "The user wants the weather.", "signature": "EqQB…"},
///         {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
///     ]}
/// }))
/// .unwrap();
/// assert_eq!(turn.reasoning().as_deref(), Some("The user wants the weather."));
/// let Some(ProviderState::Anthropic { content }) = turn.state() else {
///     unreachable!("the turn came with Anthropic state")
/// };
/// assert_eq!(content[0]["signature"], "EqQB…");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "style")]
#[non_exhaustive]
pub enum ProviderState {
    /// Chat Completions: the assistant message's fields beyond `role`, `content` and
    /// `tool_calls` (`reasoning_content`, or `reasoning` as some servers name it), and per
    /// tool call, by index, its fields beyond `id`, `type` and `function` (such as Gemini's
    /// `extra_content.google.thought_signature`).
    #[serde(rename = "openai")]
    OpenAi {
        /// Extra fields of the assistant message, written back on it.
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        message: Map<String, Value>,
        /// Extra fields of each tool call, in call order (empty maps for calls without).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        calls: Vec<Map<String, Value>>,
    },
    /// Messages: the turn's content blocks as the provider sent them, in order — `thinking`
    /// (with its `signature`), `redacted_thinking`, `text`, `tool_use`, and blocks of kinds
    /// the client does not know (server tools'), all sent back as they are.
    #[serde(rename = "anthropic")]
    Anthropic {
        /// The content blocks.
        content: Vec<Value>,
    },
    /// Responses: the reply's output items as the provider sent them, in order — `reasoning`
    /// items (`id`, `encrypted_content`, `summary`) before the `message` and
    /// `function_call` items they came with.
    #[serde(rename = "responses")]
    Responses {
        /// The output items.
        output: Vec<Value>,
    },
    /// Gemini: the candidate's parts as the provider sent them, in order — thought parts, and
    /// text and `functionCall` parts with the `thoughtSignature` each came with.
    #[serde(rename = "gemini")]
    Gemini {
        /// The parts.
        parts: Vec<Value>,
    },
}

impl ProviderState {
    /// The style this state belongs to; it is replayed to that style only.
    pub fn style(&self) -> Style {
        match self {
            ProviderState::OpenAi { .. } => Style::OpenAi,
            ProviderState::Anthropic { .. } => Style::Anthropic,
            ProviderState::Responses { .. } => Style::Responses,
            ProviderState::Gemini { .. } => Style::Gemini,
        }
    }

    /// The readable reasoning text in it, pieces joined by blank lines; `None` when there is
    /// none (redacted or encrypted reasoning only, or only signatures).
    pub fn reasoning(&self) -> Option<String> {
        let pieces: Vec<&str> = match self {
            ProviderState::OpenAi { message, .. } => ["reasoning_content", "reasoning"]
                .iter()
                .filter_map(|key| message.get(*key).and_then(Value::as_str))
                .take(1)
                .collect(),
            ProviderState::Anthropic { content } => content
                .iter()
                .filter(|block| block["type"] == "thinking")
                .filter_map(|block| block["thinking"].as_str())
                .collect(),
            ProviderState::Responses { output } => output
                .iter()
                .filter(|item| item["type"] == "reasoning")
                .flat_map(|item| {
                    let summary = item["summary"].as_array().into_iter().flatten();
                    let content = item["content"].as_array().into_iter().flatten();
                    summary
                        .chain(content)
                        .filter_map(|part| part["text"].as_str())
                })
                .collect(),
            ProviderState::Gemini { parts } => parts
                .iter()
                .filter(|part| part["thought"] == true)
                .filter_map(|part| part["text"].as_str())
                .collect(),
        };
        let pieces: Vec<&str> = pieces.into_iter().filter(|p| !p.is_empty()).collect();
        (!pieces.is_empty()).then(|| pieces.join("\n\n"))
    }
}
