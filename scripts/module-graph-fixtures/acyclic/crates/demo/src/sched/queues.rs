use crate::controller::{Controller, Wake};
use crate::engine::Engine;

pub struct RunQueues;

impl Wake for RunQueues {
    fn ready(&self, _idx: usize) {}
}

impl RunQueues {
    pub fn run(&self, ctl: &Controller, e: &Engine) -> usize {
        e.serve(ctl)
    }
}
