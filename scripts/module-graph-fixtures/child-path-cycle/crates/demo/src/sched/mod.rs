mod queues;

use std::sync::Arc;

pub enum Readiness {
    Queues(Arc<queues::RunQueues>),
}
