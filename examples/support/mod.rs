//! What the examples share: choosing the endpoint (a real one from the environment, or the
//! embedded scripted stub) and reading the human's decision.
#![allow(dead_code)] // each example uses part of it

use std::io::IsTerminal;

use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{LlmClientBuilder, Style};

/// A client builder aimed at the endpoint, and the stub when it is the embedded one.
pub struct Endpoint {
    pub builder: LlmClientBuilder,
    pub stub: Option<MockLlm>,
}

/// A real endpoint when `TOOLNEXUS_BASE_URL` or the style's API key is set
/// (`TOOLNEXUS_STYLE=openai|anthropic`, `TOOLNEXUS_MODEL`); otherwise the embedded stub,
/// scripted by `script`, so the example runs with no key and no network.
pub async fn endpoint(
    script: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
) -> Result<Endpoint, Box<dyn std::error::Error>> {
    let style = match std::env::var("TOOLNEXUS_STYLE").as_deref() {
        Ok("anthropic") => Style::Anthropic,
        Ok("openai") | Err(_) => Style::OpenAi,
        Ok(other) => {
            return Err(
                format!("TOOLNEXUS_STYLE must be openai or anthropic, not {other:?}").into(),
            )
        }
    };
    let key_var = match style {
        Style::Anthropic => "ANTHROPIC_API_KEY",
        _ => "OPENAI_API_KEY",
    };
    let base_url = std::env::var("TOOLNEXUS_BASE_URL").ok();
    let real = base_url.is_some() || std::env::var_os(key_var).is_some();
    let builder = toolnexus::LlmClient::builder().style(style);
    if real {
        let default_model = match style {
            Style::Anthropic => "claude-3-5-haiku-latest",
            _ => "gpt-4o-mini",
        };
        let model = std::env::var("TOOLNEXUS_MODEL").unwrap_or_else(|_| default_model.to_owned());
        let default_base = match style {
            Style::Anthropic => "https://api.anthropic.com/v1",
            _ => "https://api.openai.com/v1",
        };
        let base_url = base_url.unwrap_or_else(|| default_base.to_owned());
        println!("endpoint: {base_url} ({model})");
        return Ok(Endpoint {
            builder: builder.base_url(base_url).model(model),
            stub: None,
        });
    }
    let stub = MockLlm::with_fn(script).await?;
    println!(
        "endpoint: the embedded scripted stub at {} (no key, no network)",
        stub.base_url()
    );
    Ok(Endpoint {
        builder: builder
            .base_url(stub.base_url())
            .model("scripted-model")
            .api_key("no-key-needed"),
        stub: Some(stub),
    })
}

/// The text of the newest tool result in a recorded request, in either wire format.
pub fn last_tool_output(req: &RecordedRequest) -> Option<String> {
    let last = req.messages().last()?;
    match last["role"].as_str()? {
        "tool" => last["content"].as_str().map(str::to_owned),
        "user" => last["content"]
            .as_array()?
            .iter()
            .rev()
            .find(|b| b["type"] == "tool_result")
            .and_then(|b| b["content"].as_str())
            .map(str::to_owned),
        _ => None,
    }
}

/// The human's decision: `TOOLNEXUS_AUTO_ANSWER=approve|decline`, else a y/n question at
/// the terminal. With no terminal on standard input it never waits: it says so and declines.
pub async fn ask_yes_no(question: &str) -> bool {
    match std::env::var("TOOLNEXUS_AUTO_ANSWER").as_deref() {
        Ok("approve") => {
            println!("   {question} -> approve (TOOLNEXUS_AUTO_ANSWER)");
            return true;
        }
        Ok("decline") => {
            println!("   {question} -> decline (TOOLNEXUS_AUTO_ANSWER)");
            return false;
        }
        _ => {}
    }
    if !std::io::stdin().is_terminal() {
        println!("   {question} -> no terminal on standard input to ask at: declining");
        return false;
    }
    let question = question.to_owned();
    // Reading standard input blocks, so it must not run on the async runtime's thread.
    tokio::task::spawn_blocking(move || {
        use std::io::Write;
        print!("   {question} [y/N] ");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).is_ok() && matches!(line.trim(), "y" | "Y" | "yes")
    })
    .await
    .unwrap_or(false)
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
