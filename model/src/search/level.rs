//! Where the safety search keeps a level's records: each where the thread
//! that found the state first wrote it, in chunks of a fixed number of
//! records that a pool hands out, with the state's rank in its level and
//! its sleep set beside it (read with the record, not looked up by rank in
//! a table of the level's). A level's records are never copied or moved (the level is
//! put in fingerprint order by its entries alone) and a thread's buffer
//! never doubles. A level is expanded chunk by chunk, in the order the
//! records were written, and each chunk goes back to the pool as soon as
//! its records are expanded, for the next level's writers: the records of
//! two levels take little more room than the larger one's, and their pages
//! are touched once for the whole search instead of zeroed for every
//! level.

use std::sync::Mutex;

/// Records a chunk holds.
const CHUNK_RECORDS: usize = 1 << 13;

/// A record's place: its thread above its index among the thread's records.
const THREAD_SHIFT: u32 = 40;
const INDEX_MASK: u64 = (1 << THREAD_SHIFT) - 1;

/// The rank of a record that is not in its level (an initial state equal
/// to another).
const NO_RANK: u32 = u32::MAX;

/// Lanes before a record's parts: its rank, and its sleep set's two
/// halves.
const HEAD: usize = 3;

/// Chunks not in use, all of one width.
pub(super) struct Pool {
    /// Lanes a record takes in a chunk: [`HEAD`], then its parts' ids.
    lanes: usize,
    free: Mutex<Vec<Box<[u32]>>>,
}

impl Pool {
    /// An empty pool of chunks of records of `width` parts.
    pub(super) fn new(width: usize) -> Self {
        Pool {
            lanes: width + HEAD,
            free: Mutex::new(Vec::new()),
        }
    }

    fn take(&self) -> Box<[u32]> {
        let reused = self.free.lock().expect("not poisoned").pop();
        reused.unwrap_or_else(|| vec![0; CHUNK_RECORDS * self.lanes].into_boxed_slice())
    }

    /// Takes back a chunk whose records are expanded.
    pub(super) fn give(&self, chunk: Box<[u32]>) {
        self.free.lock().expect("not poisoned").push(chunk);
    }
}

/// One thread's records of the level being found.
pub(super) struct Writer<'p> {
    pool: &'p Pool,
    thread: u64,
    chunks: Vec<Box<[u32]>>,
    len: usize,
}

/// What a [`Writer`] wrote: its chunks and its records.
pub(super) struct Written {
    chunks: Vec<Box<[u32]>>,
    len: usize,
}

impl<'p> Writer<'p> {
    /// Thread `thread`'s writer, its chunks from `pool`.
    pub(super) fn new(pool: &'p Pool, thread: u64) -> Self {
        Writer {
            pool,
            thread,
            chunks: Vec::new(),
            len: 0,
        }
    }

    /// Room for one more record: its place, and its lanes to fill (they
    /// hold whatever a chunk's last use left there).
    pub(super) fn push(&mut self) -> (u64, &mut [u32]) {
        let (chunk, at) = (self.len / CHUNK_RECORDS, self.len % CHUNK_RECORDS);
        if chunk == self.chunks.len() {
            self.chunks.push(self.pool.take());
        }
        let place = self.thread << THREAD_SHIFT | self.len as u64;
        self.len += 1;
        let lanes = &mut self.chunks[chunk][at * self.pool.lanes..(at + 1) * self.pool.lanes];
        lanes[0] = NO_RANK;
        (place, &mut lanes[HEAD..])
    }

    /// What was written, for [`Shelf::new`].
    pub(super) fn written(self) -> Written {
        Written {
            chunks: self.chunks,
            len: self.len,
        }
    }
}

/// A chunk of a level's records until a thread takes it to expand.
type Shelved = Mutex<Option<Box<[u32]>>>;

/// The records of a level, each with its state's rank and sleep set once
/// [`Shelf::rank`] gave them.
pub(super) struct Shelf {
    lanes: usize,
    /// By thread, its chunks, each until a thread takes it to expand.
    by_thread: Vec<Vec<Shelved>>,
    /// By thread, the records it wrote.
    lens: Vec<usize>,
    /// Every chunk, as its thread and its index among the thread's, in
    /// the order threads take them.
    order: Vec<(usize, usize)>,
}

