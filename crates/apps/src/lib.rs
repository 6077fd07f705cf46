//! # baton-apps: applications that run on the baton runtime
//!
//! - [`Hub`]: floods every packet (the smallest useful controller).
//! - [`LearningSwitch`]: McNettle's local learning controller (seed 001
//!   §4.1): each switch learns MAC -> port in a table of its own, kept as
//!   switch-local state, so it needs no synchronisation.
//! - [`GlobalLearningSwitch`]: McNettle's global learning controller
//!   (§4.2): one host table shared by every switch, sharded under
//!   read-write locks.
//!
//! [`by_name`] builds an application from its command-line name.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod hub;
mod learning;

pub use hub::Hub;
pub use learning::{GlobalLearningSwitch, LearningConfig, LearningSwitch};

use baton_runtime::App;
use std::sync::Arc;

/// The names [`by_name`] knows.
pub const NAMES: &[&str] = &["hub", "learning-switch", "global-learning-switch"];

/// Builds the application called `name`.
pub fn by_name(name: &str) -> Result<Arc<dyn App>, String> {
    match name {
        "hub" => Ok(Arc::new(Hub)),
        "learning-switch" => Ok(Arc::new(LearningSwitch::new(LearningConfig::default()))),
        "global-learning-switch" => Ok(Arc::new(GlobalLearningSwitch::new(
            LearningConfig::default(),
        ))),
        other => Err(format!(
            "unknown application {other:?}; one of: {}",
            NAMES.join(", ")
        )),
    }
}
