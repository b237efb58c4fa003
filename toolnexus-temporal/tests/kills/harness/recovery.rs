//! Recovery: how soon a run carries on once its worker dies, with the agent's own timeouts
//! (a step's start-to-close timeout of minutes, its heartbeat timeout of seconds). Each
//! run has two workers on its task queue; the harness SIGKILLs the one holding the run at
//! one moment — its model call in flight, its purchase inside the effect, right after the
//! answer is taken — and leaves the other to finish it, without clearing the dead
//! worker's stickiness. The run must end within [`WITHIN`] of the kill, with one order.

use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;
use temporalio_common::protos::temporal::api::workflowservice::v1::GetWorkflowExecutionHistoryRequest;

use super::*;

/// How soon after its worker dies a run must end: the requirement, not a guess at how long
/// it takes.
pub const WITHIN: Duration = Duration::from_secs(30);

/// The moments a worker is killed at.
const MOMENTS: [Moment; 4] = [
    Moment::Model,
    Moment::BeforeEffect,
    Moment::AfterEffect,
    Moment::Answered,
];

/// Where the worker holding a run is killed.
#[derive(Clone, Copy, Debug)]
enum Moment {
    /// The first model call in flight (the model holds its reply).
    Model,
    /// Inside the approved purchase, before its order.
    BeforeEffect,
    /// Inside the approved purchase, its order placed, before the step completes.
    AfterEffect,
    /// Right after the answer is taken.
    Answered,
}

impl Moment {
    fn name(self) -> &'static str {
        match self {
            Moment::Model => "the model call in flight",
            Moment::BeforeEffect => "inside a purchase, before its effect",
            Moment::AfterEffect => "inside a purchase, after its effect",
            Moment::Answered => "right after an answer is taken",
        }
    }

    /// The tool point a worker stops at for this moment, if it is inside the tool.
    fn in_worker(self, item: &str) -> Option<String> {
        match self {
            Moment::BeforeEffect => Some(shop::before_effect(item)),
            Moment::AfterEffect => Some(shop::after_effect(item)),
            Moment::Model | Moment::Answered => None,
        }
    }
}

/// What one run showed.
#[derive(Debug)]
pub struct Recovery {
    pub moment: &'static str,
    /// From the kill to the run's result, or why it did not end well.
    pub outcome: Result<Duration, String>,
    /// Orders the approved purchase placed: one.
    pub orders: usize,
    /// Times the purchase ran (a second run under its key when the kill fell inside it).
    pub ran: usize,
}

impl Recovery {
    pub fn passed(&self) -> bool {
        self.orders == 1 && matches!(self.outcome, Ok(after) if after <= WITHIN)
    }
}

/// One of a run's two workers.
struct Serving {
    generation: u64,
    process: Child,
    input: ChildStdin,
}

impl Harness {
    /// Runs, at once, one run per moment, each killed there; what each showed.
    pub async fn recover(self) -> Vec<Recovery> {
        let runs = MOMENTS.iter().map(|&moment| self.recover_at(moment));
        let found = futures::future::join_all(runs).await;
        let _ = std::fs::remove_dir_all(self.book.dir());
        drop(self.model);
        found
    }

    async fn recover_at(&self, moment: Moment) -> Recovery {
        let queue = format!("{}-recovery-{moment:?}", self.tag);
        let workflow = format!("{queue}-0");
        let item = shop::item_of(&workflow, "gpu");
        let (events, mut received) = unbounded_channel();
        let mut workers: Vec<Serving> = (1..=2)
            .map(|generation| {
                let (process, input) =
                    self.worker_with(&queue, generation, &BTreeSet::new(), &events, true);
                Serving {
                    generation,
                    process,
                    input,
                }
            })
            .collect();
        lock(&self.calls).routes.insert(workflow.clone(), events);
        let outcome = self
            .kill_and_time(
                moment,
                &queue,
                &workflow,
                &item,
                &mut workers,
                &mut received,
            )
            .await;
        lock(&self.calls).routes.remove(&workflow);
        for worker in workers {
            stop_now(worker.process, worker.input).await;
        }
        let orders = self.book.placed().get(&item).map_or(0, Vec::len);
        let ran = self.book.ran().get(&item).copied().unwrap_or(0);
        let call = shop::call_of(&item);
        let outcome = outcome.and_then(|(after, result)| {
            let order = self
                .book
                .placed()
                .get(&item)
                .and_then(|o| o.first().cloned());
            let expected = shop::said_of(&call, &format!("ordered {}", order.unwrap_or_default()));
            if result.status == RunStatus::Done && result.text == expected {
                Ok(after)
            } else {
                Err(format!(
                    "ended {:?} saying {:?} where {expected:?}",
                    result.status, result.text
                ))
            }
        });
        Recovery {
            moment: moment.name(),
            outcome,
            orders,
            ran,
        }
    }

