//! The runtime's loop before issue 23, in three modules.

mod controller;
mod sched;
