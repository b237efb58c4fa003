//! A run's result, made from its transcript by the rule the loop ends a run with.

use crate::{Message, Request, RunResult, RunStatus, Usage};

impl RunResult {
    /// The result of a run that halted on `waiting` (the requests its last turn waits on,
    /// in call order, as [`HaltedTurn::waiting`](crate::halted::HaltedTurn::waiting) reads
    /// them), with transcript `messages`, talking to `model`: status
    /// [`Pending`](RunStatus::Pending), [`pending`](Self::pending) the first request, and
    /// as its text that request's prompt, which is what a host shows the person. It took
    /// no turns, used no tokens and settled no calls; a host that counts them sets those
    /// fields.
    ///
    /// A run that waits on nothing has not halted: given no requests, this is
    /// [`finished`](Self::finished).
    ///
    /// ```
    /// use toolnexus::{Message, Request, RunResult, RunStatus};
    ///
    /// let asked = Request::new("approval", "Buy a gpu?").with_id("r1");
    /// let halted = RunResult::halted(vec![Message::user("buy a gpu")], vec![asked.clone()], "m");
    /// assert_eq!(halted.status, RunStatus::Pending);
    /// assert_eq!((halted.text.as_str(), halted.pending), ("Buy a gpu?", Some(asked)));
    ///
    /// let nothing = RunResult::halted(vec![Message::assistant("Done.")], Vec::new(), "m");
    /// assert_eq!((nothing.status, nothing.text.as_str()), (RunStatus::Done, "Done."));
    /// ```
    pub fn halted(messages: Vec<Message>, waiting: Vec<Request>, model: impl Into<String>) -> Self {
        let Some(first) = waiting.first().cloned() else {
            return RunResult::finished(messages, model);
        };
        let text = first.prompt.clone();
        RunResult {
            status: RunStatus::Pending,
            pending: Some(first),
            waiting,
            ..ended(messages, text, model.into())
        }
    }

    /// The result of a run that ended ([`Done`](RunStatus::Done)) with transcript
    /// `messages`, talking to `model`: its text is the last assistant turn's. Like
    /// [`halted`](Self::halted), it took no turns, used no tokens and settled no calls
    /// until a host that counts them sets those fields.
    ///
    /// ```
    /// use toolnexus::{Message, RunResult, RunStatus};
    ///
    /// let done = RunResult::finished(vec![Message::user("hi"), Message::assistant("Hello.")], "m");
    /// assert_eq!((done.status, done.text.as_str(), done.model.as_str()), (RunStatus::Done, "Hello.", "m"));
    /// assert!(done.pending.is_none() && done.waiting.is_empty());
    /// ```
    pub fn finished(messages: Vec<Message>, model: impl Into<String>) -> Self {
        let text = messages
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant { content, .. } => Some(content.clone()),
                _ => None,
            })
            .unwrap_or_default();
        ended(messages, text, model.into())
    }
}

/// A run that ended with `messages` and `text`, no more.
fn ended(messages: Vec<Message>, text: String, model: String) -> RunResult {
    RunResult {
        status: RunStatus::Done,
        text,
        tool_calls: Vec::new(),
        pending: None,
        waiting: Vec::new(),
        limit: None,
        turns: 0,
        usage: Usage::default(),
        messages,
        model,
    }
}
