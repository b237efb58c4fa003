//! A lane's worker processes: starting one, arming it at tool points, killing it where the
//! plan says and starting the next, clearing a dead worker's stickiness, and disarming a
//! worker whose points were never reached.

use super::*;

impl Harness {
    /// Starts a worker (this binary) on `queue`, stopping at the `armed` tool points; its
    /// announcements go to `events`.
    pub(super) fn worker(
        &self,
        queue: &str,
        generation: u64,
        armed: &BTreeSet<String>,
        events: &UnboundedSender<Event>,
    ) -> (Child, ChildStdin) {
        self.worker_with(queue, generation, armed, events, false)
    }

    /// [`worker`](Self::worker), with the agent's own step and heartbeat timeouts when
    /// `defaults`.
    pub(super) fn worker_with(
        &self,
        queue: &str,
        generation: u64,
        armed: &BTreeSet<String>,
        events: &UnboundedSender<Event>,
        defaults: bool,
    ) -> (Child, ChildStdin) {
        let exe = std::env::current_exe().expect("the harness has a path");
        let armed: Vec<&str> = armed.iter().map(String::as_str).collect();
        let mut command = Command::new(exe);
        if defaults {
            command.env(worker::DEFAULTS, "1");
        }
        let mut child = command
            .env(worker::ADDRESS, &self.address)
            .env(worker::QUEUE, queue)
            .env(worker::MODEL, self.model.base_url())
            .env(worker::BOOK, self.book.dir())
            .env(worker::AT, armed.join("\n"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the worker starts");
        let input = child.stdin.take().expect("the worker's input");
        let out = child.stdout.take().expect("the worker's output");
        let events = events.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(out).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let event = if let Some(point) = line.strip_prefix(PAUSED_AT) {
                    let point = point.to_owned();
                    Event::Paused { generation, point }
                } else if let Some(point) = line.strip_prefix(ARMED) {
                    let point = point.to_owned();
                    Event::Armed { generation, point }
                } else if let Some(point) = line.strip_prefix(DISARMED) {
                    let point = point.to_owned();
                    Event::Disarmed { generation, point }
                } else {
                    continue;
                };
                let _ = events.send(event);
            }
        });
        (child, input)
    }

    /// Arms the lane's worker at `points` and waits until it has them.
    pub(super) async fn arm(
        &self,
        lane: &SharedLane,
        received: &mut UnboundedReceiver<Event>,
        points: BTreeSet<String>,
    ) {
        let generation = {
            let mut lane = lane.lock().await;
            for point in &points {
                lane.armed.insert(point.clone());
                let line = format!("{ARM}{point}\n");
                lane.input
                    .write_all(line.as_bytes())
                    .await
                    .expect("the worker takes a point");
            }
            lane.input
                .flush()
                .await
                .expect("the worker takes its points");
            lane.generation
        };
        let mut waits = points;
        while !waits.is_empty() {
            match tokio::time::timeout(TO_ARM, received.recv()).await {
                Ok(Some(Event::Armed {
                    generation: g,
                    point,
                })) if g == generation => {
                    waits.remove(&point);
                }
                // What an earlier run's workers said late.
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => panic!("the worker never armed {waits:?}"),
            }
        }
    }

    /// SIGKILLs the lane's worker at `point` and starts the next one.
    pub(super) async fn kill(&self, lane: &SharedLane, plan: &Plan, point: &Point) {
        let mut lane = lane.lock().await;
        // tokio's kill is SIGKILL on Unix, and waits for the process to die.
        lane.worker.kill().await.expect("SIGKILL the worker");
        if !plan.sticky {
            self.unstick(&plan.workflow).await;
        }
        lane.kills.push(point.kind());
        self.kills.fetch_add(1, Ordering::SeqCst);
        if let Some(name) = point.in_worker() {
            lane.armed.remove(&name);
        }
        lane.generation += 1;
        let (worker, input) = self.worker(&lane.queue, lane.generation, &lane.armed, &lane.events);
        lane.worker = worker;
        lane.input = input;
    }

    /// Clears run `workflow`'s stickiness to its dead worker.
    pub(super) async fn unstick(&self, workflow: &str) {
        let request = ResetStickyTaskQueueRequest {
            namespace: "default".to_owned(),
            execution: Some(WorkflowExecution {
                workflow_id: workflow.to_owned(),
                run_id: String::new(),
            }),
        };
        self.service
            .workflow_service()
            .reset_sticky_task_queue(tonic::Request::new(request))
            .await
            .unwrap_or_else(|e| panic!("{workflow}: its stickiness is not cleared: {e}"));
    }

    /// Kills at the points inside a tool and at the model calls, as the run reaches them.
    pub(super) async fn on_events(
        &self,
        lane: &SharedLane,
        plan: &Plan,
        received: &mut UnboundedReceiver<Event>,
    ) {
        while let Some(event) = received.recv().await {
            let point = match event {
                Event::Model { workflow, turn, .. } if workflow == plan.workflow => {
                    Point::Model(turn)
                }
                Event::Paused { generation, point }
                    // A worker already killed may have stopped at a second point; the next
                    // worker stops there again.
                    if generation == lane.lock().await.generation =>
                {
                    match plan.kills.iter().find(|p| p.in_worker().as_ref() == Some(&point)) {
                        Some(p) => p.clone(),
                        None => panic!("a worker stopped at `{point}`, which no plan names"),
                    }
                }
                _ => continue,
            };
            self.kill(lane, plan, &point).await;
        }
    }

    /// Replaces the lane's worker with an unarmed one if a point of the run it served was
    /// never reached (a purchase that never ran, which the count reports).
    pub(super) async fn disarm(&self, lane: &SharedLane) {
        let mut lane = lane.lock().await;
        if lane.armed.is_empty() {
            return;
        }
        lane.armed.clear();
        lane.generation += 1;
        let (worker, input) = self.worker(&lane.queue, lane.generation, &lane.armed, &lane.events);
        let mut old = std::mem::replace(&mut lane.worker, worker);
        let old_input = std::mem::replace(&mut lane.input, input);
        stop(&mut old, old_input).await;
    }
}
