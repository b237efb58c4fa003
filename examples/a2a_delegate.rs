//! An agent whose only tool is a remote A2A agent, whose question is answered here.
//!
//! The model asks the remote agent to "buy a gpu"; the remote task stops to ask a person
//! (`TASK_STATE_INPUT_REQUIRED`), so the call suspends; the question is answered at the
//! terminal (or as `TOOLNEXUS_AUTO_ANSWER` says); the answer goes to the same remote task
//! as a continuation, and the final text repeats the remote agent's answer.
//!
//! ```sh
//! cargo run --example a2a_agent -- --port 8070                          # a remote agent
//! cargo run --example a2a_delegate -- --remote http://127.0.0.1:8070   # asks y/n
//! TOOLNEXUS_AUTO_ANSWER=decline cargo run --example a2a_delegate -- --remote http://127.0.0.1:8070
//! ```
//! `--remote` is the agent's base URL (its card is at `/.well-known/agent-card.json`
//! below it) or its card's URL. The model is the embedded scripted stub unless
//! `OPENAI_API_KEY`, `TOOLNEXUS_BASE_URL`, `TOOLNEXUS_MODEL` or `TOOLNEXUS_STYLE` say
//! otherwise, as in `approve_purchase`.

mod failure;
mod support;

use failure::Failure;
use toolnexus::testing::{RecordedRequest, Reply};
use toolnexus::{Answer, Asks, LlmClient, Request, Tool, Toolkit};
use toolnexus_a2a::RemoteAgent;

/// The value of `--remote URL` (or `--remote=URL`).
fn remote_arg() -> Result<String, String> {
    let usage = "usage: a2a_delegate --remote URL (the remote A2A agent's base or card URL)";
    let mut args = std::env::args().skip(1);
    match args.next() {
        Some(flag) if flag == "--remote" => args.next().ok_or_else(|| usage.to_owned()),
        Some(flag) => match flag.strip_prefix("--remote=") {
            Some(url) => Ok(url.to_owned()),
            None => Err(format!("unknown argument `{flag}`; {usage}")),
        },
        None => Err(usage.to_owned()),
    }
}

/// The embedded stub's model: it sends the remote agent "buy a gpu", then repeats what
/// the remote agent answered.
fn script(tool: String) -> impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static {
    move |req| match support::last_tool_output(req) {
        None => Reply::tool_call("call_1", &tool, serde_json::json!({"message": "buy a gpu"})),
        Some(refused) if refused.starts_with("declined/expired") => Reply::text(format!(
            "The purchase was declined, so nothing was bought ({refused})."
        )),
        Some(answer) => Reply::text(format!("The remote agent answered: {answer}")),
    }
}

/// Asks the person at the terminal (or answers as `TOOLNEXUS_AUTO_ANSWER` says).
async fn decide(request: Request, answering: support::Answering) -> Answer {
    let remote = request
        .data
        .as_ref()
        .and_then(|d| d["a2a"]["taskId"].as_str())
        .unwrap_or("?")
        .to_owned();
    println!(
        "the remote task {remote} asks ({}): {}",
        request.kind.as_str(),
        request.prompt
    );
    let question = match request.asks() {
        Asks::SignIn { url } => {
            println!(
                "   sign in at {}",
                url.unwrap_or("(the remote gave no URL)")
            );
            "Signed in?".to_owned()
        }
        _ => request.prompt.clone(),
    };
    let approved = support::ask_yes_no(&question, answering).await;
    println!(
        "the person answered: {}",
        if approved { "approve" } else { "decline" }
    );
    if approved {
        Answer::ok(request.id)
    } else {
        Answer::decline(request.id, "declined")
    }
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let url = remote_arg()?;
    let answering = support::Answering::from_env()?;
    let remote = RemoteAgent::connect(&url).await?;
    println!(
        "remote agent: `{}` ({}) at {}",
        remote.name(),
        remote.description(),
        remote.endpoint()
    );
    let target = support::target(script(remote.name().to_owned())).await?;
    let system = format!(
        "You buy things through the remote agent `{}`: send it what to buy, then report its answer.",
        remote.name()
    );
    let client = LlmClient::builder()
        .base_url(&target.base_url)
        .style(target.style)
        .model(&target.model)
        .api_key(&target.api_key)
        .system_prompt(system)
        .before_tool(|call| {
            match &call.answer {
                None => println!("the model sends {} {}", call.name, call.args),
                Some(_) => println!("the answer goes to the same remote task"),
            }
            async { toolnexus::BeforeTool::Continue }
        })
        .wait_for(move |request: Request| decide(request, answering))
        .build()?;
    let tk = Toolkit::builder().tool(remote).build()?;
    let result = client.run("Please buy a gpu for the lab.", &tk).await?;
    for call in &result.tool_calls {
        println!("the remote agent's result: {}", call.output);
    }
    println!("final answer: {}", result.text);
    Ok(())
}
