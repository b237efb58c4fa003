//! What the examples share: where the model is (a real endpoint from the environment, or
//! the embedded scripted stub), and how the human answers (`TOOLNEXUS_AUTO_ANSWER`, or a
//! prompt on standard input). Each example builds its own client from these.
#![allow(dead_code)] // each example uses part of it

use std::io::{IsTerminal, Write};

use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{LlmClientBuilder, Style};

/// Where the model is: everything a client builder needs to reach it.
pub struct Target {
    pub base_url: String,
    pub style: Style,
    pub model: String,
    /// The stub's placeholder, or the style's key variable for a real endpoint (empty when
    /// unset: the client then reports which variable it needs).
    pub api_key: String,
    /// The embedded stub, when that is the model; it serves as long as this is alive.
    pub stub: Option<MockLlm>,
}

/// A real endpoint when `TOOLNEXUS_BASE_URL` or the style's API key is set
/// (`TOOLNEXUS_STYLE=openai|anthropic|responses|gemini`, `TOOLNEXUS_MODEL`); otherwise the
/// embedded stub, which speaks every style,
/// scripted by `script`, so the example runs with no key and no network.
pub async fn target(
    script: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
) -> Result<Target, Box<dyn std::error::Error>> {
    let style = match std::env::var("TOOLNEXUS_STYLE") {
        Ok(name) => name
            .parse::<Style>()
            .map_err(|e| format!("TOOLNEXUS_STYLE: {e}"))?,
        Err(_) => Style::OpenAi,
    };
    let (key_var, default_base, default_model) = match style {
        Style::Anthropic => (
            "ANTHROPIC_API_KEY",
            "https://api.anthropic.com/v1",
            "claude-haiku-4-5",
        ),
        Style::Gemini => (
            "GEMINI_API_KEY",
            "https://generativelanguage.googleapis.com/v1beta",
            "gemini-2.5-flash",
        ),
        _ => ("OPENAI_API_KEY", "https://api.openai.com/v1", "gpt-4o-mini"),
    };
    let base_url = std::env::var("TOOLNEXUS_BASE_URL").ok();
    let api_key = std::env::var(key_var).ok();
    if base_url.is_some() || api_key.is_some() {
        let base_url = base_url.unwrap_or_else(|| default_base.to_owned());
        let model = std::env::var("TOOLNEXUS_MODEL").unwrap_or_else(|_| default_model.to_owned());
        println!("endpoint: {base_url} ({model})");
        return Ok(Target {
            base_url,
            style,
            model,
            api_key: api_key.unwrap_or_default(),
            stub: None,
        });
    }
    let stub = MockLlm::with_fn(script).await?;
    println!(
        "endpoint: the embedded scripted stub at {} (no key, no network)",
        stub.base_url()
    );
    Ok(Target {
        base_url: stub.base_url(),
        style,
        model: "scripted-model".to_owned(),
        api_key: "no-key-needed".to_owned(),
        stub: Some(stub),
    })
}

/// A client builder aimed at the target, and the stub when it is the embedded one.
pub struct Endpoint {
    pub builder: LlmClientBuilder,
    pub stub: Option<MockLlm>,
}

/// [`target`] as a ready client builder.
pub async fn endpoint(
    script: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
) -> Result<Endpoint, Box<dyn std::error::Error>> {
    let target = target(script).await?;
    let builder = toolnexus::LlmClient::builder()
        .base_url(target.base_url)
        .style(target.style)
        .model(target.model)
        .api_key(target.api_key);
    Ok(Endpoint {
        builder,
        stub: target.stub,
    })
}

/// Who answers the human's side of a suspension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answering {
    /// `TOOLNEXUS_AUTO_ANSWER=approve`: yes to everything, with sample values for forms.
    Approve,
    /// `TOOLNEXUS_AUTO_ANSWER=decline`: no to everything.
    Decline,
    /// Unset: the human, on standard input; when it is closed, the answer is no.
    Ask,
}

impl Answering {
    /// Reads `TOOLNEXUS_AUTO_ANSWER`; any other value is an error listing the valid ones.
    pub fn from_env() -> Result<Self, String> {
        let Some(value) = std::env::var_os("TOOLNEXUS_AUTO_ANSWER") else {
            return Ok(Answering::Ask);
        };
        match value.to_str() {
            Some("approve") => Ok(Answering::Approve),
            Some("decline") => Ok(Answering::Decline),
            _ => Err(format!(
                "TOOLNEXUS_AUTO_ANSWER must be `approve` or `decline` (or unset, to be asked), \
                 not `{}`",
                value.to_string_lossy()
            )),
        }
    }
}

/// Prints `prompt` and reads one line of standard input (a terminal or a pipe), without
/// its line ending. `None` when standard input is closed (Ctrl-D at a terminal). A newline
/// is printed when the person's own Enter did not end the prompt's line on the screen (a
/// pipe, or a closed input), so what follows does not continue it.
///
/// The read runs on its own thread: it blocks, and a run may stop waiting for it (a
/// sign-in that completes in the browser) without the program waiting for the read.
pub async fn read_line(prompt: &str) -> Option<String> {
    print!("{prompt}");
    let _ = std::io::stdout().flush();
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let read = match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\r', '\n']).to_owned()),
        };
        let _ = tx.send(read);
    });
    let line = rx.await.ok().flatten();
    if line.is_none() || !std::io::stdin().is_terminal() {
        println!();
    }
    line
}

/// The human's yes or no to `question`.
pub async fn ask_yes_no(question: &str, answering: Answering) -> bool {
    match answering {
        Answering::Approve => {
            println!("   {question} -> approve (TOOLNEXUS_AUTO_ANSWER)");
            true
        }
        Answering::Decline => {
            println!("   {question} -> decline (TOOLNEXUS_AUTO_ANSWER)");
            false
        }
        Answering::Ask => match read_line(&format!("   {question} [y/N] ")).await {
            Some(line) => matches!(line.trim(), "y" | "Y" | "yes"),
            None => {
                println!("   standard input is closed: declining");
                false
            }
        },
    }
}

/// "1 keyboard", "2 keyboards": a count of an item as a sentence says it (the example
/// items all take an `s`).
pub fn items(qty: u32, item: &str) -> String {
    match qty {
        1 => format!("1 {item}"),
        n => format!("{n} {item}s"),
    }
}

/// The first thing the user said in a recorded request, in whichever style it speaks.
pub fn first_prompt(req: &RecordedRequest) -> String {
    req.prompts().into_iter().next().unwrap_or_default()
}

/// The text of the newest tool result in a recorded request, in whichever style it speaks.
pub fn last_tool_output(req: &RecordedRequest) -> Option<String> {
    req.tool_results().pop().map(|(_, output)| output)
}

/// The embedded stub's model for the purchase examples: it asks for `approve_purchase`,
/// then reports what came of it.
pub fn purchase_script(req: &RecordedRequest) -> Reply {
    match last_tool_output(req) {
        None => Reply::tool_call(
            "call_1",
            "approve_purchase",
            serde_json::json!({"item": "gpu"}),
        ),
        Some(out) if out.starts_with("approved") => {
            Reply::text("The gpu purchase is approved and on its way.")
        }
        Some(_) => Reply::text("The purchase was declined, so I did not buy the gpu."),
    }
}
