//! [`Style`]: the closed set of wire formats a client speaks, each backed by its provider
//! module, and the rule picking the key's environment variable from the endpoint.

use super::anthropic::Anthropic;
use super::contract::Provider;
use super::gemini::Gemini;
use super::openai::OpenAi;
use super::responses::Responses;

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

/// OpenAI-compatible gateways that keep their keys under their own variable.
const GATEWAY_KEYS: &[(&str, &str)] = &[("openrouter.ai", "OPENROUTER_API_KEY")];

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

    /// The module that knows this format.
    pub(crate) fn provider(self) -> &'static dyn Provider {
        match self {
            Style::OpenAi => &OpenAi,
            Style::Anthropic => &Anthropic,
            Style::Responses => &Responses,
            Style::Gemini => &Gemini,
        }
    }

    /// The variables the key is read from, first set wins: a known gateway's own, else the
    /// variables of the provider whose host it is, else this style's.
    pub(crate) fn key_variables(self, host: Option<&str>) -> &'static [&'static str] {
        let host = host.unwrap_or_default();
        let is = |domain: &str| host == domain || host.ends_with(&format!(".{domain}"));
        if let Some((_, var)) = GATEWAY_KEYS.iter().find(|(domain, _)| is(domain)) {
            return std::slice::from_ref(var);
        }
        if is("anthropic.com") {
            return Anthropic.key_variables();
        }
        // Gemini's OpenAI-compatible endpoint takes the Gemini key.
        if is("generativelanguage.googleapis.com") {
            return Gemini.key_variables();
        }
        self.provider().key_variables()
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStyle(String);

impl std::fmt::Display for UnknownStyle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` is not a style: use openai, anthropic, responses or gemini",
            self.0
        )
    }
}

impl std::error::Error for UnknownStyle {}

#[cfg(test)]
mod tests {
    use super::Style;

    #[test]
    fn key_variable_follows_the_host_then_the_style() {
        let cases = [
            (Style::OpenAi, "openrouter.ai", "OPENROUTER_API_KEY"),
            (Style::Anthropic, "api.openrouter.ai", "OPENROUTER_API_KEY"),
            (Style::Anthropic, "127.0.0.1", "ANTHROPIC_API_KEY"),
            (Style::OpenAi, "api.anthropic.com", "ANTHROPIC_API_KEY"),
            (Style::OpenAi, "api.openai.com", "OPENAI_API_KEY"),
            (Style::OpenAi, "notopenrouter.ai", "OPENAI_API_KEY"),
            (Style::Responses, "api.openai.com", "OPENAI_API_KEY"),
            (Style::Gemini, "127.0.0.1", "GEMINI_API_KEY"),
            (
                Style::OpenAi,
                "generativelanguage.googleapis.com",
                "GEMINI_API_KEY",
            ),
        ];
        for (style, host, var) in cases {
            assert_eq!(style.key_variables(Some(host))[0], var, "{style:?} {host}");
        }
        assert_eq!(
            Style::Gemini.key_variables(None),
            ["GEMINI_API_KEY", "GOOGLE_API_KEY"]
        );
    }
}
