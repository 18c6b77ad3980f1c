//! Storage for the graph's per-state vectors and its edge string that grows
//! without copying: fixed-size pages, a new one allocated when the last is
//! full, none ever moved. A vector that doubles copies everything it holds
//! at each growth and holds both copies meanwhile; with hundreds of
//! megabytes of edges that was a quarter of the recording's time, and the
//! peak of a large liveness run.

use std::ops::Index;

/// Elements a page of [`Pages`] holds: 64 Ki (256 KiB of `u32`).
const PAGE_SHIFT: u32 = 16;
const PAGE_LEN: usize = 1 << PAGE_SHIFT;
const PAGE_MASK: usize = PAGE_LEN - 1;

/// A vector of `Copy` elements in pages of [`PAGE_LEN`]: `push` never
/// moves an element, indexing costs one more load (the page table is small
/// enough to stay in the cache).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pages<T> {
    pages: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Pages<T> {
    fn default() -> Self {
        Self {
            pages: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Copy> Pages<T> {
    /// The elements held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `value`, starting a page when the last one is full.
    pub(crate) fn push(&mut self, value: T) {
        if self.len & PAGE_MASK == 0 {
            self.pages.push(Vec::with_capacity(PAGE_LEN));
        }
        // A page was just pushed if none had room.
        if let Some(page) = self.pages.last_mut() {
            page.push(value);
        }
        self.len += 1;
    }

    /// The element at `index`, if there is one.
    pub(crate) fn get(&self, index: usize) -> Option<T> {
        (index < self.len).then(|| self.pages[index >> PAGE_SHIFT][index & PAGE_MASK])
    }

    /// Elements the pages have room for.
    pub(crate) fn capacity(&self) -> usize {
        self.pages.iter().map(Vec::capacity).sum()
    }

    /// Gives back the last page's unused room (the others are full).
    pub(crate) fn shrink_to_fit(&mut self) {
        if let Some(page) = self.pages.last_mut() {
            page.shrink_to_fit();
        }
        self.pages.shrink_to_fit();
    }
}

impl<T: Copy> Index<usize> for Pages<T> {
    type Output = T;

    fn index(&self, index: usize) -> &T {
        assert!(index < self.len, "index {index} of {} elements", self.len);
        &self.pages[index >> PAGE_SHIFT][index & PAGE_MASK]
    }
}

/// Bytes a page of [`Strings`] holds: 1 MiB, more than any state's edge
/// string (at most 65,535 actions of at most 8 bytes each, and its count).
const STRING_PAGE_SHIFT: u32 = 20;
const STRING_PAGE: usize = 1 << STRING_PAGE_SHIFT;

/// Byte strings, one after another, each kept whole in one page of
/// [`STRING_PAGE`] bytes: a string that does not fit in the last page's
/// room starts the next page, and the room left is not used. A string is
/// known by where it starts, a `u32` position (its page times the page
/// size, plus its place in the page), and ends where the next string
/// starts, or at the end of its page's bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Strings {
    pages: Vec<Vec<u8>>,
}

impl Strings {
    /// Appends `bytes` as one string and returns where it starts, or
    /// stores nothing and returns `None` if it would end past the last
    /// `u32` position (4 GiB).
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Option<u32> {
        assert!(bytes.len() <= STRING_PAGE, "a string longer than a page");
        let (page, used) = match self.pages.last() {
            Some(last) if last.len() + bytes.len() <= STRING_PAGE => {
                (self.pages.len() - 1, last.len())
            }
            Some(_) => (self.pages.len(), 0),
            None => (0, 0),
        };
        let start = (page << STRING_PAGE_SHIFT) + used;
        u32::try_from(start + bytes.len()).ok()?;
        if page == self.pages.len() {
            self.pages.push(Vec::with_capacity(STRING_PAGE));
        }
        self.pages[page].extend_from_slice(bytes);
        u32::try_from(start).ok()
    }

    /// The position just past the last string's last byte (0 when there is
    /// none): an empty string's start.
    pub(crate) fn end(&self) -> u32 {
        self.pages.last().map_or(0, |last| {
            // Every byte stored ends below 4 GiB of positions (`push`).
            (((self.pages.len() - 1) << STRING_PAGE_SHIFT) + last.len()) as u32
        })
    }

    /// The string that starts at `start` and ends where the `next` one
    /// starts, or at the end of its page's bytes if the next starts on a
    /// later page or there is none.
    pub(crate) fn get(&self, start: u32, next: Option<u32>) -> &[u8] {
        let start = start as usize;
        let Some(page) = self.pages.get(start >> STRING_PAGE_SHIFT) else {
            // An empty string past everything stored.
            return &[];
        };
        let from = start & (STRING_PAGE - 1);
        let to = match next {
            Some(next) if next as usize >> STRING_PAGE_SHIFT == start >> STRING_PAGE_SHIFT => {
                next as usize & (STRING_PAGE - 1)
            }
            _ => page.len(),
        };
        &page[from..to]
    }

    /// Bytes the pages have room for, the room left at the ends of full
    /// pages included.
    pub(crate) fn capacity(&self) -> usize {
        self.pages.iter().map(Vec::capacity).sum()
    }

    /// Gives back the last page's unused room.
    pub(crate) fn shrink_to_fit(&mut self) {
        if let Some(page) = self.pages.last_mut() {
            page.shrink_to_fit();
        }
        self.pages.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_hold_what_was_pushed_across_page_boundaries() {
        let mut pages = Pages::default();
        assert!(pages.is_empty() && pages.get(0).is_none());
        let n = 3 * PAGE_LEN + 5;
        for i in 0..n {
            pages.push(i as u32);
        }
        assert_eq!(pages.len(), n);
        assert!((0..n).all(|i| pages[i] == i as u32 && pages.get(i) == Some(i as u32)));
        assert_eq!(pages.get(n), None);
        assert_eq!(pages.capacity(), 4 * PAGE_LEN);
        pages.shrink_to_fit();
        assert_eq!(pages.capacity(), n);
        assert!((0..n).all(|i| pages[i] == i as u32));
    }

    #[test]
    #[should_panic(expected = "index 1 of 1 elements")]
    fn an_index_past_the_end_panics() {
        let mut pages = Pages::default();
        pages.push(7u8);
        let _ = pages[1];
    }

    #[test]
    fn a_string_that_does_not_fit_starts_the_next_page() {
        let mut strings = Strings::default();
        assert_eq!(strings.end(), 0);
        let a = vec![1u8; STRING_PAGE - 3];
        let b = vec![2u8; 5];
        let c = vec![3u8; 2];
        let starts: Vec<u32> = [&a, &b, &c]
            .iter()
            .map(|s| strings.push(s).unwrap())
            .collect();
        assert_eq!(starts, [0, STRING_PAGE as u32, STRING_PAGE as u32 + 5]);
        assert_eq!(strings.end(), STRING_PAGE as u32 + 7);
        // `a` ends at the end of its page's bytes, `b` where `c` starts,
        // `c` (the last) at the end of its page's bytes.
        assert_eq!(strings.get(starts[0], Some(starts[1])), &a[..]);
        assert_eq!(strings.get(starts[1], Some(starts[2])), &b[..]);
        assert_eq!(strings.get(starts[2], None), &c[..]);
        assert_eq!(strings.get(strings.end(), None), &[] as &[u8]);
        assert_eq!(strings.capacity(), 2 * STRING_PAGE);
        strings.shrink_to_fit();
        assert_eq!(strings.capacity(), STRING_PAGE + 7);
        assert_eq!(strings.get(starts[0], Some(starts[1])), &a[..]);
        // A string exactly as long as a page's room fills it.
        let mut full = Strings::default();
        assert_eq!(full.push(&vec![4u8; STRING_PAGE]), Some(0));
        assert_eq!(full.get(0, None).len(), STRING_PAGE);
        assert_eq!(full.push(&[5]), Some(STRING_PAGE as u32));
        assert_eq!(full.get(0, Some(STRING_PAGE as u32)).len(), STRING_PAGE);
    }

    #[test]
    fn strings_past_4_gib_of_positions_are_refused() {
        let mut pages = vec![Vec::new(); 4095];
        pages.push(vec![0; STRING_PAGE - 2]);
        let mut strings = Strings { pages };
        assert_eq!(strings.push(&[1, 2]), None);
        assert_eq!(strings.end(), u32::MAX - 1);
        assert_eq!(strings.push(&[1]), Some(u32::MAX - 1));
        assert_eq!(strings.end(), u32::MAX);
        assert_eq!(strings.push(&[1]), None);
        assert_eq!(strings.end(), u32::MAX);
    }
}
