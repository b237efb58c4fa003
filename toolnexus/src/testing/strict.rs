//! The mock refuses what the providers refuse: every request is checked against the
//! provider's validation rules for the style its path names, and against the turns the
//! mock itself sent earlier (their tool calls answered by id and in order, their reasoning
//! state back verbatim). A refusal is the provider's HTTP 400, in its words.

use super::issued::{newest, Issued};
use super::recorded::RecordedRequest;
use super::{anthropic, gemini, openai, responses};
use crate::Style;

/// Checks a request as `style`'s provider would; `Err` holds the provider's message.
pub(crate) fn check(
    style: Style,
    request: &RecordedRequest,
    issued: &[Issued],
) -> Result<(), String> {
    let issued = newest(issued.iter().filter(|i| i.style == style));
    match style {
        Style::OpenAi => openai::check(&request.body, &issued),
        Style::Anthropic => anthropic::check(&request.body, &issued),
        Style::Responses => responses::check(&request.body, &issued),
        Style::Gemini => gemini::check(&request.body, &issued),
    }
}
