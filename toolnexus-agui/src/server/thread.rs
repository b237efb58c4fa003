//! A thread as the inbox keeps it: a record naming the transcript its next run continues
//! and the run it waits on, if any. Whatever happened to that run since (answers on the
//! inbox page, a worker's resume, the runs it halted on again) is read from the inbox.

use serde::{Deserialize, Serialize};
use toolnexus::{Message, Request, RunResult};
use toolnexus_inbox::{Door, Inbox, InboxError, ParkedState, Starter};

/// The record of one thread. Its JSON is what earlier versions kept as the thread's note,
/// so a database they wrote reads back unchanged.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct ThreadRecord {
    /// The transcript of the thread's last ended run: what a new run continues.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) history: Vec<Message>,
    /// The inbox run the thread waits on (the first of its chain), and the transcript
    /// it halted with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) parked: Option<Parked>,
    /// Who started the thread: it is theirs. Records kept before it have none: on an
    /// endpoint without an identify hook they are the responder's, as every caller is;
    /// behind a hook only the people who may answer what they wait on may resume them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) starter: Option<Starter>,
}

/// A run the thread parked in the inbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Parked {
    pub(crate) run: String,
    pub(crate) halted: Vec<Message>,
}

/// Where a thread stands.
#[derive(Debug)]
pub(crate) enum Stage {
    /// No run waits: a new one continues `history`.
    Idle { history: Vec<Message> },
    /// Its run `run` waits on `open` (in call order), having halted with `halted`;
    /// `parked` are the inbox's rows of the run's requests, which say who may answer.
    Waiting {
        run: String,
        open: Vec<Request>,
        parked: Vec<toolnexus_inbox::Parked>,
        halted: Vec<Message>,
    },
    /// Its run `run`, which halted with `halted`, was answered elsewhere (the inbox
    /// page, A2A): it is being resumed, or is ready to be.
    Resuming { run: String, halted: Vec<Message> },
}

/// The record of `thread`; `None` for a thread never seen.
pub(crate) async fn load(inbox: &Inbox, thread: &str) -> Result<Option<ThreadRecord>, InboxError> {
    Ok(inbox
        .record::<ThreadRecord>(Door::AGUI, thread)
        .await?
        .map(|kept| kept.data))
}

pub(crate) async fn save(
    inbox: &Inbox,
    thread: &str,
    record: &ThreadRecord,
) -> Result<(), InboxError> {
    inbox.keep_record(Door::AGUI, thread, record).await
}

/// The record after `result` of the thread `starter` started: a run that halted waits on
/// its parked run `parked`, one that ended is the history the next run continues.
pub(crate) fn after(
    result: &RunResult,
    parked: Option<String>,
    starter: Option<Starter>,
) -> ThreadRecord {
    match parked {
        Some(run) => ThreadRecord {
            history: Vec::new(),
            parked: Some(Parked {
                run,
                halted: result.messages.clone(),
            }),
            starter,
        },
        None => ThreadRecord {
            history: result.messages.clone(),
            parked: None,
            starter,
        },
    }
}

/// Where the thread of `record` stands, following its wait through the inbox.
pub(crate) async fn stage(inbox: &Inbox, record: &ThreadRecord) -> Result<Stage, InboxError> {
    let Some(parked) = &record.parked else {
        return Ok(Stage::Idle {
            history: record.history.clone(),
        });
    };
    let latest = inbox.follow(&parked.run).await?;
    Ok(match latest.run_state() {
        ParkedState::Waiting => Stage::Waiting {
            open: latest.open(),
            parked: latest.requests.clone(),
            halted: latest.halted.unwrap_or_else(|| parked.halted.clone()),
            run: latest.run,
        },
        ParkedState::Done => match &latest.head().result {
            // `follow` went on past a result with a next run, so this one ended here.
            Some(result) => Stage::Idle {
                history: result.messages.clone(),
            },
            // A resume that kept nothing leaves the thread where it was before.
            None => Stage::Idle {
                history: record.history.clone(),
            },
        },
        // The wait's run failed for good: its halted turn cannot be continued, so the
        // thread goes on from before it.
        ParkedState::Failed => Stage::Idle {
            history: record.history.clone(),
        },
        _ => Stage::Resuming {
            halted: latest.halted.unwrap_or_else(|| parked.halted.clone()),
            run: latest.run,
        },
    })
}
