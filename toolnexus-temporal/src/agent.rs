//! [`Agent`]: the client and toolkit a worker runs, shared by the workflow (which replays
//! the loop's decisions) and the step activities (which make each model and tool call).

use std::sync::Arc;
use std::time::Duration;

use toolnexus::{LlmClient, Toolkit};

/// What a worker runs: one [`LlmClient`] and one [`Toolkit`], used by the `AgentRun`
/// workflow to decide and by its step activities to act. Every worker serving a task queue
/// must run the same agent: the workflow's decisions are replayed from the steps it
/// recorded, and an agent with other tools or settings would decide otherwise. The
/// workflow decides the toolkit's gates itself (a gated call halts there, with no step), so
/// a gate must decide from the call alone: its tool and arguments.
///
/// The client's `timeout` bounds each step (one model call, one tool call), not the run:
/// a run may wait days for a person. Its `wait_for` hook, if set, would block a step on a
/// person (and gated calls would be made as steps): a Temporal run halts instead, so leave
/// it unset.
#[derive(Clone)]
pub struct Agent {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) client: LlmClient,
    pub(crate) toolkit: Toolkit,
    pub(crate) step_timeout: Duration,
    pub(crate) heartbeat_timeout: Duration,
    pub(crate) max_attempts: u32,
    pub(crate) continue_after: u32,
}

/// How long a step may take by default: a model call or a tool call. The client does not
/// retry inside a step (Temporal retries the step instead, on the client's rule).
const STEP_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a step may go without a heartbeat by default. A step heartbeats every third of
/// it while it runs; a worker that dies stops, and its step goes to another worker once
/// this passes. With the worker's sticky queue (10 s) and Temporal's first retry interval
/// (1 s), a run whose worker dies carries on elsewhere well within 30 s.
const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(10);
/// How many times Temporal tries a step that fails in a way worth retrying.
const MAX_ATTEMPTS: u32 = 10;
/// Events after which a run continues as new at its next wait. Temporal warns at 10,240
/// events and refuses at 51,200: well below both, and a run rarely gets near.
const CONTINUE_AFTER: u32 = 2_000;

impl Agent {
    /// An agent of `client` and `toolkit`.
    pub fn new(client: LlmClient, toolkit: Toolkit) -> Self {
        Agent {
            inner: Arc::new(Inner {
                client,
                toolkit,
                step_timeout: STEP_TIMEOUT,
                heartbeat_timeout: HEARTBEAT_TIMEOUT,
                max_attempts: MAX_ATTEMPTS,
                continue_after: CONTINUE_AFTER,
            }),
        }
    }

    /// How long one step may run before Temporal counts the attempt as failed and retries
    /// it (default 5 minutes).
    pub fn step_timeout(self, limit: Duration) -> Self {
        self.with(|i| i.step_timeout = limit)
    }

    /// How long a running step may go without a heartbeat before Temporal counts its worker
    /// as gone and gives the step to another (default 10 seconds). A step heartbeats every
    /// third of this while its model or tool call runs, so a long call is never cut short by
    /// it; what it bounds is how long a run waits on a worker that died mid-step, which
    /// without heartbeats is the whole [`step_timeout`](Self::step_timeout). Shorter
    /// recovers sooner and sends more heartbeats; a zero limit is read as one second.
    pub fn heartbeat_timeout(self, limit: Duration) -> Self {
        self.with(|i| i.heartbeat_timeout = limit.max(Duration::from_secs(1)))
    }

    /// How many attempts Temporal makes at a step that fails in a way worth retrying
    /// ([`ClientError::is_transient`](toolnexus::ClientError::is_transient): a network
    /// error, a timeout, a provider's 408, 409, 429 or 5xx), default 10. A step that fails
    /// otherwise (a refused key, a bad request) fails the run at once. These attempts take
    /// the place of the client's own [`retries`](toolnexus::LlmClientBuilder::retries),
    /// which a step runs without, so the two never multiply.
    pub fn max_attempts(self, attempts: u32) -> Self {
        self.with(|i| i.max_attempts = attempts.max(1))
    }

    /// After how many history events a run continues as new, carrying its transcript, at
    /// its next wait (default 2,000).
    pub fn continue_after(self, events: u32) -> Self {
        self.with(|i| i.continue_after = events.max(1))
    }

    fn with(self, set: impl FnOnce(&mut Inner)) -> Self {
        let mut inner = Arc::try_unwrap(self.inner).unwrap_or_else(|shared| Inner {
            client: shared.client.clone(),
            toolkit: shared.toolkit.clone(),
            step_timeout: shared.step_timeout,
            heartbeat_timeout: shared.heartbeat_timeout,
            max_attempts: shared.max_attempts,
            continue_after: shared.continue_after,
        });
        set(&mut inner);
        Agent {
            inner: Arc::new(inner),
        }
    }

    /// The agent's client.
    pub fn client(&self) -> &LlmClient {
        &self.inner.client
    }

    /// The agent's toolkit.
    pub fn toolkit(&self) -> &Toolkit {
        &self.inner.toolkit
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.inner.client.model())
            .field("step_timeout", &self.inner.step_timeout)
            .field("heartbeat_timeout", &self.inner.heartbeat_timeout)
            .field("max_attempts", &self.inner.max_attempts)
            .field("continue_after", &self.inner.continue_after)
            .finish_non_exhaustive()
    }
}
