//! Sub-agents: an agent of this process — a client, a toolkit and its instructions — called
//! as a tool by another agent's run ([`SubAgent`], [`AgentTool`]).
//!
//! The call runs the agent on the task the model gave it. When the agent's run halts on
//! questions for people, the call suspends on them ([`relay`]), keeping the agent's halted
//! run on its placeholder ([`kept`]); answered, the call re-runs, resumes the agent's run
//! with the answers, and ends with what it ends with — or suspends again on its next
//! questions.

mod kept;
mod relay;

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use serde_json::Value;

use crate::halted::HaltedTurn;
use crate::result::RESUME_KEY;
use crate::tool::BoxFuture;
use crate::tool_args::without_position;
use crate::toolkit::sanitize_name;
use crate::{
    Answer, ClientError, LlmClient, Message, RunOptions, RunResult, RunStatus, Tool, ToolContext,
    ToolResult, ToolSource, Toolkit,
};
use kept::Kept;

/// An agent — a client, the toolkit its model may call, its instructions — made into a
/// tool that another agent's model calls with a task ([`into_tool`](Self::into_tool)).
///
/// The call runs the agent on the task and returns its final text. When the agent's run
/// halts on questions for people (an approval its toolkit declares, a tool's `pending!`),
/// the calling run halts on them too, or asks its `wait_for`:
///
/// - each question comes with the agent's rule as its tool set it (who may answer, how many
///   must approve, which arguments may be edited), its form, and an id of the calling call's
///   own; its prompt names the agents it came through (`payments: Refund order A-7?`), and
///   `data.via` the path from the calling run's tool to the tool that asked
///   ([`Request::relay`](crate::Request::relay));
/// - an approval answers the agent's run, which runs the approved call (with a person's
///   edited arguments, if they gave some) and goes on; its next questions, if it asks
///   more, come the same way, the next round;
/// - a refusal ends the call as declined, as any refused call ends, and the calling model
///   reads it; the agent's run is not taken up again.
///
/// While the call waits, the agent's halted transcript is kept on the call's placeholder in
/// the calling run's transcript ([`ToolOutput::resume`](crate::ToolOutput::resume)), so a
/// resume in another process, or by the inbox, takes up both runs. The agent's run gets an
/// id derived from the call, so its steps have keys of their own that are the same every
/// time the call runs again; in a journaled run it is journaled in the calling run's
/// journal, so a resume after a crash repeats none of its steps. Its span is a child of the
/// call's span, and the run's [`Extensions`](crate::Extensions) reach its tools.
///
/// Agents nest: an agent's toolkit may hold agent tools of its own.
///
/// Give the agent a client without `wait_for`: one with it waits for its own answers and
/// never lets its questions reach the calling run.
///
/// ```
/// use toolnexus::{LlmClient, SubAgent, Tool, Toolkit};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let client = LlmClient::builder().base_url("http://127.0.0.1:9/v1").model("m").api_key("k").build()?;
/// let payments = SubAgent::new(client, Toolkit::builder().build()?)
///     .instructions("You handle refunds. Refund only what the task asks for.")
///     .into_tool("payments", "Refunds orders; give it the order and the reason");
/// assert_eq!(payments.name(), "payments");
/// assert_eq!(payments.input_schema()["required"], toolnexus::serde_json::json!(["task"]));
/// let planner_tools = Toolkit::builder().tool(payments).build()?;
/// # let _ = planner_tools;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct SubAgent {
    client: LlmClient,
    toolkit: Toolkit,
    instructions: Option<String>,
}

impl fmt::Debug for SubAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubAgent")
            .field("client", &self.client)
            .field("toolkit", &self.toolkit)
            .field("instructions", &self.instructions.is_some())
            .finish()
    }
}

impl SubAgent {
    /// An agent whose model is `client`'s and which may call `toolkit`'s tools.
    pub fn new(client: LlmClient, toolkit: Toolkit) -> Self {
        SubAgent {
            client,
            toolkit,
            instructions: None,
        }
    }

    /// The agent's instructions: the system message of each of its runs, in place of the
    /// client's system prompt.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The agent as a tool named `name` (sanitized as a toolkit sanitizes names), which a
    /// model reads `description` of to decide when to call it. It takes one argument,
    /// `task`: what the agent is to do, in plain words.
    pub fn into_tool(self, name: impl Into<String>, description: impl Into<String>) -> AgentTool {
        AgentTool {
            inner: Arc::new(Inner {
                name: sanitize_name(&name.into()),
                description: description.into(),
                agent: self,
            }),
        }
    }
}

/// A [`SubAgent`] as a tool; made by [`SubAgent::into_tool`]. It reports the source
/// [`ToolSource::Agent`] (`agent:<name>` in metrics). Clones share the agent.
#[derive(Clone)]
pub struct AgentTool {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    description: String,
    agent: SubAgent,
}

impl fmt::Debug for AgentTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentTool")
            .field("name", &self.inner.name)
            .field("agent", &self.inner.agent)
            .finish()
    }
}

/// What the calling model gives the agent.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Task {
    /// What the agent is to do, in plain words, with everything it needs to know: it sees
    /// nothing of this conversation but this.
    task: String,
}

impl Tool for AgentTool {
    fn name(&self) -> &str {
        &self.inner.name
    }

    fn description(&self) -> &str {
        &self.inner.description
    }

