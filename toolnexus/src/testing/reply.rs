//! [`Reply`]: one scripted answer of the mock model.

use std::time::Duration;

use serde_json::Value;

/// One scripted answer of [`MockLlm`](super::MockLlm).
///
/// A reply says *what* the model answers (text, tool calls, an error, raw bytes); the mock
/// renders it in the wire format of the endpoint that was hit — OpenAI on
/// `…/chat/completions`, Anthropic on `…/messages`, as JSON or as SSE when the request asked
/// for `"stream": true` — so one script serves either style.
///
/// ```
/// use std::time::Duration;
/// use serde_json::json;
/// use toolnexus::testing::Reply;
///
/// let script = [
///     // A turn with a short preamble and two calls.
///     Reply::tool_calls([
///         ("call_1", "get_weather", json!({"city": "Paris"})),
///         ("call_2", "get_weather", json!({"city": "Rome"})),
///     ])
///     .with_text("Checking both cities."),
///     // A provider hiccup the client must retry.
///     Reply::error(429, "slow down").with_header("retry-after", "0"),
///     // The final answer, late, with explicit token counts.
///     Reply::text("Sunny in both.").with_usage(40, 6).delayed(Duration::from_millis(5)),
/// ];
/// assert_eq!(script.len(), 3);
/// ```
#[derive(Clone, Debug)]
pub struct Reply {
    pub(crate) body: ReplyBody,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) usage: Option<Usage>,
    pub(crate) delay: Option<Duration>,
    pub(crate) chunk_bytes: Option<usize>,
}

#[derive(Clone, Debug)]
pub(crate) enum ReplyBody {
    Turn(Turn),
    Error {
        status: u16,
        message: String,
    },
    Raw {
        status: u16,
        content_type: String,
        body: Vec<u8>,
    },
}

/// An assistant turn: optional reasoning, optional text, then tool calls in order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Turn {
    pub(crate) text: String,
    pub(crate) calls: Vec<ScriptedCall>,
    /// Reasoning the model shows before its text, rendered with the state each provider
    /// requires back (a signed thinking block, `reasoning_content`, an encrypted reasoning
    /// item, thought signatures).
    pub(crate) reasoning: Option<String>,
}

#[derive(Clone, Debug)]
pub(crate) struct ScriptedCall {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) arguments: Arguments,
}

#[derive(Clone, Debug)]
pub(crate) enum Arguments {
    Json(Value),
    /// Sent exactly as given, so clients can be tested against arguments that do not parse.
    Verbatim(String),
}

impl Arguments {
    /// The arguments as the string OpenAI puts in `function.arguments`.
    pub(crate) fn to_wire_string(&self) -> String {
        match self {
            Arguments::Json(v) => v.to_string(),
            Arguments::Verbatim(s) => s.clone(),
        }
    }
}

/// Token counts reported for a turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    pub(crate) prompt: u64,
    pub(crate) completion: u64,
    /// Of `prompt`, read from the provider's cache.
    pub(crate) cached: u64,
    /// Of `completion`, spent reasoning.
    pub(crate) reasoning: u64,
}

impl Reply {
    fn new(body: ReplyBody) -> Self {
        Reply {
            body,
            headers: Vec::new(),
            usage: None,
            delay: None,
            chunk_bytes: None,
        }
    }

    fn turn(turn: Turn) -> Self {
        Self::new(ReplyBody::Turn(turn))
    }

    /// A final answer: the model says `text` and calls no tool.
    ///
    /// Default usage: 15 prompt + 4 completion tokens (see [`with_usage`](Self::with_usage)).
    pub fn text(text: impl Into<String>) -> Self {
        Self::turn(Turn {
            text: text.into(),
            ..Turn::default()
        })
    }

