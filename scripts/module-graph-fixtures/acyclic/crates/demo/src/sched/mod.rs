mod queues;

// queues::RunQueues in a comment, and "queues::RunQueues" in a string.
pub fn start() -> queues::RunQueues {
    let _ = "crate::sched::queues::RunQueues";
    queues::RunQueues
}
