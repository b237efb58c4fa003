//! [`AgentWorker`]: a Temporal worker that runs an [`Agent`]'s `AgentRun` workflows and
//! their step activities.

use std::future::Future;
use std::pin::Pin;

use temporalio_sdk::{Runtime, Worker, WorkerOptions};

use crate::activity::Steps;
use crate::agent::Agent;
use crate::connect::Connection;
use crate::error::TemporalError;
use crate::workflow::AgentRun;

/// The task queue a worker serves unless told otherwise.
pub const TASK_QUEUE: &str = "toolnexus";

/// A worker for one agent on one task queue.
///
/// ```no_run
/// use toolnexus::{LlmClient, Toolkit};
/// use toolnexus_temporal::{Agent, AgentWorker, Connection};
///
/// # async fn serve(client: LlmClient, tk: Toolkit) -> Result<(), toolnexus_temporal::TemporalError> {
/// let agent = Agent::new(client, tk);
/// let worker = AgentWorker::new(agent, Connection::new("127.0.0.1:7233"));
/// worker.task_queue("shop").run().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct AgentWorker {
    agent: Agent,
    connection: Connection,
    task_queue: String,
    #[cfg(feature = "inbox")]
    inbox: Option<toolnexus_inbox::Inbox>,
}

impl AgentWorker {
    /// A worker running `agent` on the server `connection` names, on task queue
    /// [`TASK_QUEUE`].
    pub fn new(agent: Agent, connection: Connection) -> Self {
        AgentWorker {
            agent,
            connection,
            task_queue: TASK_QUEUE.to_owned(),
            #[cfg(feature = "inbox")]
            inbox: None,
        }
    }

    /// Keeps every run's waits in `inbox` too, so they are answered on its page and at its
    /// doors as well as through the `answer` update, and hands the answers given there to
    /// the runs, each once. Give the inbox an agent name of its own
    /// ([`InboxBuilder::agent`](toolnexus_inbox::InboxBuilder::agent)) that no model
    /// worker resumes for; every worker on the task queue must be given one, the same.
    #[cfg(feature = "inbox")]
    pub fn inbox(mut self, inbox: toolnexus_inbox::Inbox) -> Self {
        self.inbox = Some(inbox);
        self
    }

    /// The task queue to serve.
    pub fn task_queue(mut self, queue: impl Into<String>) -> Self {
        self.task_queue = queue.into();
        self
    }

    /// Serves until the process ends or `shutdown` resolves; in-flight steps finish first.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), TemporalError> {
        self.serve(Box::pin(shutdown)).await
    }

    /// The worker itself. Its set-up instantiates the SDK's generic worker, workflow and
    /// activity machinery; kept out of the generic [`run_until`](Self::run_until), that code
    /// is compiled once, in this crate, rather than again in every program that passes a
    /// signal of its own.
    async fn serve(
        self,
        shutdown: Pin<Box<dyn Future<Output = ()> + Send>>,
    ) -> Result<(), TemporalError> {
        if !self.connection.encrypts() {
            tracing::warn!(
                "Temporal payloads are not encrypted: a run's history keeps its transcript and \
                 its answers (a sign-in's token among them) in clear; give the worker a codec key"
            );
        }
        let client = self.connection.client().await?;
        let runtime = Runtime::from_current_tokio(Default::default())
            .map_err(|e| TemporalError::Worker(e.to_string()))?;
        let agent = self.agent.clone();
        #[cfg_attr(not(feature = "inbox"), allow(unused_mut))]
        let mut options = WorkerOptions::new(self.task_queue.clone()).register_activities(Steps {
            agent: self.agent.clone(),
        });
        #[cfg(feature = "inbox")]
        let parks = self.inbox.is_some();
        #[cfg(not(feature = "inbox"))]
        let parks = false;
        #[cfg(feature = "inbox")]
        if let Some(inbox) = &self.inbox {
            options = options.register_activities(crate::inbox::parking::Parking {
                inbox: inbox.clone(),
            });
        }
        let options = options
            .register_workflow_with_factory::<AgentRun, _>(move || {
                let mut run = AgentRun::new(agent.clone());
                run.parks = parks;
                run
            })
            .map_err(|e| TemporalError::Worker(e.to_string()))?
            .build();
        let mut worker = Worker::new(&runtime, client.clone(), options)
            .map_err(|e| TemporalError::Worker(e.to_string()))?;
        let stop = worker.shutdown_handle();
        #[cfg(feature = "inbox")]
        let (stopped, forwarder_stop) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            shutdown.await;
            #[cfg(feature = "inbox")]
            let _ = stopped.send(true);
            stop();
        });
        #[cfg(feature = "inbox")]
        if let Some(inbox) = self.inbox {
            let mut stop = forwarder_stop;
            tokio::spawn(crate::inbox::forward::forward(inbox, client, async move {
                let _ = stop.wait_for(|stopped| *stopped).await;
            }));
        }
        worker
            .run()
            .await
            .map_err(|e| TemporalError::Worker(e.to_string()))
    }

    /// Serves until the process is asked to stop: Ctrl-C (SIGINT), or SIGTERM on Unix (what
    /// a service manager or a container runtime sends). The worker then stops polling for
    /// new tasks, lets its in-flight steps finish, and returns `Ok`; a run it was in the
    /// middle of carries on, from its history, at another worker or once one starts again.
    /// [`run_until`](Self::run_until) takes a signal of your own instead.
    pub async fn run(self) -> Result<(), TemporalError> {
        self.serve(Box::pin(stop_signal())).await
    }
}

/// Resolves at the first Ctrl-C or SIGTERM. A handler that cannot be installed leaves that
/// signal to its default (ending the process), rather than stopping the worker at once.
async fn stop_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("Ctrl-C: the worker stops once its steps in flight finish"),
        () = terminate => tracing::info!("SIGTERM: the worker stops once its steps in flight finish"),
    }
}
