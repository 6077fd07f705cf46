use crate::controller::Controller;

pub struct RunQueues;

impl RunQueues {
    pub fn run(&self, _ctl: &Controller) {}
}