    /// Starts the run, kills the worker holding it at `moment`, and times the run from the
    /// kill to its result; the person approves the purchase whenever it waits.
    async fn kill_and_time(
        &self,
        moment: Moment,
        queue: &str,
        workflow: &str,
        item: &str,
        workers: &mut Vec<Serving>,
        received: &mut UnboundedReceiver<Event>,
    ) -> Result<(Duration, RunResult), String> {
        let runs = self.runs.clone().task_queue(queue.to_owned());
        let point = moment.in_worker(item);
        if let Some(point) = &point {
            arm_both(workers, received, point).await?;
        }
        if let Moment::Model = moment {
            lock(&self.calls).armed.insert((workflow.to_owned(), 0));
        }
        let names = ["gpu".to_owned()];
        runs.start(workflow, &shop::prompt(workflow, &names))
            .await
            .map_err(|e| format!("did not start: {e}"))?;
        let mut answered = false;
        let killed = match moment {
            Moment::Model => {
                let pid = loop {
                    match tokio::time::timeout(TO_WAIT, received.recv()).await {
                        Ok(Some(Event::Model { worker, .. })) => break worker,
                        Ok(Some(_)) => {}
                        Ok(None) | Err(_) => return Err("the model was never called".into()),
                    }
                };
                let pid = pid.ok_or("the model call names no worker")?;
                kill_pid(workers, pid).await?
            }
            Moment::BeforeEffect | Moment::AfterEffect => {
                approve(&runs, workflow).await?;
                answered = true;
                let stopped = loop {
                    match tokio::time::timeout(TO_WAIT, received.recv()).await {
                        Ok(Some(Event::Paused { generation, .. })) => break generation,
                        Ok(Some(_)) => {}
                        Ok(None) | Err(_) => return Err("no worker reached the purchase".into()),
                    }
                };
                let killed = kill_generation(workers, stopped).await?;
                // The survivor must not stop at the same point when the step comes to it.
                if let Some(point) = &point {
                    disarm(workers, received, point).await?;
                }
                killed
            }
            Moment::Answered => {
                approve(&runs, workflow).await?;
                answered = true;
                let pid = self.took_the_update(workflow).await?;
                kill_pid(workers, pid).await?
            }
        };
        let finish = async {
            if !answered {
                approve(&runs, workflow).await?;
            }
            runs.result(workflow).await.map_err(|e| e.to_string())
        };
        match tokio::time::timeout(WITHIN, finish).await {
            Ok(Ok(result)) => Ok((killed.elapsed(), result)),
            Ok(Err(why)) => Err(why),
            Err(_) => Err(format!("not ended within {WITHIN:?} of the kill")),
        }
    }

