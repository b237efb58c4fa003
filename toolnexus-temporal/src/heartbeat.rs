//! A step activity's heartbeat: while the step runs (a model call, a tool), a task of its
//! own tells Temporal the worker is alive. A worker that dies stops heartbeating, and
//! Temporal gives the step to another worker once the heartbeat timeout passes, rather than
//! once the whole start-to-close timeout has.

use std::time::Duration;

use temporalio_sdk::activities::ActivityContext;
use tokio::task::JoinHandle;

/// How many heartbeats go out per heartbeat timeout: one lost or late still leaves two.
const PER_TIMEOUT: u32 = 3;

/// The heartbeats of one activity attempt, sent until this is dropped.
pub(crate) struct Heartbeat {
    task: Option<JoinHandle<()>>,
}

impl Heartbeat {
    /// Starts heartbeating for the attempt `ctx` runs, every third of its heartbeat
    /// timeout; an attempt scheduled without one (a history from before heartbeats) sends
    /// none. The heartbeats run on a task of their own, so a tool that holds its thread
    /// does not silence them while its process lives.
    pub(crate) fn start(ctx: &ActivityContext) -> Heartbeat {
        let every = ctx
            .info()
            .heartbeat_timeout
            .filter(|timeout| !timeout.is_zero())
            .map(|timeout| timeout / PER_TIMEOUT);
        let task = every.map(|every| {
            let ctx = ctx.clone();
            tokio::spawn(beat(ctx, every))
        });
        Heartbeat { task }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn beat(ctx: ActivityContext, every: Duration) {
    loop {
        // The heartbeat timeout counts from the attempt's start, so the first heartbeat
        // waits a third of it too: the worker's core forwards a first heartbeat to the
        // server at once, and a step that ends sooner (most do) then costs no request.
        tokio::time::sleep(every).await;
        if let Err(e) = ctx.record_heartbeat(()).await {
            // Only a failed conversion of `()` could fail here: nothing a retry mends.
            tracing::warn!("a step's heartbeat could not be sent: {e}");
            return;
        }
    }
}
