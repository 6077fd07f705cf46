// A child calling back into its parent: one module in two files.
pub struct Credit(pub usize);

pub fn spend(e: &super::Engine) -> usize {
    e.credit.0
}