    /// A turn that calls one tool with JSON `args` (an object, normally).
    ///
    /// Default usage: 10 prompt + 5 completion tokens (see [`with_usage`](Self::with_usage)).
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, args: Value) -> Self {
        Self::turn(Turn::default()).and_tool_call(id, name, args)
    }

    /// A turn that calls several tools at once, in the given order: `(id, name, args)`.
    pub fn tool_calls<I, D, N>(calls: I) -> Self
    where
        I: IntoIterator<Item = (D, N, Value)>,
        D: Into<String>,
        N: Into<String>,
    {
        calls
            .into_iter()
            .fold(Self::turn(Turn::default()), |reply, (id, name, args)| {
                reply.and_tool_call(id, name, args)
            })
    }

    /// A turn that calls one tool whose arguments string is sent verbatim, e.g. `"{not json"`,
    /// to test how a client handles arguments that do not parse.
    ///
    /// OpenAI carries the string as `function.arguments` (streamed: split across chunks);
    /// streamed Anthropic carries it as the `partial_json` fragments. A non-streamed Anthropic
    /// `input` must be JSON, so there it is the parsed value when the string parses, else the
    /// string itself as a JSON string (an `input` that is not an object).
    pub fn tool_call_raw(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self::turn(Turn::default()).and_tool_call_raw(id, name, arguments)
    }

    /// An HTTP error with a provider-shaped JSON error body carrying `message`:
    /// `{"error": {"message", "type", …}}` on OpenAI, `{"type": "error", "error": {…}}` on
    /// Anthropic, with the error type derived from `status` (429 → `rate_limit_error`, …).
    ///
    /// A status outside 100..=999 is answered with a 500 that says the script is invalid.
    pub fn error(status: u16, message: impl Into<String>) -> Self {
        Self::new(ReplyBody::Error {
            status,
            message: message.into(),
        })
    }

    /// Exactly these bytes with this status and `Content-Type`, whatever the endpoint or the
    /// `stream` flag: for garbage, truncated or otherwise malformed provider output.
    pub fn raw(status: u16, content_type: impl Into<String>, body: impl Into<Vec<u8>>) -> Self {
        Self::new(ReplyBody::Raw {
            status,
            content_type: content_type.into(),
            body: body.into(),
        })
    }

    /// Adds a tool call to this turn (after the ones already in it).
    /// Has no effect on [`error`](Self::error) and [`raw`](Self::raw) replies.
    pub fn and_tool_call(
        self,
        id: impl Into<String>,
        name: impl Into<String>,
        args: Value,
    ) -> Self {
        self.push_call(id.into(), name.into(), Arguments::Json(args))
    }

    /// Adds a tool call with a verbatim arguments string (see [`tool_call_raw`](Self::tool_call_raw)).
    /// Has no effect on [`error`](Self::error) and [`raw`](Self::raw) replies.
    pub fn and_tool_call_raw(
        self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        self.push_call(
            id.into(),
            name.into(),
            Arguments::Verbatim(arguments.into()),
        )
    }

    /// Sets the text the model says in this turn, before its tool calls (if any).
    /// Has no effect on [`error`](Self::error) and [`raw`](Self::raw) replies.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        if let ReplyBody::Turn(turn) = &mut self.body {
            turn.text = text.into();
        }
        self
    }

    /// Gives this turn reasoning, rendered as a reasoning model sends it together with the
    /// state its provider requires back verbatim on the next turn:
    ///
    /// | style | rendered as | required back |
    /// |---|---|---|
    /// | Chat Completions | `reasoning_content` on the message, and `extra_content.google.thought_signature` on each tool call | both, on the assistant message with those calls |
    /// | Anthropic | a `thinking` block with a `signature`, first in `content` | the block, unchanged, first in that assistant turn |
    /// | Responses | a `reasoning` item (`id`, `summary`, `encrypted_content`) before the calls | the item, unchanged, before its `function_call` items |
    /// | Gemini | a thought part, and a `thoughtSignature` on the first `functionCall` part (on the text part of a text-only turn) | the signature, on the same part |
    ///
    /// Streamed, the reasoning comes first, in its provider's delta events. The mock refuses
    /// (HTTP 400, in the provider's words) a later request that leaves this state out or
    /// changes it, as the provider does — unless it runs [`lenient`](super::MockLlm::lenient).
    /// Has no effect on [`error`](Self::error) and [`raw`](Self::raw) replies.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolnexus::testing::Reply;
    ///
    /// let turn = Reply::tool_call("call_1", "get_weather", json!({"city": "Paris"}))
    ///     .with_reasoning("The user wants the weather in Paris; ask the tool.");
    /// # drop(turn);
    /// ```
    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        if let ReplyBody::Turn(turn) = &mut self.body {
            turn.reasoning = Some(reasoning.into());
        }
        self
    }

    /// Adds a response header, e.g. `Retry-After`. Applies to every kind of reply.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Reports these token counts for the turn instead of the defaults (a tool-call turn
    /// 10 + 5, a text turn 15 + 4). Has no effect on error and raw replies.
    pub fn with_usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        self.usage = Some(Usage {
            prompt: prompt_tokens,
            completion: completion_tokens,
            ..self.usage.unwrap_or_default()
        });
        self
    }

    /// Reports, beside the turn's token counts, how many prompt tokens were read from the
    /// provider's cache and how many completion tokens went to reasoning, where the style's
    /// usage has room for them: Chat Completions `prompt_tokens_details.cached_tokens` and
    /// `completion_tokens_details.reasoning_tokens`; Responses `input_tokens_details` and
    /// `output_tokens_details`; Anthropic `cache_read_input_tokens` (it reports no reasoning
    /// count); Gemini `cachedContentTokenCount` and `thoughtsTokenCount`. Has no effect on
    /// error and raw replies.
    ///
    /// ```
    /// use toolnexus::testing::Reply;
    ///
    /// let turn = Reply::text("Sunny.").with_usage(40, 6).with_usage_details(32, 2);
    /// # drop(turn);
    /// ```
    pub fn with_usage_details(mut self, cached_tokens: u64, reasoning_tokens: u64) -> Self {
        if let ReplyBody::Turn(turn) = &self.body {
            let counts = self.usage.unwrap_or_else(|| turn.default_usage());
            self.usage = Some(Usage {
                cached: cached_tokens,
                reasoning: reasoning_tokens,
                ..counts
            });
        }
        self
    }

    /// Waits this long before sending the response head, for timeout and cancellation tests.
    /// A client that gives up meanwhile is counted by [`MockLlm::dropped`](super::MockLlm::dropped).
    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// Writes the body in pieces of `n_bytes` (at least 1), flushing each separately, so a
    /// client's SSE or JSON reader meets events and UTF-8 characters split across reads.
    pub fn chunked(mut self, n_bytes: usize) -> Self {
        self.chunk_bytes = Some(n_bytes.max(1));
        self
    }

    fn push_call(mut self, id: String, name: String, arguments: Arguments) -> Self {
        if let ReplyBody::Turn(turn) = &mut self.body {
            turn.calls.push(ScriptedCall {
                id,
                name,
                arguments,
            });
        }
        self
    }
}

impl Turn {
    /// The usage reported when the script gives none.
    pub(crate) fn default_usage(&self) -> Usage {
        if self.calls.is_empty() {
            Usage {
                prompt: 15,
                completion: 4,
                ..Usage::default()
            }
        } else {
            Usage {
                prompt: 10,
                completion: 5,
                ..Usage::default()
            }
        }
    }
}