impl Shelf {
    /// The records of `width` parts each that threads `0..` wrote.
    pub(super) fn new(width: usize, written: Vec<Written>) -> Self {
        let order = written
            .iter()
            .enumerate()
            .flat_map(|(thread, w)| (0..w.chunks.len()).map(move |chunk| (thread, chunk)))
            .collect();
        let lens = written.iter().map(|w| w.len).collect();
        let by_thread = written
            .into_iter()
            .map(|w| w.chunks.into_iter().map(|c| Mutex::new(Some(c))).collect())
            .collect();
        Shelf {
            lanes: width + HEAD,
            by_thread,
            lens,
            order,
        }
    }

    /// Gives the record at `place` its state's rank in the level, and its
    /// sleep set.
    pub(super) fn rank(&mut self, place: u64, rank: u32, sleep: u64) {
        let (thread, index) = (
            (place >> THREAD_SHIFT) as usize,
            (place & INDEX_MASK) as usize,
        );
        let chunk = self.by_thread[thread][index / CHUNK_RECORDS]
            .get_mut()
            .expect("not poisoned");
        if let Some(chunk) = chunk {
            let at = index % CHUNK_RECORDS * self.lanes;
            chunk[at..at + HEAD].copy_from_slice(&[rank, sleep as u32, (sleep >> 32) as u32]);
        }
    }

    /// Takes the `item`th chunk to expand, unless there are fewer.
    pub(super) fn take(&self, item: usize) -> Option<Taken> {
        let &(thread, chunk) = self.order.get(item)?;
        let records = (self.lens[thread] - chunk * CHUNK_RECORDS).min(CHUNK_RECORDS);
        let taken = self.by_thread[thread][chunk]
            .lock()
            .expect("not poisoned")
            .take()?;
        Some(Taken {
            chunk: taken,
            records,
            lanes: self.lanes,
        })
    }
}

/// A chunk of a level's records, taken to be expanded.
pub(super) struct Taken {
    chunk: Box<[u32]>,
    records: usize,
    lanes: usize,
}

impl Taken {
    /// Records in it.
    pub(super) fn len(&self) -> usize {
        self.records
    }

    /// The `at`th record's state's rank in its level and its sleep set,
    /// unless it is not in it, and the record.
    pub(super) fn get(&self, at: usize) -> (Option<(usize, u64)>, &[u32]) {
        let lanes = &self.chunk[at * self.lanes..(at + 1) * self.lanes];
        let sleep = u64::from(lanes[1]) | u64::from(lanes[2]) << 32;
        let rank = (lanes[0] != NO_RANK).then_some((lanes[0] as usize, sleep));
        (rank, &lanes[HEAD..])
    }

    /// The chunk, for [`Pool::give`].
    pub(super) fn chunk(self) -> Box<[u32]> {
        self.chunk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_expanded_with_their_ranks_and_chunks_are_reused() {
        let pool = Pool::new(3);
        let mut writers: Vec<Writer> = (0..2).map(|t| Writer::new(&pool, t)).collect();
        let mut places = Vec::new();
        let n = 2 * CHUNK_RECORDS + 7;
        for i in 0..n as u32 {
            let (place, lanes) = writers[(i % 2) as usize].push();
            lanes.copy_from_slice(&[i, i + 1, i + 2]);
            places.push(place);
        }
        let mut shelf = Shelf::new(3, writers.into_iter().map(Writer::written).collect());
        // Every record but the last is in the level, ranked backwards.
        for (i, place) in places.iter().enumerate().take(n - 1) {
            shelf.rank(*place, (n - 1 - i) as u32, (i as u64) << 31 | 1);
        }
        let mut seen = vec![false; n];
        let mut item = 0;
        while let Some(taken) = shelf.take(item) {
            assert!(shelf.take(item).is_none(), "a chunk is taken once");
            for at in 0..taken.len() {
                let (rank, record) = taken.get(at);
                let i = record[0] as usize;
                assert_eq!(record, [i as u32, i as u32 + 1, i as u32 + 2]);
                let sleep = (i as u64) << 31 | 1;
                assert_eq!(
                    rank,
                    (i < n - 1).then_some((n - 1 - i, sleep)),
                    "record {i}"
                );
                assert!(!std::mem::replace(&mut seen[i], true));
            }
            pool.give(taken.chunk());
            item += 1;
        }
        assert_eq!(item, 4, "two chunks a thread");
        assert!(seen.iter().all(|&s| s));
        assert_eq!(pool.free.lock().unwrap().len(), 4);
        let mut again = Writer::new(&pool, 0);
        let (_, lanes) = again.push();
        assert_eq!(lanes.len(), 3);
        assert_eq!(pool.free.lock().unwrap().len(), 3, "a chunk reused");
    }
}
