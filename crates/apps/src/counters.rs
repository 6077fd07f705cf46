//! [`named_counters!`]: an application's counts of what it has done,
//! declared once as a list of names: the handlers bump atomics without a
//! lock, tests and the operator read a plain snapshot, each count under
//! its field's name (`App::counters`).

/// Declares two structs with the same fields, in this order:
/// - `$snapshot`, with `$vis` visibility, a `Copy` struct of `u64` counts
///   with `named()`, each count with its name, for `App::counters`;
/// - `$live`, private, the same fields as `AtomicU64`s for the handlers to
///   bump (`fetch_add(1, Relaxed)`), with `snapshot()`.
///
/// ```ignore
/// named_counters! {
///     /// What host tracking has done.
///     pub struct DevicesCounters, live Counters {
///         /// Hosts learnt.
///         learnt,
///     }
/// }
/// ```
macro_rules! named_counters {
    (
        $(#[$meta:meta])*
        $vis:vis struct $snapshot:ident, live $live:ident {
            $( $(#[$field_meta:meta])* $field:ident ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        $vis struct $snapshot {
            $( $(#[$field_meta])* pub $field: u64, )*
        }

        impl $snapshot {
            /// Each counter with its name.
            pub fn named(&self) -> Vec<(&'static str, u64)> {
                vec![$( (stringify!($field), self.$field) ),*]
            }
        }

        /// The counters as the handlers bump them, without a lock.
        #[derive(Default)]
        struct $live {
            $( $field: std::sync::atomic::AtomicU64, )*
        }

        impl $live {
            /// The counts now, each read on its own.
            fn snapshot(&self) -> $snapshot {
                use std::sync::atomic::Ordering::Relaxed;
                $snapshot { $( $field: self.$field.load(Relaxed), )* }
            }
        }
    };
}

pub(crate) use named_counters;

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    named_counters! {
        /// Two counts.
        struct Example, live Live {
            /// One.
            one,
            /// Two.
            two,
        }
    }

    #[test]
    fn a_snapshot_names_each_count_in_order() {
        let live = Live::default();
        live.two.fetch_add(2, Ordering::Relaxed);
        live.one.fetch_add(1, Ordering::Relaxed);
        let now = live.snapshot();
        assert_eq!(now, Example { one: 1, two: 2 });
        assert_eq!(now.named(), vec![("one", 1), ("two", 2)]);
    }
}
