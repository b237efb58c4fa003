//! [`RequestOptions`]: the request settings a client sets for every run and a run may
//! override (temperature, `max_tokens`, tool choice, parallel calls, stop sequences, extra
//! body fields), how a run's override combines with the client's, and what makes them
//! invalid. Each provider module encodes them in its own shape.

use std::fmt;

use serde_json::{Map, Value};

use crate::client::config::tool_choice::ToolChoice;
use crate::client::error::ClientError;
use crate::client::provider::Style;
use crate::tool_args::kind_of;
use crate::Toolkit;

/// The setters of the six request settings, for the two places that carry them: the
/// client's builder (every run) and [`RunOptions`](crate::RunOptions) (one run). Defined
/// once so their names, types and meaning cannot drift apart; `$scope` is a sentence on
/// where the setting applies, added to each setter's docs.
macro_rules! request_setters {
    ($scope:literal) => {
        /// Sampling temperature (a finite number, at least 0; the provider's own range
        /// applies). Unset, the provider's default applies.
        #[doc = ""]
        #[doc = $scope]
        pub fn temperature(mut self, temperature: f64) -> Self {
            self.request.temperature = Some(temperature);
            self
        }

        /// `max_tokens` per model call. Anthropic requires it (default 4096); the other
        /// styles send it only when set (Responses as `max_output_tokens`, Gemini as
        /// `generationConfig.maxOutputTokens`).
        #[doc = ""]
        #[doc = $scope]
        pub fn max_tokens(mut self, tokens: u32) -> Self {
            self.request.max_tokens = Some(tokens);
            self
        }

        /// Whether and which tools the model must call (see
        /// [`ToolChoice`](crate::ToolChoice) for the wire shapes). Unset, nothing is sent
        /// and the provider's default (`auto`) applies; it is never sent on a turn that
        /// offers no tools.
        #[doc = ""]
        #[doc = $scope]
        pub fn tool_choice(mut self, choice: crate::ToolChoice) -> Self {
            self.request.tool_choice = Some(choice);
            self
        }

        /// Whether the model may ask for several tool calls in one turn. OpenAI receives
        /// `parallel_tool_calls`; Anthropic, for `false`, `disable_parallel_tool_use: true`
        /// inside its `tool_choice` (with `{"type": "auto"}` when no choice is set). Never
        /// sent on a turn that offers no tools.
        #[doc = ""]
        #[doc = $scope]
        pub fn parallel_tool_calls(mut self, allowed: bool) -> Self {
            self.request.parallel_tool_calls = Some(allowed);
            self
        }

        /// Sequences that end the model's reply: OpenAI `stop`, Anthropic
        /// `stop_sequences`. An empty list sends none (for a run: even when the client has
        /// some).
        #[doc = ""]
        #[doc = $scope]
        pub fn stop<S: Into<String>>(mut self, sequences: impl IntoIterator<Item = S>) -> Self {
            self.request.stop = Some(sequences.into_iter().map(Into::into).collect());
            self
        }

        /// Fields the client does not know, added to the request body (`top_p`, `seed`,
        /// `metadata`, a gateway's own fields, …): a JSON object, written last, so a key
        /// the client also writes (`temperature`, `max_tokens`, `tool_choice`, …) takes
        /// the value given here. The keys the loop depends on (`model`, `messages`,
        /// `system`, `tools`, `stream`, `stream_options`, and each style's own) are
        /// refused. A run's fields are merged over the client's, key by key.
        ///
        /// ```
        /// use toolnexus::{ClientError, LlmClient};
        /// use toolnexus::serde_json::json;
        ///
        /// let ok = LlmClient::builder().model("m").api_key("k").extra_body(json!({"seed": 7}));
        /// assert!(ok.build().is_ok());
        /// let bad = LlmClient::builder().model("m").api_key("k").extra_body(json!({"model": "x"}));
        /// assert!(matches!(bad.build(), Err(ClientError::Config(_))));
        /// ```
        #[doc = ""]
        #[doc = $scope]
        pub fn extra_body(mut self, fields: serde_json::Value) -> Self {
            self.request.extra_body = Some(fields);
            self
        }
    };
}
pub(crate) use request_setters;

/// Every setting is optional: unset, the provider's default applies (Anthropic's required
/// `max_tokens` excepted, which its module fills in).
#[derive(Clone, Default, PartialEq)]
pub(crate) struct RequestOptions {
    pub(crate) temperature: Option<f64>,
    pub(crate) max_tokens: Option<u32>,
    pub(crate) tool_choice: Option<ToolChoice>,
    pub(crate) parallel_tool_calls: Option<bool>,
    /// `Some(vec![])` is set to none, which clears a client's list for one run.
    pub(crate) stop: Option<Vec<String>>,
    /// Fields written into the body last; checked to be an object by [`check`](Self::check).
    pub(crate) extra_body: Option<Value>,
}

