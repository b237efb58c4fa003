//! Replays of a driven run: the steps it made, numbered ([`Driven::steps`]), and the same
//! run taken up to a step and on anew from there ([`Driven::replay_from`]).

use std::collections::HashMap;
use std::fmt;

use super::approvers::{Approvers, Question, Verdict};
use super::drive::{Drive, Driven};
use super::journal::{Base, Made, MadeKind};
use crate::{LlmClient, Step, ToolResult, Toolkit};

/// One step a durable drive made, numbered from 1 in the order the run made it: a model
/// reply, a tool call (a call that asked a question included), or the answers given at a
/// halt. These are the steps [`Drive::crash_after`] counts and
/// [`Driven::replay_from`] cuts at; `Display` writes one as `3. answers: …`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunStep {
    /// Its number, from 1.
    pub number: usize,
    /// What it was.
    pub kind: RunStepKind,
}

/// What a [`RunStep`] was.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RunStepKind {
    /// The model's reply to a turn: its text and the tools it called, in order.
    Reply {
        /// The reply's text.
        text: String,
        /// The names of the tools it called.
        calls: Vec<String>,
    },
    /// A tool call and what came of it.
    Call {
        /// The tool's name (empty when the kit could not tell it).
        tool: String,
        /// The call's id.
        call_id: String,
        /// What it returned; for a call that asked, the question's prompt.
        output: String,
        /// Whether it asked a question rather than ending.
        asked: bool,
    },
    /// The answers given at a halt, together, with the questions they answered.
    Answers(Vec<Question>),
    /// A step the run began and did not finish (a model reply it could not use).
    Unfinished,
}

impl fmt::Display for RunStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}. ", self.number)?;
        match &self.kind {
            RunStepKind::Reply { text, calls } if calls.is_empty() => {
                write!(f, "model reply {text:?}")
            }
            RunStepKind::Reply { calls, .. } => write!(f, "model reply calls {}", calls.join(", ")),
            RunStepKind::Call {
                tool,
                output,
                asked: true,
                ..
            } => write!(f, "{tool} asks {output:?}"),
            RunStepKind::Call { tool, output, .. } => write!(f, "{tool} returns {output:?}"),
            RunStepKind::Answers(questions) => {
                f.write_str("answers:")?;
                for question in questions {
                    let answer = Verdict(&question.answer);
                    write!(f, " {:?} -> {answer};", question.request.prompt)?;
                }
                Ok(())
            }
            RunStepKind::Unfinished => f.write_str("unfinished"),
        }
    }
}

impl Driven {
    /// The steps the run made, in order, numbered as [`replay_from`](Self::replay_from)
    /// and [`Drive::crash_after`] count them. Empty for an inline drive, which keeps no
    /// journal.
    pub fn steps(&self) -> Vec<RunStep> {
        let mut tools: HashMap<String, String> = HashMap::new();
        self.log
            .iter()
            .map(|made| RunStep {
                number: made.number,
                kind: kind_of(made, &mut tools),
            })
            .collect()
    }

    /// The number of the step that answered the question whose prompt is `prompt` (the
    /// last, when it was asked more than once): the step to replay from to answer it
    /// otherwise.
    ///
    /// # Panics
    ///
    /// When no step answered it, listing the steps.
    pub fn step_answering(&self, prompt: &str) -> usize {
        let steps = self.steps();
        let found = steps.iter().rev().find(|step| match &step.kind {
            RunStepKind::Answers(questions) => questions.iter().any(|q| q.request.prompt == prompt),
            _ => false,
        });
        match found {
            Some(step) => step.number,
            None => panic!(
                "no step of run {} answered {prompt:?}; its steps:\n{}",
                self.run_id,
                Steps(&steps)
            ),
        }
    }

    /// The number of the `n`-th model reply (from 1): the step to replay from to have the
    /// model say something else there.
    ///
    /// # Panics
    ///
    /// When the run had fewer replies, listing the steps.
    pub fn step_of_reply(&self, n: usize) -> usize {
        let steps = self.steps();
        let found = steps
            .iter()
            .filter(|step| matches!(step.kind, RunStepKind::Reply { .. }))
            .nth(n.saturating_sub(1));
        match found {
            Some(step) if n > 0 => step.number,
            _ => panic!(
                "run {} has no model reply number {n}; its steps:\n{}",
                self.run_id,
                Steps(&steps)
            ),
        }
    }

