//! A purchase that needs a human's approval, written by hand and then declared.
//!
//! The model asks for `approve_purchase`; the tool parks on an approval request; the host's
//! `wait_for` asks the human at the terminal; the tool re-runs with the answer; the model
//! gives its final answer. Then the same purchase with the approval declared on the tool
//! (`#[tool(approval = "…")]`): the loop asks before the body runs, and the body has no
//! answer to match.
//!
//! ```sh
//! cargo run --example approve_purchase                                 # embedded stub, asks y/n
//! TOOLNEXUS_AUTO_ANSWER=decline cargo run --example approve_purchase   # approve|decline by itself
//! OPENAI_API_KEY=sk-… cargo run --example approve_purchase             # a real model
//! ```
//! Also `TOOLNEXUS_BASE_URL`, `TOOLNEXUS_MODEL` and `TOOLNEXUS_STYLE=openai|anthropic|responses|gemini`. The
//! answer is read from standard input, a terminal or a pipe; when it is closed (Ctrl-D),
//! the purchase is declined.

mod export;
mod failure;
mod support;

use failure::Failure;
use toolnexus::{
    pending, tool, Answer, BeforeTool, LlmClient, Request, ToolOutcome, ToolResult, Toolkit,
};

/// Asks a person to approve buying an item, and reports the approval
#[tool]
async fn approve_purchase(
    #[arg(description = "What to buy")] item: String,
    answer: Option<&Answer>,
) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok(format!("approved: {item}")),
        // Only a direct `Toolkit::execute` gets here: under `LlmClient` a refusal never
        // re-runs the tool, the loop feeds the model `declined/expired: <prompt> (reason: …)`.
        Some(_) => ToolResult::error("declined"),
        None => pending!(
            kind = "approval",
            prompt = format!("Approve purchase of {item}?")
        ),
    }
}

/// The same tool with its approval declared: the body runs only once a person said yes.
#[tool(
    name = "approve_purchase",
    struct_name = "DeclaredPurchase",
    approval = "Approve purchase of {item}?"
)]
async fn declared_purchase(#[arg(description = "What to buy")] item: String) -> String {
    format!("approved: {item}")
}

/// Asks the human at the terminal (or answers as `TOOLNEXUS_AUTO_ANSWER` says).
async fn decide(request: Request, answering: support::Answering) -> Answer {
    println!(
        "2. the tool parked on request {} ({}): {}",
        request.id, request.kind, request.prompt
    );
    let approved = support::ask_yes_no(&request.prompt, answering).await;
    println!(
        "3. the human answered: {}",
        if approved { "approve" } else { "decline" }
    );
    if approved {
        Answer::ok(request.id)
    } else {
        Answer::decline(request.id, "declined")
    }
}

/// What the run recorded of its calls.
fn report(result: &toolnexus::RunResult, how: &str) {
    for call in &result.tool_calls {
        println!("   recorded{how}: {} -> {}", call.name, call.output);
    }
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let _export = export::start()?;
    let answering = support::Answering::from_env()?;
    // The model: a real endpoint from the environment, or the embedded scripted stub.
    let target = support::target(support::purchase_script).await?;
    let lab = || {
        LlmClient::builder()
            .base_url(&target.base_url)
            .style(target.style)
            .model(&target.model)
            .api_key(&target.api_key)
            .system_prompt("You buy things for the lab. Use approve_purchase before any purchase.")
    };
    let client = lab()
        .before_tool(|call| async move {
            match &call.answer {
                None => println!("1. the model asked for {}({})", call.name, call.args),
                Some(a) => println!("4. the tool re-runs with the answer (ok = {})", a.ok),
            }
            BeforeTool::Continue
        })
        // A suspension never reaches after_tool: it sees the call once, settled.
        .after_tool(|_call, outcome| async move {
            match &outcome {
                ToolOutcome::Failure(r) => println!("   the tool failed: {}", r.output),
                other => println!("   the tool finished: {}", other.result().output),
            }
            outcome.into_result()
        })
        .wait_for(move |request: Request| decide(request, answering))
        .build()?;
    let tk = Toolkit::builder().tool(ApprovePurchase).build()?;

    let result = client.run("Please buy a gpu for the lab.", &tk).await?;
    report(&result, "");
    println!("5. final answer: {}", result.text);

    // Declared: the same purchase, the approval asked by the loop before the body runs.
    let client = lab()
        .wait_for(move |request: Request| async move {
            println!("6. declared on the tool, the loop asks before the body runs");
            decide(request, answering).await
        })
        .build()?;
    let tk = Toolkit::builder().tool(DeclaredPurchase).build()?;
    let result = client.run("Please buy a gpu for the lab.", &tk).await?;
    report(&result, " (declared)");
    println!("7. final answer (declared): {}", result.text);
    Ok(())
}
