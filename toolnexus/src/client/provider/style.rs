//! [`Style`]: the closed set of wire formats a client speaks. Which provider module backs
//! each, and where its key is read from, is in `dispatch`, so the providers (which read
//! the toolkit, which reads the style) are not imported by the type itself.

/// The wire format an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Style {
    /// OpenAI chat completions (also OpenRouter, vLLM, Ollama, …).
    #[default]
    OpenAi,
    /// Anthropic messages.
    Anthropic,
    /// OpenAI's Responses API (`POST {base}/responses`), stateless: every turn replays the
    /// whole transcript, reasoning items included, with `store: false`.
    Responses,
    /// Google Gemini's own API (`POST {base}/models/{model}:generateContent`).
    Gemini,
}

impl Style {
    /// Every style, in declaration order.
    pub const ALL: [Style; 4] = [
        Style::OpenAi,
        Style::Anthropic,
        Style::Responses,
        Style::Gemini,
    ];

    /// The style's name, as [`FromStr`](std::str::FromStr) reads it: `openai`, `anthropic`,
    /// `responses` or `gemini`.
    pub fn as_str(self) -> &'static str {
        match self {
            Style::OpenAi => "openai",
            Style::Anthropic => "anthropic",
            Style::Responses => "responses",
            Style::Gemini => "gemini",
        }
    }

    /// The provider a style speaks to, as the OpenTelemetry GenAI conventions name it
    /// (`gen_ai.provider.name`): `openai` for both OpenAI formats (which many gateways speak
    /// too: the conventions name the format's owner when the real one is unknown),
    /// `anthropic`, `gcp.gemini`.
    ///
    /// ```
    /// assert_eq!(toolnexus::Style::Responses.provider_name(), "openai");
    /// assert_eq!(toolnexus::Style::Gemini.provider_name(), "gcp.gemini");
    /// ```
    pub fn provider_name(self) -> &'static str {
        match self {
            Style::OpenAi | Style::Responses => "openai",
            Style::Anthropic => "anthropic",
            Style::Gemini => "gcp.gemini",
        }
    }

    /// How many styles there are (caches keep one slot per style).
    pub(crate) const COUNT: usize = 4;

    /// The style's slot in a per-style cache.
    pub(crate) fn index(self) -> usize {
        match self {
            Style::OpenAi => 0,
            Style::Anthropic => 1,
            Style::Responses => 2,
            Style::Gemini => 3,
        }
    }
}

impl std::fmt::Display for Style {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Reads a style by its name (what a `TOOLNEXUS_STYLE`-like setting holds).
///
/// ```
/// use toolnexus::Style;
///
/// assert_eq!("gemini".parse::<Style>(), Ok(Style::Gemini));
/// let err = "bedrock".parse::<Style>().unwrap_err();
/// assert_eq!(err.to_string(), "`bedrock` is not a style: use openai, anthropic, responses or gemini");
/// ```
impl std::str::FromStr for Style {
    type Err = UnknownStyle;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Style::ALL
            .into_iter()
            .find(|style| style.as_str() == name)
            .ok_or_else(|| UnknownStyle(name.to_owned()))
    }
}

/// A style name [`Style`]'s `FromStr` does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a style: use openai, anthropic, responses or gemini")]
pub struct UnknownStyle(String);
