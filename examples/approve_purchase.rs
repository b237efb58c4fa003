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
pub mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

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
/// (Public, with the stub's script in `support`, for the example's test in
/// `examples/core/tests`.)
#[tool(
    name = "approve_purchase",
    struct_name = "DeclaredPurchase",
    approval = "Approve purchase of {item}?"
)]
pub async fn declared_purchase(#[arg(description = "What to buy")] item: String) -> String {
    format!("approved: {item}")
}

/// The numbers of the steps printed, counted from 1 in each part of the example.
#[derive(Clone, Default)]
struct Steps(Arc<AtomicUsize>);

impl Steps {
    fn next(&self) -> usize {
        self.0.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// Asks the human at the terminal (or answers as `TOOLNEXUS_AUTO_ANSWER` says), printing
/// what asked and what the human answered as the next two steps.
async fn decide(
    request: Request,
    answering: support::Answering,
    steps: Steps,
    asked: &str,
) -> Answer {
    println!(
        "{}. {asked} on request {} ({}): {}",
        steps.next(),
        request.id,
        request.kind.as_str(),
        request.prompt
    );
    let approved = support::ask_yes_no(&request.prompt, answering).await;
    println!(
        "{}. the human answered: {}",
        steps.next(),
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
    let steps = Steps::default();
    let hooked = steps.clone();
    let client = lab()
        .before_tool(move |call| {
            let n = hooked.next();
            async move {
                match &call.answer {
                    None => println!("{n}. the model asked for {}({})", call.name, call.args),
                    Some(a) => println!("{n}. the tool re-runs with the answer (ok = {})", a.ok),
                }
                BeforeTool::Continue
            }
        })
        // A suspension never reaches after_tool: it sees the call once, settled.
        .after_tool(|_call, outcome| async move {
            match &outcome {
                ToolOutcome::Failure(r) => println!("   the tool failed: {}", r.output),
                other => println!("   the tool finished: {}", other.result().output),
            }
            outcome.into_result()
        })
        .wait_for({
            let steps = steps.clone();
            move |request: Request| decide(request, answering, steps.clone(), "the tool parked")
        })
        .build()?;
    let tk = Toolkit::builder().tool(ApprovePurchase).build()?;

    let result = client.run("Please buy a gpu for the lab.", &tk).await?;
    report(&result, "");
    println!("{}. final answer: {}", steps.next(), result.text);

    // Declared: the same purchase, the approval asked by the loop before the body runs.
    println!("\nThe same purchase, its approval declared on the tool:");
    let steps = Steps::default();
    let client = lab()
        .wait_for({
            let steps = steps.clone();
            move |request: Request| {
                let asked = "the loop asks before the body runs";
                decide(request, answering, steps.clone(), asked)
            }
        })
        .build()?;
    let tk = Toolkit::builder().tool(DeclaredPurchase).build()?;
    let result = client.run("Please buy a gpu for the lab.", &tk).await?;
    report(&result, " (declared)");
    println!("{}. final answer (declared): {}", steps.next(), result.text);
    Ok(())
}
