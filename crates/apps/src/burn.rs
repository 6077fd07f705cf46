//! A pipeline stage that burns CPU: a stand-in for an expensive
//! application, so that a small machine can overload baton in the fairness
//! and latency experiments (Maestro §4 overloads a 7-core controller with
//! four emulator machines; we have one core for the emulator). Every
//! benchmark figure taken with it names it, e.g. `--apps burn:2000,learning-switch`.

use baton_runtime::{App, PacketInBatch, SwitchCtx};
use std::time::{Duration, Instant};

/// Spins for a fixed time per PACKET_IN, then passes it on.
#[derive(Debug, Clone, Copy)]
pub struct Burn {
    per_request: Duration,
}

impl Burn {
    /// Burns `per_request` of CPU per PACKET_IN.
    pub fn new(per_request: Duration) -> Burn {
        Burn { per_request }
    }
}

impl App for Burn {
    type Switch = ();

    fn name(&self) -> &str {
        "burn"
    }

    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}

    fn packet_in(&self, batch: &mut PacketInBatch<'_, ()>) {
        let per = self.per_request;
        batch.for_each(|_, _, _| {
            let start = Instant::now();
            while start.elapsed() < per {
                std::hint::spin_loop();
            }
        });
    }
}
