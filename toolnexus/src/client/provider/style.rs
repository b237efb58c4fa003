//! [`Style`]: the closed set of wire formats a client speaks, each backed by its provider
//! module, and the rule picking the key's environment variable from the endpoint.

use super::anthropic::Anthropic;
use super::contract::Provider;
use super::openai::OpenAi;

/// The wire format an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Style {
    /// OpenAI chat completions (also OpenRouter, vLLM, Ollama, …).
    #[default]
    OpenAi,
    /// Anthropic messages.
    Anthropic,
}

/// OpenAI-compatible gateways that keep their keys under their own variable.
const GATEWAY_KEYS: &[(&str, &str)] = &[("openrouter.ai", "OPENROUTER_API_KEY")];

impl Style {
    /// How many styles there are (caches keep one slot per style).
    pub(crate) const COUNT: usize = 2;

    /// The style's slot in a per-style cache.
    pub(crate) fn index(self) -> usize {
        match self {
            Style::OpenAi => 0,
            Style::Anthropic => 1,
        }
    }

    /// The module that knows this format.
    pub(crate) fn provider(self) -> &'static dyn Provider {
        match self {
            Style::OpenAi => &OpenAi,
            Style::Anthropic => &Anthropic,
        }
    }

    /// The variable the key is read from: a known gateway's own, else the variable of the
    /// provider whose host it is, else this style's.
    pub(crate) fn key_variable(self, host: Option<&str>) -> &'static str {
        let host = host.unwrap_or_default();
        let is = |domain: &str| host == domain || host.ends_with(&format!(".{domain}"));
        if let Some((_, var)) = GATEWAY_KEYS.iter().find(|(domain, _)| is(domain)) {
            return var;
        }
        if is("anthropic.com") {
            return Anthropic.key_variable();
        }
        self.provider().key_variable()
    }
}

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
        ];
        for (style, host, var) in cases {
            assert_eq!(style.key_variable(Some(host)), var, "{style:?} {host}");
        }
    }
}