    /// The process of the worker whose workflow task completed the run's `answer` update.
    async fn took_the_update(&self, workflow: &str) -> Result<u32, String> {
        let request = GetWorkflowExecutionHistoryRequest {
            namespace: "default".to_owned(),
            execution: Some(WorkflowExecution {
                workflow_id: workflow.to_owned(),
                run_id: String::new(),
            }),
            ..Default::default()
        };
        let history = self
            .service
            .workflow_service()
            .get_workflow_execution_history(tonic::Request::new(request))
            .await
            .map_err(|e| format!("the run's history is not read: {e}"))?
            .into_inner()
            .history
            .ok_or("the run has no history")?;
        let mut identity = None;
        for event in history.events {
            match event.attributes {
                Some(Attributes::WorkflowTaskCompletedEventAttributes(task)) => {
                    identity = Some(task.identity);
                }
                Some(Attributes::WorkflowExecutionUpdateCompletedEventAttributes(_)) => break,
                _ => {}
            }
        }
        let identity = identity.ok_or("no workflow task completed the update")?;
        identity
            .rsplit_once('@')
            .and_then(|(_, pid)| pid.parse().ok())
            .ok_or_else(|| format!("worker identity `{identity}` names no process"))
    }
}

/// Arms `point` in every worker and waits until each has it.
async fn arm_both(
    workers: &mut [Serving],
    received: &mut UnboundedReceiver<Event>,
    point: &str,
) -> Result<(), String> {
    let mut waits = BTreeSet::new();
    for worker in workers.iter_mut() {
        tell(&mut worker.input, &format!("{ARM}{point}")).await?;
        waits.insert(worker.generation);
    }
    while !waits.is_empty() {
        match tokio::time::timeout(TO_ARM, received.recv()).await {
            Ok(Some(Event::Armed { generation, .. })) => {
                waits.remove(&generation);
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => return Err(format!("workers {waits:?} never armed")),
        }
    }
    Ok(())
}

/// Takes `point` back from every worker left and waits until each has let it go.
async fn disarm(
    workers: &mut [Serving],
    received: &mut UnboundedReceiver<Event>,
    point: &str,
) -> Result<(), String> {
    let mut waits = BTreeSet::new();
    for worker in workers.iter_mut() {
        tell(&mut worker.input, &format!("{}{point}", worker::DISARM)).await?;
        waits.insert(worker.generation);
    }
    while !waits.is_empty() {
        match tokio::time::timeout(TO_ARM, received.recv()).await {
            Ok(Some(Event::Disarmed {
                generation,
                point: taken,
            })) if taken == point => {
                waits.remove(&generation);
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => return Err(format!("workers {waits:?} never disarmed")),
        }
    }
    Ok(())
}

async fn tell(input: &mut ChildStdin, line: &str) -> Result<(), String> {
    input
        .write_all(format!("{line}\n").as_bytes())
        .await
        .map_err(|e| format!("a worker's input: {e}"))?;
    input
        .flush()
        .await
        .map_err(|e| format!("a worker's input: {e}"))
}

/// SIGKILLs the worker of process `pid`, and removes it from `workers`; when it died.
async fn kill_pid(workers: &mut Vec<Serving>, pid: u32) -> Result<Instant, String> {
    let at = workers
        .iter()
        .position(|w| w.process.id() == Some(pid))
        .ok_or_else(|| format!("no worker of the run has process {pid}"))?;
    kill_at(workers, at).await
}

/// SIGKILLs the worker of `generation`, and removes it from `workers`; when it died.
async fn kill_generation(workers: &mut Vec<Serving>, generation: u64) -> Result<Instant, String> {
    let at = workers
        .iter()
        .position(|w| w.generation == generation)
        .ok_or_else(|| format!("no worker of the run is number {generation}"))?;
    kill_at(workers, at).await
}

async fn kill_at(workers: &mut Vec<Serving>, at: usize) -> Result<Instant, String> {
    let mut worker = workers.remove(at);
    // tokio's kill is SIGKILL on Unix, and waits for the process to die.
    worker
        .process
        .kill()
        .await
        .map_err(|e| format!("the worker is not killed: {e}"))?;
    Ok(Instant::now())
}

/// Approves the purchase the run waits on.
async fn approve(runs: &Runs, workflow: &str) -> Result<(), String> {
    let waiting = waiting(runs, workflow).await?;
    for request in &waiting {
        give(runs, workflow, &Answer::ok(&request.id)).await?;
    }
    Ok(())
}

/// Stops a worker at once: its run has ended, and nothing of it is wanted.
async fn stop_now(mut process: Child, input: ChildStdin) {
    drop(input);
    let _ = process.kill().await;
}
