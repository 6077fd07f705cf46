// A `#[macro_export]` macro is named `crate::pick!` but lives here: read
// as the root, `config` -> root -> `config` would be a loop.
#[macro_export]
macro_rules! pick {
    ($e:expr) => {
        $e
    };
}
