mod surplus;

use crate::controller::Controller;

pub struct Engine {
    pub credit: surplus::Credit,
}

impl Engine {
    pub fn serve(&self, ctl: &Controller) -> usize {
        ctl.config.workers
    }
}
