//! A thread as the inbox keeps it: a note naming the transcript its next run continues
//! and the run it waits on, if any. Whatever happened to that run since (answers on the
//! inbox page, a worker's resume, the runs it halted on again) is read from the inbox.

use serde::{Deserialize, Serialize};
use toolnexus::{Message, Request, RunResult};
use toolnexus_inbox::{Inbox, InboxError, ParkedState};

/// How many runs one wait may chain (each resumed run that halts again parks a new one)
/// before the note is taken as corrupt rather than followed for ever.
const MAX_CHAIN: usize = 10_000;

/// The note of one thread.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct ThreadRecord {
    /// The transcript of the thread's last ended run: what a new run continues.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) history: Vec<Message>,
    /// The inbox run the thread waits on (the first of its chain), and the transcript
    /// it halted with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) parked: Option<Parked>,
}

/// A run the thread parked in the inbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Parked {
    pub(crate) run: String,
    pub(crate) halted: Vec<Message>,
}

/// Where a thread stands.
pub(crate) enum Stage {
    /// No run waits: a new one continues `history`.
    Idle { history: Vec<Message> },
    /// Its run `run` waits on `open` (in call order), having halted with `halted`.
    Waiting {
        run: String,
        open: Vec<Request>,
        halted: Vec<Message>,
    },
    /// Its run `run`, which halted with `halted`, was answered elsewhere (the inbox
    /// page, A2A): it is being resumed, or is ready to be.
    Resuming { run: String, halted: Vec<Message> },
}

fn key(thread: &str) -> String {
    format!("agui-thread:{thread}")
}

/// Why a thread cannot be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    Inbox(InboxError),
    Corrupt(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Inbox(e) => write!(f, "{e}"),
            ReadError::Corrupt(why) => write!(f, "the thread's record is unreadable: {why}"),
        }
    }
}

impl From<InboxError> for ReadError {
    fn from(e: InboxError) -> Self {
        ReadError::Inbox(e)
    }
}

pub(crate) async fn load(inbox: &Inbox, thread: &str) -> Result<ThreadRecord, ReadError> {
    match inbox.note(&key(thread)).await? {
        None => Ok(ThreadRecord::default()),
        Some(text) => serde_json::from_str(&text).map_err(|e| ReadError::Corrupt(e.to_string())),
    }
}

pub(crate) async fn save(
    inbox: &Inbox,
    thread: &str,
    record: &ThreadRecord,
) -> Result<(), ReadError> {
    let text = serde_json::to_string(record).map_err(|e| ReadError::Corrupt(e.to_string()))?;
    inbox.keep_note(&key(thread), &text).await?;
    Ok(())
}

/// The record after `result`: a run that halted waits on its parked run `parked`, one
/// that ended is the history the next run continues.
pub(crate) fn after(result: &RunResult, parked: Option<String>) -> ThreadRecord {
    match parked {
        Some(run) => ThreadRecord {
            history: Vec::new(),
            parked: Some(Parked {
                run,
                halted: result.messages.clone(),
            }),
        },
        None => ThreadRecord {
            history: result.messages.clone(),
            parked: None,
        },
    }
}

/// Where the thread of `record` stands, following its wait through the inbox.
pub(crate) async fn stage(inbox: &Inbox, record: &ThreadRecord) -> Result<Stage, ReadError> {
    let Some(parked) = &record.parked else {
        return Ok(Stage::Idle {
            history: record.history.clone(),
        });
    };
    let mut run = parked.run.clone();
    let mut halted = parked.halted.clone();
    for _ in 0..MAX_CHAIN {
        let requests = inbox.run_requests(&run).await?;
        let Some(head) = requests.first() else {
            return Err(ReadError::Corrupt(format!("the inbox has no run `{run}`")));
        };
        return Ok(match head.run_state {
            ParkedState::Waiting => Stage::Waiting {
                open: requests
                    .iter()
                    .filter(|p| p.state == ParkedState::Waiting)
                    .map(|p| p.request.clone())
                    .collect(),
                run,
                halted,
            },
            ParkedState::Done => match (&head.result, &head.next) {
                (Some(result), Some(next)) => {
                    halted = result.messages.clone();
                    run = next.clone();
                    continue;
                }
                (Some(result), None) => Stage::Idle {
                    history: result.messages.clone(),
                },
                // A resume that kept nothing leaves the thread where it was before.
                (None, _) => Stage::Idle {
                    history: record.history.clone(),
                },
            },
            // The wait's run failed for good: its halted turn cannot be continued, so the
            // thread goes on from before it.
            ParkedState::Failed => Stage::Idle {
                history: record.history.clone(),
            },
            _ => Stage::Resuming { run, halted },
        });
    }
    Err(ReadError::Corrupt(format!(
        "more than {MAX_CHAIN} runs chained"
    )))
}
