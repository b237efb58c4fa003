//! Which provider module backs each [`Style`], and the rule picking the key's environment
//! variable from the endpoint.

use super::anthropic::Anthropic;
use super::contract::Provider;
use super::gemini::Gemini;
use super::openai::OpenAi;
use super::responses::Responses;
use super::style::Style;

/// OpenAI-compatible gateways that keep their keys under their own variable.
const GATEWAY_KEYS: &[(&str, &str)] = &[("openrouter.ai", "OPENROUTER_API_KEY")];

impl Style {
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
