//! Each user's porter: a task on the runtime that sends the user's steps one after another and
//! hands each answer back to the script worker, so a step needs no task (nor a boxed request
//! future) of its own, as a plain closed-loop user needs none. A sub-agent running beside its
//! session (`s.parallel`) sends each step on a task of its own, as its steps go out together.

use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::phase::PhaseShared;
use super::replies::Reply;
use crate::client::HttpClient;
use crate::load::scripted::{Step, StepAnswer, send_step};

/// A step for a porter to send over `client` (None: the run's own).
pub struct StepOrder {
    pub client: Option<Arc<HttpClient>>,
    pub step: Step,
}

/// A porter's queue: its user's next steps, one at a time in practice.
pub struct Porter(UnboundedSender<(StepOrder, Reply)>);

impl Porter {
    /// Start a porter for the phase's steps on its runtime; it ends when its queue is dropped.
    pub fn start(shared: Arc<PhaseShared>) -> Self {
        let (orders_tx, mut orders) = unbounded_channel::<(StepOrder, Reply)>();
        let runtime = shared.runtime.clone();
        runtime.spawn(async move {
            while let Some((order, reply)) = orders.recv().await {
                reply.send(Box::new(answer_of(&shared, order).await));
            }
        });
        Porter(orders_tx)
    }

    /// Queue `order`; a porter that has ended drops it with its reply, which says so.
    pub fn send(&self, order: StepOrder, reply: Reply) {
        let _ = self.0.send((order, reply));
    }
}

/// Send `order` on a task of its own and hand its answer back by `reply`.
pub fn send_alone(shared: Arc<PhaseShared>, order: StepOrder, reply: Reply) {
    let runtime = shared.runtime.clone();
    runtime.spawn(async move { reply.send(Box::new(answer_of(&shared, order).await)) });
}

async fn answer_of(shared: &PhaseShared, StepOrder { client, step }: StepOrder) -> StepAnswer {
    let phase = &shared.phase;
    send_step(client.as_deref(), &phase.ctx, &phase.run, phase.deadlines, step).await
}
