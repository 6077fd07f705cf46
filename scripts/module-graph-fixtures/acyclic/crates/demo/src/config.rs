// Names only what the root re-exports: `crate::Config` from elsewhere
// must point here, not at the root (which points here), or the root and
// this file would read as a loop.
pub struct Config {
    pub workers: usize,
}

pub fn workers() -> usize {
    crate::pick!(4)
}
