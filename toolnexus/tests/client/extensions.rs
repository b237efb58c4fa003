//! Per-run values for tools: attached with `RunOptions`, seen by every tool call of that run
//! (re-runs, streamed and resumed runs included), never sent or serialized.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, NativeTool, Request, RunOptions, RunStatus, Style, Tool, ToolContext, ToolResult,
    Toolkit,
};

use crate::support::*;

/// Who a run acts for; its token must never leave the process.
#[derive(Debug, Clone, PartialEq)]
struct Caller {
    user: String,
    token: String,
}

const SECRET: &str = "tok-9f2c-never-sent";

fn ada() -> Caller {
    Caller {
        user: "ada".into(),
        token: SECRET.into(),
    }
}

/// `whoami`: suspends for approval once, then says who it acts for; records the caller each
/// execution saw (`None` when the run attached none).
#[derive(Clone, Default)]
struct WhoAmI {
    seen: Arc<Mutex<Vec<Option<Caller>>>>,
}

impl WhoAmI {
    fn tool(&self) -> impl Tool + use<> {
        let seen = self.seen.clone();
        NativeTool::of(
            "whoami",
            "Says who the run acts for",
            json!({"type": "object", "properties": {}}),
            move |_args: Value, ctx: ToolContext| {
                let seen = seen.clone();
                async move {
                    seen.lock()
                        .unwrap()
                        .push(ctx.extension::<Caller>().cloned());
                    let caller = match ctx.extensions.require::<Caller>() {
                        Ok(caller) => caller,
                        Err(missing) => return ToolResult::error(format!("whoami {missing}")),
                    };
                    match ctx.answer {
                        None => ToolResult::pending(Request::new("approval", "May I look?")),
                        Some(_) => ToolResult::ok(format!("acting for {}", caller.user)),
                    }
                }
            },
        )
    }

    fn seen(&self) -> Vec<Option<Caller>> {
        self.seen.lock().unwrap().clone()
    }
}

async fn whoami_mock() -> MockLlm {
    MockLlm::start([
        Reply::tool_call("call_1", "whoami", json!({})),
        Reply::text("done"),
    ])
    .await
    .unwrap()
}

/// Nothing the model received, and nothing serialized from the run, holds the secret.
fn assert_no_trace(mock: &MockLlm, serialized: &str) {
    for request in mock.requests() {
        let body = request.body.to_string();
        assert!(!body.contains(SECRET) && !body.contains("Caller"), "{body}");
    }
    assert!(!serialized.contains(SECRET), "{serialized}");
    assert!(!serialized.contains("Caller"), "{serialized}");
}

#[tokio::test]
async fn every_call_of_a_run_sees_its_values_and_nothing_leaves_the_process() {
    for style in STYLES {
        let tool = WhoAmI::default();
        let mock = whoami_mock().await;
        let client = on(&mock, style)
            .wait_for(|req: Request| async move { Answer::ok(req.id) })
            .build()
            .unwrap();
        let tk = Toolkit::builder().tool(tool.tool()).build().unwrap();
        let options = RunOptions::new().extension(ada());
        let result = client.run("who?", &tk).options(options).await.unwrap();

        assert_eq!(result.tool_calls[0].output, "acting for ada", "{style:?}");
        assert_eq!(
            tool.seen(),
            [Some(ada()), Some(ada())],
            "first run and re-run"
        );
        let serialized = serde_json::to_string(&result).unwrap();
        assert_no_trace(&mock, &serialized);
    }
}

#[tokio::test]
async fn a_halted_run_is_resumed_with_the_values_given_to_the_resume() {
    let tool = WhoAmI::default();
    let mock = whoami_mock().await;
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder().tool(tool.tool()).build().unwrap();
    let halted = client
        .run("who?", &tk)
        .options(RunOptions::new().extension(ada()))
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let saved = serde_json::to_string(&(&halted.messages, &halted.pending)).unwrap();
    assert_no_trace(&mock, &saved);

    let request = halted.pending.clone().unwrap();
    let other = Caller {
        user: "bob".into(),
        token: SECRET.into(),
    };
    let done = client
        .run_with_answer(
            halted.messages,
            &request,
            Answer::ok(request.id.clone()),
            &tk,
        )
        .options(RunOptions::new().extension(other.clone()))
        .await
        .unwrap();
    assert_eq!(done.tool_calls[0].output, "acting for bob");
    assert_eq!(tool.seen(), [Some(ada()), Some(other)]);
    assert_no_trace(&mock, &serde_json::to_string(&done).unwrap());
}

