//! The shop agent's run written by hand as a Temporal workflow: the model is an activity
//! (one OpenAI chat-completions request to the scripted model), the purchase is an
//! activity, and a purchase waits for a person's approval, given through the `answer`
//! update, which a validator refuses for a request that does not wait.

use std::collections::BTreeMap;
use std::error::Error as StdError;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use temporalio_common::RetryPolicy;
use temporalio_macros::{activities, workflow, workflow_methods};
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use temporalio_sdk::{
    ActivityOptions, ApplicationFailure, SyncWorkflowContext, WorkflowContext, WorkflowContextView,
    WorkflowResult,
};

/// The model the requests name, as bench_temporal's client does.
const MODEL: &str = "scripted-model";
/// The key the requests carry, as bench_temporal's client does.
const API_KEY: &str = "no-key-needed";
/// How long one model call or one purchase may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(300);
/// The longest Temporal waits between two attempts at an activity.
const MAX_RETRY_INTERVAL: Duration = Duration::from_secs(60);

/// The tools the model is told about: the shop agent's three, declared as bench_temporal's
/// client declares them, so the floor's model requests are the same as ours. Only
/// `purchase` is ever called by the "buy a gpu" script.
fn declarations() -> Value {
    json!([
        {"type": "function", "function": {"name": "purchase", "description": "Buys an item",
            "parameters": {"type": "object", "properties": {"item": {"type": "string"}},
                "required": ["item"]}}},
        {"type": "function", "function": {"name": "sign_in",
            "description": "Signs the user in to the shop",
            "parameters": {"type": "object", "properties": {}, "required": []}}},
        {"type": "function", "function": {"name": "ship_order",
            "description": "Ships an order; asks the customer where to",
            "parameters": {"type": "object", "properties": {"order": {
                "type": "integer", "format": "uint64", "minimum": 0,
                "description": "The order number"}},
                "required": ["order"]}}}
    ])
}

/// One tool call of the model's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Call {
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them: a JSON object in a string.
    pub arguments: String,
}

/// What the model said in one turn.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Turn {
    pub content: Option<String>,
    pub tool_calls: Vec<Call>,
}

/// A purchase to make, under a key that is the same on every retry.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Purchase {
    pub item: String,
    pub key: String,
}

/// A request for a person's approval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Approval {
    /// The tool call it is for.
    pub id: String,
    pub prompt: String,
}

/// A person's answer to an [`Approval`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AnswerIn {
    pub id: String,
    pub ok: bool,
}

/// The activities: the model call and the purchase.
pub struct Shop {
    pub http: reqwest::Client,
    /// The scripted model's `…/chat/completions`.
    pub endpoint: String,
    /// How many orders this worker has placed (the purchase's effect).
    pub orders: AtomicUsize,
}

#[activities]
impl Shop {
    /// One model turn over the transcript `messages`.
    #[activity]
    pub async fn model(
        self: Arc<Self>,
        _ctx: ActivityContext,
        messages: Vec<Value>,
    ) -> Result<Turn, ActivityError> {
        let body = json!({"model": MODEL, "messages": messages, "tools": declarations()});
        let response = self
            .http
            .post(&self.endpoint)
            .bearer_auth(API_KEY)
            .json(&body)
            .send()
            .await
            .map_err(|e| retryable(format!("the model could not be reached: {e}")))?;
        let status = response.status();
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            let why = format!("the model answered {status}: {text}");
            // A request the model refuses is refused again; a busy or failing server may
            // answer the next attempt.
            return Err(if status.is_client_error() && status.as_u16() != 429 {
                ActivityError::application(ApplicationFailure::non_retryable(why))
            } else {
                retryable(why)
            });
        }
        let reply: Value = response
            .json()
            .await
            .map_err(|e| retryable(format!("the model's reply could not be read: {e}")))?;
        read_turn(&reply).ok_or_else(|| {
            ActivityError::application(ApplicationFailure::non_retryable(format!(
                "the model's reply is not a chat completion: {reply}"
            )))
        })
    }

    /// Buys the item; the order number comes from this worker's count.
    #[activity]
    pub async fn purchase(
        self: Arc<Self>,
        _ctx: ActivityContext,
        purchase: Purchase,
    ) -> Result<String, ActivityError> {
        // A real shop would send `purchase.key` as its idempotency key.
        let n = self.orders.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(format!("ORDER-{n}: bought {}", purchase.item))
    }
}

fn retryable(why: String) -> ActivityError {
    ActivityError::application(ApplicationFailure::new(why))
}

/// The first choice's message of a chat completion.
fn read_turn(reply: &Value) -> Option<Turn> {
    let message = reply.get("choices")?.get(0)?.get("message")?;
    let content = message
        .get("content")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for call in calls {
            let function = call.get("function")?;
            tool_calls.push(Call {
                id: call.get("id")?.as_str()?.to_owned(),
                name: function.get("name")?.as_str()?.to_owned(),
                arguments: function.get("arguments")?.as_str()?.to_owned(),
            });
        }
    }
    Some(Turn {
        content,
        tool_calls,
    })
}

