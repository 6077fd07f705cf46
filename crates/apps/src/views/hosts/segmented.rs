//! A vector that never moves what it holds: [`Segmented`], the host
//! table's entries.
//!
//! `Vec` doubles by copying everything it holds, so the host that makes
//! a shard's entries outgrow their vector paid for moving every other:
//! callgrind counted 1,100 instructions per new host in `realloc`'s
//! copies while 100,000 hosts joined 1,000,000 (`scripts/bench/host-learning.sh`),
//! against none while they joined 1,000. Here segment `k` holds
//! `FIRST << k` items and is allocated when the one before is full, so a
//! push writes one item, whatever the length (the segmented array of
//! Brodnik et al.'s "Resizable arrays in optimal time and space", with
//! doubling segments; no crate offers `swap_remove` on one).

/// Items in the first segment.
const FIRST: usize = 16;

/// A growable array in segments of doubling size; items stay where they
/// were put.
#[derive(Debug)]
pub(super) struct Segmented<T> {
    segments: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Segmented<T> {
    fn default() -> Self {
        Segmented {
            segments: Vec::new(),
            len: 0,
        }
    }
}

/// The segment and offset of item `i`.
#[inline]
fn locate(i: usize) -> (usize, usize) {
    let j = i + FIRST;
    let top = (usize::BITS - 1 - j.leading_zeros()) as usize;
    let k = top - FIRST.trailing_zeros() as usize;
    (k, j - (1 << top))
}

impl<T> Segmented<T> {
    /// How many items it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Appends `item`.
    pub fn push(&mut self, item: T) {
        let (k, _) = locate(self.len);
        if k == self.segments.len() {
            self.segments.push(Vec::with_capacity(FIRST << k));
        }
        self.segments[k].push(item);
        self.len += 1;
    }

    /// Item `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        let (k, o) = locate(i);
        self.segments[k].get(o)
    }

    /// Item `i`, to change.
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        let (k, o) = locate(i);
        self.segments[k].get_mut(o)
    }

    /// Takes item `i` out and puts the last in its place (`Vec::swap_remove`).
    pub fn swap_remove(&mut self, i: usize) -> Option<T> {
        if i >= self.len {
            return None;
        }
        let (k, _) = locate(self.len - 1);
        let last = self.segments[k].pop()?;
        if self.segments[k].is_empty() && k + 1 < self.segments.len() {
            // Keep one empty segment for the next push, not more.
            self.segments.truncate(k + 1);
        }
        self.len -= 1;
        if i == self.len {
            return Some(last);
        }
        self.get_mut(i).map(|slot| std::mem::replace(slot, last))
    }

    /// Every item, in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.segments.iter().flatten()
    }
}

impl<T> std::ops::Index<usize> for Segmented<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        self.get(i).expect("an index below the length")
    }
}

impl<T> std::ops::IndexMut<usize> for Segmented<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        self.get_mut(i).expect("an index below the length")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn segments_double() {
        assert_eq!(locate(0), (0, 0));
        assert_eq!(locate(15), (0, 15));
        assert_eq!(locate(16), (1, 0));
        assert_eq!(locate(47), (1, 31));
        assert_eq!(locate(48), (2, 0));
    }

    #[test]
    fn items_stay_where_they_were_put() {
        let mut s = Segmented::default();
        s.push(0u32);
        let at = s.get(0).map(|r| r as *const u32);
        for i in 1..10_000 {
            s.push(i);
        }
        assert_eq!(s.get(0).map(|r| r as *const u32), at);
    }

    proptest! {
        /// Pushes and swap_removes do what they do to a `Vec`.
        #[test]
        fn behaves_as_a_vec(ops in proptest::collection::vec((any::<bool>(), 0usize..400), 0..600)) {
            let (mut s, mut v) = (Segmented::default(), Vec::new());
            for (n, (push, i)) in ops.into_iter().enumerate() {
                if push || v.is_empty() {
                    s.push(n);
                    v.push(n);
                } else {
                    let i = i % v.len();
                    prop_assert_eq!(s.swap_remove(i), Some(v.swap_remove(i)));
                }
                prop_assert_eq!(s.len(), v.len());
            }
            prop_assert!(s.iter().eq(v.iter()));
            prop_assert_eq!(s.get(v.len()), None);
            prop_assert_eq!(s.swap_remove(v.len()), None);
        }
    }
}