impl RequestOptions {
    /// These settings with `run`'s replacing them setting by setting; extra fields are
    /// merged key by key, `run`'s winning.
    pub(crate) fn overridden_by(&self, run: &RequestOptions) -> RequestOptions {
        let extra_body = match (&self.extra_body, &run.extra_body) {
            (Some(Value::Object(mine)), Some(Value::Object(theirs))) => {
                let mut merged = mine.clone();
                merged.extend(theirs.iter().map(|(k, v)| (k.clone(), v.clone())));
                Some(Value::Object(merged))
            }
            (mine, theirs) => theirs.as_ref().or(mine.as_ref()).cloned(),
        };
        RequestOptions {
            temperature: run.temperature.or(self.temperature),
            max_tokens: run.max_tokens.or(self.max_tokens),
            tool_choice: run.tool_choice.clone().or_else(|| self.tool_choice.clone()),
            parallel_tool_calls: run.parallel_tool_calls.or(self.parallel_tool_calls),
            stop: run.stop.clone().or_else(|| self.stop.clone()),
            extra_body,
        }
    }

    /// The stop sequences to send (none when unset or cleared).
    pub(crate) fn stop(&self) -> &[String] {
        self.stop.as_deref().unwrap_or_default()
    }

    /// The extra body fields, once [`check`](Self::check) has passed.
    pub(crate) fn extra_fields(&self) -> Option<&Map<String, Value>> {
        match &self.extra_body {
            Some(Value::Object(fields)) if !fields.is_empty() => Some(fields),
            _ => None,
        }
    }

    /// What makes the settings unusable for `style` whatever the toolkit, if anything.
    pub(crate) fn check(&self, style: Style) -> Result<(), String> {
        let provider = style.provider();
        if let Some(why) = provider.unsupported(self) {
            return Err(why);
        }
        if let Some(t) = self.temperature {
            if !t.is_finite() || t < 0.0 {
                return Err(format!(
                    "temperature must be a finite number of at least 0, not {t}"
                ));
            }
        }
        if self.max_tokens == Some(0) {
            return Err("max_tokens must be at least 1".into());
        }
        if let Some(ToolChoice::Tool(name)) = &self.tool_choice {
            if name.is_empty() {
                return Err("tool_choice names a tool with an empty name".into());
            }
        }
        match &self.extra_body {
            None => {}
            Some(Value::Object(fields)) => {
                let reserved = provider.reserved_keys();
                if let Some(key) = reserved.iter().find(|k| fields.contains_key(**k)) {
                    return Err(format!(
                        "extra_body may not set `{key}`: the loop writes it itself"
                    ));
                }
            }
            Some(other) => {
                return Err(format!(
                    "extra_body must be a JSON object, not {}",
                    kind_of(other)
                ))
            }
        }
        Ok(())
    }

    /// Checks that a tool the settings name is one the turn offers.
    pub(crate) fn check_tools(&self, tk: &Toolkit) -> Result<(), ClientError> {
        let Some(ToolChoice::Tool(name)) = &self.tool_choice else {
            return Ok(());
        };
        if tk.get(name).is_some() {
            return Ok(());
        }
        let offered: Vec<&str> = tk.tools().iter().map(|t| t.name()).collect();
        let offered = if offered.is_empty() {
            "it has no tools".to_owned()
        } else {
            format!("it has {}", offered.join(", "))
        };
        Err(ClientError::InvalidOptions(
            format!("tool_choice names `{name}`, which is not in the toolkit ({offered})").into(),
        ))
    }
}

/// Extra body fields show by key only: their values go to the provider, not to logs.
impl fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let extra_keys: Vec<&str> = self
            .extra_fields()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        f.debug_struct("RequestOptions")
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("tool_choice", &self.tool_choice)
            .field("parallel_tool_calls", &self.parallel_tool_calls)
            .field("stop", &self.stop)
            .field("extra_body_keys", &extra_keys)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_run_overrides_setting_by_setting_and_merges_extra_fields() {
        let client = RequestOptions {
            temperature: Some(0.5),
            max_tokens: Some(100),
            stop: Some(vec!["END".into()]),
            extra_body: Some(json!({"top_p": 0.9, "user": "client"})),
            ..RequestOptions::default()
        };
        let run = RequestOptions {
            temperature: Some(0.0),
            stop: Some(vec![]),
            extra_body: Some(json!({"user": "run"})),
            ..RequestOptions::default()
        };
        let both = client.overridden_by(&run);
        assert_eq!(both.temperature, Some(0.0));
        assert_eq!(both.max_tokens, Some(100));
        assert!(both.stop().is_empty(), "an empty list clears the client's");
        assert_eq!(both.extra_body, Some(json!({"top_p": 0.9, "user": "run"})));
    }

    #[test]
    fn unusable_settings_say_why() {
        let bad = |o: RequestOptions| o.check(Style::OpenAi).unwrap_err();
        let t = |t| RequestOptions {
            temperature: Some(t),
            ..Default::default()
        };
        assert!(bad(t(f64::NAN)).starts_with("temperature must be"));
        assert!(bad(t(-1.0)).starts_with("temperature must be"));
        let extra = |v| RequestOptions {
            extra_body: Some(v),
            ..Default::default()
        };
        assert_eq!(
            bad(extra(json!([1]))),
            "extra_body must be a JSON object, not an array"
        );
        assert_eq!(
            bad(extra(json!({"messages": []}))),
            "extra_body may not set `messages`: the loop writes it itself"
        );
        assert!(extra(json!({"top_p": 1})).check(Style::OpenAi).is_ok());
    }
}
