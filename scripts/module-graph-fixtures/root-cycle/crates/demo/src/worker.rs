pub fn run(_shared: &crate::Shared) {}
