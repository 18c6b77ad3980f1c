//! The program's allocator: mimalloc, except for huge blocks.
//!
//! A liveness graph keeps a few vectors that grow to hundreds of
//! megabytes (the edge string, parents, offsets) by doubling. mimalloc
//! grows a huge block by allocating a new one, copying, and freeing the
//! old; the C library's allocator serves blocks this large with their
//! own mappings and grows them by remapping pages, without copying. With
//! four consumers that took the serial recording of `check --liveness`
//! from about 14 s to 10 s and the peak from 2.61 to 2.37 GB
//! (`docs/performance.md`).

use std::alloc::{GlobalAlloc, Layout, System};

use mimalloc::MiMalloc;

/// Blocks at least this large come from the C library's allocator: from
/// 32 MiB it maps every block on its own (glibc's largest mapping
/// threshold), which is what lets it grow one in place.
const HUGE: usize = 32 << 20;

/// mimalloc for blocks under [`HUGE`], the system allocator for the rest.
pub struct Allocator;

fn is_huge(size: usize) -> bool {
    size >= HUGE
}

// SAFETY: a block's allocator is a function of its size, and every call
// that frees or resizes a block receives the layout (so the size) it was
// allocated with, so each block is returned to the allocator it came from.
// A block whose size crosses `HUGE` is moved: allocated anew from the other
// allocator, its bytes copied, the old block freed.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if is_huge(layout.size()) {
            System.alloc(layout)
        } else {
            MiMalloc.alloc(layout)
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if is_huge(layout.size()) {
            System.alloc_zeroed(layout)
        } else {
            MiMalloc.alloc_zeroed(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if is_huge(layout.size()) {
            System.dealloc(ptr, layout)
        } else {
            MiMalloc.dealloc(ptr, layout)
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match (is_huge(layout.size()), is_huge(new_size)) {
            (true, true) => System.realloc(ptr, layout, new_size),
            (false, false) => MiMalloc.realloc(ptr, layout, new_size),
            _ => {
                let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
                    return std::ptr::null_mut();
                };
                let moved = self.alloc(new_layout);
                if !moved.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                moved
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::HUGE;

    /// The program's global allocator serves this test: a vector grown
    /// across the threshold and shrunk back keeps its bytes on each side.
    #[test]
    fn a_block_keeps_its_bytes_across_the_threshold() {
        let pattern = |i: usize| (i % 251) as u8;
        let mut bytes: Vec<u8> = (0..HUGE / 2).map(pattern).collect();
        bytes.extend((HUGE / 2..HUGE + 1).map(pattern));
        assert!(bytes.capacity() >= HUGE);
        bytes.extend((HUGE + 1..3 * HUGE).map(pattern));
        assert!(bytes.iter().enumerate().all(|(i, &b)| b == pattern(i)));
        bytes.truncate(1000);
        bytes.shrink_to_fit();
        assert!(bytes.capacity() < HUGE);
        assert!(bytes.iter().enumerate().all(|(i, &b)| b == pattern(i)));
        let zeroed = vec![0u64; HUGE / 8];
        assert!(zeroed.iter().all(|&w| w == 0));
    }
}