#[tokio::test]
async fn a_streamed_run_carries_its_values() {
    let tool = WhoAmI::default();
    let mock = whoami_mock().await;
    let client = on(&mock, Style::Anthropic)
        .wait_for(|req: Request| async move { Answer::ok(req.id) })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(tool.tool()).build().unwrap();
    let events: Vec<_> = client
        .run("who?", &tk)
        .options(RunOptions::new().extension(ada()))
        .stream()
        .collect()
        .await;
    let Some(Ok(toolnexus::StreamEvent::Done(result))) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(result.tool_calls[0].output, "acting for ada");
    assert_eq!(tool.seen(), [Some(ada()), Some(ada())]);
}

#[tokio::test]
async fn a_missing_value_is_an_error_result_naming_its_type() {
    let tool = WhoAmI::default();
    let mock = whoami_mock().await;
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder().tool(tool.tool()).build().unwrap();
    let result = client.run("who?", &tk).await.unwrap();
    assert_eq!(result.status, RunStatus::Done, "the run goes on");
    let call = &result.tool_calls[0];
    assert!(call.is_error);
    assert_eq!(
        call.output,
        "whoami needs a `client::extensions::Caller` extension: attach it to the run with \
         `RunOptions::extension`"
    );
    assert_eq!(tool.seen(), [None]);
}

#[tokio::test]
async fn concurrent_runs_on_one_client_keep_their_own_values() {
    let tool = WhoAmI::default();
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "whoami", json!({})),
        Reply::tool_call("call_1", "whoami", json!({})),
        Reply::text("done"),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let client = on(&mock, Style::OpenAi)
        .wait_for(|req: Request| async move { Answer::ok(req.id) })
        .build()
        .unwrap();
    let tk = Toolkit::builder().tool(tool.tool()).build().unwrap();
    let as_user = |user: &str| {
        RunOptions::new().extension(Caller {
            user: user.into(),
            token: SECRET.into(),
        })
    };
    let (a, b) = tokio::join!(
        client.run("who?", &tk).options(as_user("ada")),
        client.run("who?", &tk).options(as_user("bob")),
    );
    let mut outputs = [
        a.unwrap().tool_calls[0].output.clone(),
        b.unwrap().tool_calls[0].output.clone(),
    ];
    outputs.sort();
    assert_eq!(outputs, ["acting for ada", "acting for bob"]);
    let shown = format!("{:?}", client.run("who?", &tk).options(as_user("ada")));
    assert!(!shown.contains(SECRET), "{shown}");
}

/// The `#[tool]` form: an `Ext<T>` parameter is injected with the run's value.
mod injected {
    use toolnexus::{tool, Ext};

    use super::Caller;

    /// Lists the caller's open orders
    #[tool]
    pub async fn open_orders(caller: Ext<Caller>) -> String {
        format!("{} has no open orders", caller.user)
    }
}

#[tokio::test]
async fn an_ext_parameter_receives_the_runs_value_or_names_what_is_missing() {
    for style in STYLES {
        let mock = MockLlm::start([
            Reply::tool_call("call_1", "open_orders", json!({})),
            Reply::text("none"),
            Reply::tool_call("call_1", "open_orders", json!({})),
            Reply::text("cannot tell"),
        ])
        .await
        .unwrap();
        let client = on(&mock, style).build().unwrap();
        let tk = Toolkit::builder()
            .tool(injected::OpenOrders)
            .build()
            .unwrap();
        assert_eq!(
            tk.to_openai()[0]["function"]["parameters"]["properties"],
            json!({}),
            "never shown to the model"
        );
        let options = RunOptions::new().extension(ada());
        let result = client.run("open?", &tk).options(options).await.unwrap();
        assert_eq!(result.tool_calls[0].output, "ada has no open orders");
        assert_no_trace(&mock, &serde_json::to_string(&result).unwrap());

        let result = client.run("open?", &tk).await.unwrap();
        let call = &result.tool_calls[0];
        assert!(call.is_error, "{style:?}");
        assert_eq!(
            call.output,
            "tool `open_orders` needs a `client::extensions::Caller` extension: attach it to \
             the run with `RunOptions::extension`"
        );
    }
}