    fn input_schema(&self) -> &Value {
        static SCHEMA: OnceLock<Value> = OnceLock::new();
        SCHEMA.get_or_init(crate::__private::schema_for::<Task>)
    }

    fn execute(&self, args: Value, ctx: ToolContext) -> BoxFuture<'_, ToolResult> {
        Box::pin(self.call(args, ctx))
    }

    fn source(&self) -> ToolSource<'_> {
        ToolSource::Agent {
            agent: &self.inner.name,
        }
    }
}

impl AgentTool {
    async fn call(&self, args: Value, mut ctx: ToolContext) -> ToolResult {
        let name = &self.inner.name;
        let answers = match (ctx.answers.is_empty(), &ctx.answer) {
            (true, Some(answer)) => vec![answer.clone()],
            _ => std::mem::take(&mut ctx.answers),
        };
        let scope = kept::scope(&ctx);
        let ran = match (ctx.resume.take(), answers.is_empty()) {
            (None, true) => {
                let task = match Task::deserialize(&args) {
                    Ok(task) => task.task,
                    Err(e) => {
                        let why = without_position(&e);
                        return ToolResult::error(format!("invalid arguments for {name}: {why}"));
                    }
                };
                self.start(task, scope.as_deref(), &ctx).await
            }
            (Some(kept), false) => match self.resume(*kept, answers, &ctx).await {
                Ok(ran) => ran,
                Err(why) => return ToolResult::error(format!("{name} could not go on: {why}")),
            },
            (None, false) => {
                return ToolResult::error(format!(
                    "{name} was answered without the halted run its questions came from: \
                     resume the run from the transcript it halted with"
                ));
            }
            (Some(_), true) => {
                return ToolResult::error(format!(
                    "{name} was handed its halted run without answers to its questions"
                ));
            }
        };
        self.ended(ran, scope)
    }

    /// Runs the agent on `task`, under the id the call derives.
    async fn start(
        &self,
        task: String,
        scope: Option<&str>,
        ctx: &ToolContext,
    ) -> Result<RunResult, ClientError> {
        let agent = &self.inner.agent;
        let history = match &agent.instructions {
            Some(instructions) => vec![Message::system(instructions.clone())],
            None => Vec::new(),
        };
        let run = agent
            .client
            .run(task, &agent.toolkit)
            .id(kept::run_id(scope))
            .history(history)
            .options(RunOptions::new().extensions(&ctx.extensions));
        match &ctx.journal {
            Some(journal) => run.journal(journal).await,
            None => run.await,
        }
    }

    /// Resumes the agent's halted run `kept` with the calling run's `answers`; `Err` when
    /// they cannot be taken to it.
    async fn resume(
        &self,
        kept: Value,
        answers: Vec<Answer>,
        ctx: &ToolContext,
    ) -> Result<Result<RunResult, ClientError>, String> {
        let name = &self.inner.name;
        let kept = Kept::deserialize(&kept)
            .map_err(|e| format!("its halted run does not read back: {e}"))?;
        if kept.agent != *name {
            return Err(format!("the halted run it was handed is {}'s", kept.agent));
        }
        let answers = relay::inward(&kept.asked, answers)?;
        let agent = &self.inner.agent;
        let run = agent
            .client
            .run_with_answers(kept.run, answers, &agent.toolkit)
            .options(RunOptions::new().extensions(&ctx.extensions));
        Ok(match &ctx.journal {
            Some(journal) => run.journal(journal).await,
            None => run.await,
        })
    }

    /// The call's result from how the agent's run ended: its text; a failure naming the
    /// agent; or, halted, a suspension on its questions keeping the halted run.
    fn ended(&self, ran: Result<RunResult, ClientError>, scope: Option<String>) -> ToolResult {
        let name = &self.inner.name;
        let run = match ran {
            Ok(run) => run,
            Err(e) => return ToolResult::error(format!("{name} failed: {e}")),
        };
        match run.status {
            RunStatus::Done => ToolResult::ok(run.text),
            RunStatus::Pending => self.suspend(run, scope),
            _ => ToolResult::error(format!(
                "{name} stopped at its turn limit before it finished{}",
                match run.text.is_empty() {
                    true => String::new(),
                    false => format!(": {}", run.text),
                }
            )),
        }
    }

    /// The suspension on the questions the agent's `run` halted on.
    fn suspend(&self, run: RunResult, scope: Option<String>) -> ToolResult {
        let name = &self.inner.name;
        // A call made outside a run's loop has nothing to derive ids from: they are drawn
        // once here and kept with the halted run.
        let scope = scope.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let relayed = HaltedTurn::of(&run.messages)
            .map_err(|e| e.to_string())
            .and_then(|turn| relay::outward(name, &scope, &turn, &run.waiting));
        let (requests, asked) = match relayed {
            Ok(relayed) => relayed,
            Err(why) => return ToolResult::error(format!("{name} halted, but {why}")),
        };
        let mut result = ToolResult::pending_all(requests);
        if !result.is_pending() {
            return result;
        }
        let kept = Kept {
            agent: name.clone(),
            run: run.messages,
            asked,
        };
        let kept = match serde_json::to_value(kept) {
            Ok(kept) => kept,
            Err(e) => return ToolResult::error(format!("{name} halted, but its run: {e}")),
        };
        if let Some(metadata) = &mut result.metadata {
            metadata.insert(RESUME_KEY.to_owned(), kept);
        }
        result
    }
}
