//! A DAG application for tests of DAG triggers: it counts its own runs.

use crate::dag::{DagApp, Local};
use crate::env::{View, ViewAccess};

/// How many times [`Tick`] ran and committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticks(pub u64);

impl View for Ticks {
    const NAME: &'static str = "ticks";
}

/// Counts its runs in the [`Ticks`] view (reads it, writes it plus one).
pub struct Tick;

impl DagApp for Tick {
    fn name(&self) -> &str {
        "tick"
    }

    fn views(&self) -> ViewAccess {
        ViewAccess::none().reads::<Ticks>().writes::<Ticks>()
    }

    fn run(&self, local: &mut Local<'_>) -> Result<(), String> {
        let n = local.read::<Ticks>().map_or(0, |t| t.0);
        local.write(Ticks(n + 1))
    }
}
