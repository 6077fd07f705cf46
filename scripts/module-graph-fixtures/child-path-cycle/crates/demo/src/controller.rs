use crate::sched::Readiness;

pub struct Controller {
    pub readiness: Option<Readiness>,
}
