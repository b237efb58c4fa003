//! Every spelling of an injected parameter, and the explicit markers for aliases.
#![deny(warnings)]
// The form under test, which clippy would have written otherwise.
#![allow(clippy::extra_unused_lifetimes)]
use serde::Deserialize;
use toolnexus::Answer as Approval;
use toolnexus::{tool, Answer, Answered, Tool, ToolContext, ToolResult};

#[derive(Deserialize, schemars::JsonSchema)]
struct Shipping {
    zip: String,
}

/// Bare names
#[tool]
async fn bare(item: String, answer: Option<&Answer>, ctx: &ToolContext) -> String {
    format!("{item} {} {:?}", answer.is_some(), ctx.call_id)
}

/// Paths to the runtime crate, with lifetimes
#[tool]
async fn pathed<'a>(
    item: String,
    reply: ::core::option::Option<&::toolnexus::Answer>,
    context: &toolnexus::ToolContext,
) -> String {
    format!("{item} {} {:?}", reply.is_some(), context.call_id)
}

/// Typed answers
#[tool]
async fn typed(item: String, shipping: Option<Answered<Shipping>>) -> String {
    match shipping {
        Some(s) => format!("{item} to {}", s.zip),
        None => item,
    }
}

type MaybeAnswer<'a> = Option<&'a Answer>;
type Ctx<'a> = &'a ToolContext;
type MaybeShipping = Option<Answered<Shipping>>;

/// Aliases need the markers
#[tool]
async fn aliased(
    #[answer] answer: MaybeAnswer<'_>,
    #[context] ctx: Ctx<'_>,
    #[answer] shipping: MaybeShipping,
) -> ToolResult {
    let _ = (answer, ctx, shipping);
    ToolResult::ok("ok")
}

/// The answer under another name: the marker says what the spelling cannot
#[tool]
async fn renamed(item: String, #[answer] approval: Option<&Approval>) -> String {
    format!("{item} {}", approval.is_some_and(|a| a.ok))
}

pub fn main() {
    for tool in [&Bare as &dyn Tool, &Pathed, &Typed, &Aliased, &Renamed] {
        let schema = tool.input_schema();
        let properties = schema["properties"].as_object().unwrap();
        assert!(properties.keys().all(|k| k == "item"), "{schema}");
    }
}
