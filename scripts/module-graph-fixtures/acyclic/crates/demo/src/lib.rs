//! The same modules without the loop, and what must not read as one.

mod config;
mod controller;
mod engine;
mod sched;
mod util;

pub use config::Config;
pub use controller::Controller;
