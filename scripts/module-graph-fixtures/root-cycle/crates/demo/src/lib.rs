//! The crate root is every module's ancestor, so a loop through it is never
//! one module's own affair: `worker` names `crate::Shared`, defined here,
//! and the root re-exports `worker::run`.

mod worker;

pub use worker::run;

pub struct Shared;