type HandlerError = Box<dyn StdError + Send + Sync>;

/// A run of the shop agent: model turns until the model answers in text; a purchase waits
/// for its approval.
#[workflow]
#[derive(Default)]
pub struct ShopRun {
    /// The approvals asked for in the current turn.
    waiting: Vec<Approval>,
    /// Every answer taken, by the call it answers.
    answers: BTreeMap<String, bool>,
}

impl ShopRun {
    fn open(&self) -> Vec<Approval> {
        self.waiting
            .iter()
            .filter(|a| !self.answers.contains_key(&a.id))
            .cloned()
            .collect()
    }
}

#[workflow_methods]
impl ShopRun {
    #[run(name = "ShopRun")]
    pub async fn run(ctx: &mut WorkflowContext<Self>, prompt: String) -> WorkflowResult<String> {
        let mut options = ActivityOptions::start_to_close_timeout(STEP_TIMEOUT);
        options.retry_policy = Some(
            RetryPolicy::builder()
                .maximum_attempts(5)
                .maximum_interval(MAX_RETRY_INTERVAL)
                .build(),
        );
        let workflow = ctx.workflow_id().to_owned();
        let mut messages = vec![json!({"role": "user", "content": prompt})];
        loop {
            let turn = ctx
                .execute_activity(Shop::model, messages.clone(), options.clone())
                .await?;
            if turn.tool_calls.is_empty() {
                return Ok(turn.content.unwrap_or_default());
            }
            let calls: Vec<Value> = turn
                .tool_calls
                .iter()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments}})
                })
                .collect();
            messages
                .push(json!({"role": "assistant", "content": turn.content, "tool_calls": calls}));

            // Every purchase waits for a person; the others run at once.
            let items: Vec<Option<String>> = turn
                .tool_calls
                .iter()
                .map(|c| {
                    serde_json::from_str::<Value>(&c.arguments)
                        .ok()
                        .and_then(|a| a.get("item")?.as_str().map(str::to_owned))
                })
                .collect();
            let asks: Vec<Approval> = turn
                .tool_calls
                .iter()
                .zip(&items)
                .filter(|(c, item)| c.name == "purchase" && item.is_some())
                .map(|(c, item)| Approval {
                    id: c.id.clone(),
                    prompt: format!("Approve purchase of {}?", item.as_deref().unwrap_or("?")),
                })
                .collect();
            if !asks.is_empty() {
                ctx.state_mut(|s| s.waiting = asks);
                ctx.wait_condition(|s| s.open().is_empty()).await?;
                ctx.state_mut(|s| s.waiting.clear());
            }
            let approved: Vec<bool> = ctx.state(|s| {
                turn.tool_calls
                    .iter()
                    .map(|c| s.answers.get(&c.id).copied().unwrap_or(false))
                    .collect()
            });
            let shared: &WorkflowContext<Self> = ctx;
            let outputs = join_all(turn.tool_calls.iter().zip(items).zip(approved).map(
                |((call, item), approved)| {
                    let purchase = Purchase {
                        item: item.unwrap_or_default(),
                        key: format!("{workflow}/{}", call.id),
                    };
                    let options = options.clone();
                    async move {
                        match call.name.as_str() {
                            "purchase" if purchase.item.is_empty() => {
                                Ok("error: `item` must be a string".to_owned())
                            }
                            "purchase" if !approved => Ok("declined".to_owned()),
                            "purchase" => {
                                shared
                                    .execute_activity(Shop::purchase, purchase, options)
                                    .await
                            }
                            other => Ok(format!("error: no tool named `{other}`")),
                        }
                    }
                },
            ))
            .await;
            for (call, output) in turn.tool_calls.iter().zip(outputs) {
                messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": output?}));
            }
        }
    }

    /// The approvals the run waits on now.
    #[query]
    pub fn pending(&self, _ctx: &WorkflowContextView) -> Vec<Approval> {
        self.open()
    }

    /// Refuses, before it enters the history, an answer to a request that does not wait.
    #[update_validator(answer)]
    fn validate_answer(
        &self,
        _ctx: &WorkflowContextView,
        input: &AnswerIn,
    ) -> Result<(), HandlerError> {
        if self.answers.contains_key(&input.id) {
            return Err(format!("request `{}` is already answered", input.id).into());
        }
        if !self.waiting.iter().any(|a| a.id == input.id) {
            return Err(format!("no request `{}` waits", input.id).into());
        }
        Ok(())
    }

    /// Takes an answer; returns the approvals still waiting.
    #[update]
    pub fn answer(
        &mut self,
        _ctx: &mut SyncWorkflowContext<Self>,
        input: AnswerIn,
    ) -> Vec<Approval> {
        self.answers.insert(input.id, input.ok);
        self.open()
    }
}
