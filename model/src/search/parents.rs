//! The safety search's log of parents, out of memory: per state, in id
//! order, 8 bytes (its parent's id above its action's index) appended to a
//! file in the scratch directory, as TLC keeps its trace file. The log is
//! written once per state and read only to rebuild a path, so it costs a
//! buffer in memory and a sequential write; the file is unlinked as soon
//! as it is made, so nothing is left behind however the process ends.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Entries buffered before they are written: 512 KiB.
const BUFFER: usize = 1 << 16;

/// Bytes an entry takes.
const ENTRY: usize = 8;

/// An append-only log of 8-byte entries in an unlinked scratch file. A
/// write or read that fails is remembered ([`Parents::failed`]); the log
/// takes nothing more after it.
pub(super) struct Parents {
    file: File,
    /// Entries not written yet (those from `written` on), as they are
    /// written: little-endian.
    buffer: Vec<u8>,
    written: u64,
    failed: bool,
}

impl Parents {
    /// An empty log in a new file under `dir`.
    pub(super) fn new(dir: &Path) -> io::Result<Self> {
        static MADE: AtomicU64 = AtomicU64::new(0);
        let path = dir.join(format!(
            "rebalance-parents-{}-{}",
            std::process::id(),
            MADE.fetch_add(1, Ordering::Relaxed)
        ));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        std::fs::remove_file(&path)?;
        Ok(Parents {
            file,
            buffer: Vec::with_capacity(BUFFER * ENTRY),
            written: 0,
            failed: false,
        })
    }

    /// Appends `entry`, unless the log failed.
    pub(super) fn push(&mut self, entry: u64) {
        if self.buffer.len() == BUFFER * ENTRY && !self.failed {
            self.failed = self.flush().is_err();
        }
        if !self.failed {
            self.buffer.extend_from_slice(&entry.to_le_bytes());
        }
    }

    /// Whether a write or a read failed: the log is then incomplete.
    pub(super) fn failed(&self) -> bool {
        self.failed
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file
            .seek(SeekFrom::Start(self.written * ENTRY as u64))?;
        self.file.write_all(&self.buffer)?;
        self.written += (self.buffer.len() / ENTRY) as u64;
        self.buffer.clear();
        Ok(())
    }

    /// The entry of state `id`, if the log has one and can read it.
    pub(super) fn get(&mut self, id: u64) -> Option<u64> {
        if id >= self.written {
            let at = usize::try_from(id - self.written)
                .ok()?
                .checked_mul(ENTRY)?;
            let bytes = self.buffer.get(at..at.checked_add(ENTRY)?)?;
            return bytes.try_into().ok().map(u64::from_le_bytes);
        }
        let mut bytes = [0; ENTRY];
        let read = self
            .file
            .seek(SeekFrom::Start(id * ENTRY as u64))
            .and_then(|_| self.file.read_exact(&mut bytes));
        self.failed |= read.is_err();
        read.ok().map(|()| u64::from_le_bytes(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_back_from_the_file_and_the_buffer() {
        let mut log = Parents::new(&std::env::temp_dir()).expect("a scratch file");
        let n = 2 * BUFFER as u64 + 5;
        for i in 0..n {
            log.push(i * 3);
        }
        assert_eq!(log.written, 2 * BUFFER as u64);
        for i in [0, 1, BUFFER as u64, n - 6, n - 5, n - 1] {
            assert_eq!(log.get(i), Some(i * 3), "entry {i}");
        }
        assert_eq!(log.get(n), None);
        // Appending after a read still appends.
        log.push(7);
        assert_eq!(log.get(n), Some(7));
        assert!(!log.failed());
    }

    #[test]
    fn a_scratch_directory_that_is_not_there_is_an_error() {
        let missing = std::env::temp_dir().join("rebalance-no-such-directory/below");
        assert!(Parents::new(&missing).is_err());
    }
}
