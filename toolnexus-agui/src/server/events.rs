//! The events a run is: its progress as it streams ([`Live`]), and the part of a
//! transcript a resume added ([`resumed`]). Both name messages the same way, so a model
//! turn's text and its tool calls are one assistant message on the client.

use toolnexus::halted::HaltedTurn;
use toolnexus::{Message, StreamEvent};

use crate::wire::Event;

/// The ids of the messages one run sends: the run's id and a count, so they are new on
/// the thread however many runs it has.
pub(crate) struct Ids {
    run: String,
    next: usize,
}

impl Ids {
    pub(crate) fn new(run: &str) -> Ids {
        Ids {
            run: run.to_owned(),
            next: 0,
        }
    }

    fn next(&mut self) -> String {
        self.next += 1;
        format!("{}-{}", self.run, self.next)
    }
}

/// A streaming run's events, as its progress comes.
pub(crate) struct Live {
    ids: Ids,
    /// The assistant message of the model turn under way, once it said or called
    /// anything.
    turn: Option<String>,
    /// Whether that message's text is open.
    text_open: bool,
    /// The reasoning open now: its span and message share this id.
    reasoning: Option<String>,
}

impl Live {
    pub(crate) fn new(run: &str) -> Live {
        Live {
            ids: Ids::new(run),
            turn: None,
            text_open: false,
            reasoning: None,
        }
    }

    /// The events `event` is (none for what AG-UI does not show: usage, a call's
    /// suspension, which the run's interrupts report). A model's readable reasoning is a
    /// reasoning span of one reasoning message, closed by whatever the model does next.
    pub(crate) fn on(&mut self, event: &StreamEvent) -> Vec<Event> {
        let mut out = Vec::new();
        if let StreamEvent::Reasoning { delta } = event {
            if !delta.is_empty() {
                self.reason(&mut out, delta);
            }
            return out;
        }
        if !matches!(event, StreamEvent::Text { delta } if delta.is_empty()) {
            self.close_reasoning(&mut out);
        }
        match event {
            StreamEvent::Text { delta } if !delta.is_empty() => {
                let id = self.turn_id();
                if !self.text_open {
                    self.text_open = true;
                    out.push(Event::TextMessageStart {
                        message_id: id.clone(),
                        role: "assistant".to_owned(),
                    });
                }
                out.push(Event::TextMessageContent {
                    message_id: id,
                    delta: delta.clone(),
                });
            }
            StreamEvent::ToolCall { id, name, args } => {
                self.close_text(&mut out);
                let parent = self.turn_id();
                call(&mut out, id, name, args, parent);
            }
            StreamEvent::ToolResult { id, output, .. } => {
                self.end_turn(&mut out);
                out.push(result(self.ids.next(), id, output));
            }
            StreamEvent::Pending { .. } | StreamEvent::Done(_) => self.end_turn(&mut out),
            _ => {}
        }
        out
    }

    /// Closes what is open: the stream ended, however.
    pub(crate) fn finish(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        self.close_reasoning(&mut out);
        self.end_turn(&mut out);
        out
    }

    /// A piece of reasoning: its span and message opened first when none is.
    fn reason(&mut self, out: &mut Vec<Event>, delta: &str) {
        let id = match &self.reasoning {
            Some(id) => id.clone(),
            None => {
                let id = self.ids.next();
                out.push(Event::ReasoningStart {
                    message_id: id.clone(),
                });
                out.push(Event::ReasoningMessageStart {
                    message_id: id.clone(),
                    role: "reasoning".to_owned(),
                });
                self.reasoning = Some(id.clone());
                id
            }
        };
        out.push(Event::ReasoningMessageContent {
            message_id: id,
            delta: delta.to_owned(),
        });
    }

    fn close_reasoning(&mut self, out: &mut Vec<Event>) {
        if let Some(id) = self.reasoning.take() {
            out.push(Event::ReasoningMessageEnd {
                message_id: id.clone(),
            });
            out.push(Event::ReasoningEnd { message_id: id });
        }
    }

    fn turn_id(&mut self) -> String {
        let ids = &mut self.ids;
        self.turn.get_or_insert_with(|| ids.next()).clone()
    }

    fn close_text(&mut self, out: &mut Vec<Event>) {
        if std::mem::take(&mut self.text_open)
            && let Some(id) = &self.turn
        {
            out.push(Event::TextMessageEnd {
                message_id: id.clone(),
            });
        }
    }

    fn end_turn(&mut self, out: &mut Vec<Event>) {
        self.close_text(out);
        self.turn = None;
    }
}

/// The events of what a resume added to `halted`, giving `resumed`: the results of the
/// calls that waited (never their calls again: the client has them), then every later
/// turn, except the placeholders of calls that wait again.
pub(crate) fn resumed(halted: &[Message], resumed: &[Message], run: &str) -> Vec<Event> {
    let mut ids = Ids::new(run);
    let mut out = Vec::new();
    // The halted turn's results are the last entry of `halted`; `resumed` holds them at
    // the same place, as the resume settled them.
    let start = match HaltedTurn::of(halted) {
        Ok(turn) => {
            let at = halted.len().saturating_sub(1);
            match resumed.get(at) {
                Some(Message::ToolResults { results }) => {
                    let settled_before: Vec<&str> =
                        turn.settled().map(|r| r.call_id.as_str()).collect();
                    for r in results {
                        if !r.is_pending() && !settled_before.contains(&r.call_id.as_str()) {
                            out.push(result(ids.next(), &r.call_id, &r.output));
                        }
                    }
                    at + 1
                }
                _ => halted.len(),
            }
        }
        Err(_) => halted.len(),
    };
    for message in resumed.iter().skip(start) {
        match message {
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                let id = ids.next();
                if !content.is_empty() {
                    out.push(Event::TextMessageStart {
                        message_id: id.clone(),
                        role: "assistant".to_owned(),
                    });
                    out.push(Event::TextMessageContent {
                        message_id: id.clone(),
                        delta: content.clone(),
                    });
                    out.push(Event::TextMessageEnd {
                        message_id: id.clone(),
                    });
                }
                for c in tool_calls {
                    call(&mut out, &c.id, &c.name, &c.args, id.clone());
                }
            }
            Message::ToolResults { results } => {
                for r in results.iter().filter(|r| !r.is_pending()) {
                    out.push(result(ids.next(), &r.call_id, &r.output));
                }
            }
            _ => {}
        }
    }
    out
}

fn call(out: &mut Vec<Event>, id: &str, name: &str, args: &serde_json::Value, parent: String) {
    out.push(Event::ToolCallStart {
        tool_call_id: id.to_owned(),
        tool_call_name: name.to_owned(),
        parent_message_id: parent,
    });
    // Arguments that were not valid JSON are kept as their text: sent as written.
    let delta = match args {
        serde_json::Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
    out.push(Event::ToolCallArgs {
        tool_call_id: id.to_owned(),
        delta,
    });
    out.push(Event::ToolCallEnd {
        tool_call_id: id.to_owned(),
    });
}

fn result(message_id: String, call: &str, output: &str) -> Event {
    Event::ToolCallResult {
        message_id,
        tool_call_id: call.to_owned(),
        content: output.to_owned(),
        role: "tool".to_owned(),
    }
}