    /// The same run again, its steps before step `from` taken over as they were recorded
    /// — each model reply given back without asking the model, each tool call's result
    /// without running the tool, each halt's answers without asking anyone — and step
    /// `from` and every step after it made anew, with the approvers and the client
    /// [`Replay::drive`] is given. "What if finance had declined?" is a replay from the
    /// step that answered finance's question ([`step_answering`](Self::step_answering)),
    /// driven by approvers who decline; "what if the model had stopped there?" a replay
    /// from that reply ([`step_of_reply`](Self::step_of_reply)) on a model scripted to.
    ///
    /// A step is what [`steps`](Self::steps) lists: a model reply, a tool call (one that
    /// asked a question included), or the answers given at a halt, numbered from 1 in
    /// the order the run made them.
    ///
    /// # Panics
    ///
    /// When the run was driven inline (it keeps no journal), or `from` is not one of its
    /// steps, listing them.
    pub fn replay_from(&self, from: usize) -> Replay<'_> {
        if self.log.is_empty() {
            panic!(
                "run {} keeps no steps to replay: replay a durable drive (Approvers::drive); \
                 an inline run or one driven through an inbox keeps no journal",
                self.run_id
            );
        }
        if from == 0 || from > self.log.len() {
            panic!(
                "run {} has no step {from} to replay from; its steps:\n{}",
                self.run_id,
                Steps(&self.steps())
            );
        }
        Replay { of: self, from }
    }
}

/// A driven run to be replayed up to a step and taken on anew from there; made by
/// [`Driven::replay_from`].
#[derive(Debug, Clone, Copy)]
#[must_use = "a replay does nothing until it is driven and awaited"]
pub struct Replay<'d> {
    of: &'d Driven,
    from: usize,
}

impl<'d> Replay<'d> {
    /// Drives the replay durably, as [`Approvers::drive`] drives a run: same prompt and
    /// run id as the replayed run, `approvers` answering the questions from the replay's
    /// step on, `client` asked for the model replies from it on (point it at a model
    /// scripted for what comes after the step; the replies before it are not asked for).
    /// The result's [`questions`](Driven::questions) holds the replayed questions too;
    /// `approvers`' own record, only what they were asked.
    ///
    /// The drive fails the test when the replay does not come to its step the way the
    /// recorded run did (a changed toolkit or prompt took it elsewhere).
    pub fn drive<'a>(
        self,
        approvers: &'a Approvers,
        client: &'a LlmClient,
        tk: &'a Toolkit,
    ) -> Drive<'a> {
        let Replay { of, from } = self;
        let base = Base::of(&of.log, from);
        approvers.replaying(client, tk, of.prompt.clone(), of.run_id.clone(), base)
    }
}

fn kind_of(made: &Made, tools: &mut HashMap<String, String>) -> RunStepKind {
    let (key, step) = match &made.what {
        MadeKind::Answers(questions, _) => return RunStepKind::Answers(questions.clone()),
        MadeKind::Step(_, None) => return RunStepKind::Unfinished,
        MadeKind::Step(key, Some(step)) => (key, &**step),
    };
    match step {
        Step::Reply(reply) => {
            for call in &reply.calls {
                tools.insert(call.id.clone(), call.name.clone());
            }
            RunStepKind::Reply {
                text: reply.text.clone(),
                calls: reply.calls.iter().map(|c| c.name.clone()).collect(),
            }
        }
        Step::Call(call) => {
            let call_id = key.call.clone().unwrap_or_default();
            let asked = ToolResult::pending_of(&call.result);
            RunStepKind::Call {
                tool: tools.get(&call_id).cloned().unwrap_or_default(),
                output: match &asked {
                    Some(request) => request.prompt.clone(),
                    None => call.result.output.clone(),
                },
                asked: asked.is_some(),
                call_id,
            }
        }
    }
}

/// Steps as a list, one a line.
struct Steps<'a>(&'a [RunStep]);

impl fmt::Display for Steps<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str("  (none)")?;
        }
        for (i, step) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "  {step}")?;
        }
        Ok(())
    }
}
