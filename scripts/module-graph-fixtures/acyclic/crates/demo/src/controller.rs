use crate::Config;

pub trait Wake {
    fn ready(&self, idx: usize);
}

pub struct Controller {
    pub config: Config,
    pub wake: Option<std::sync::Arc<dyn Wake>>,
}

mod consts {
    // `super` here is `controller`: read as the root, `controller` -> root
    // -> `controller` would be a loop.
    pub const FIRST: usize = super::super::config::workers();
    pub use super::Wake as Waker;
}
