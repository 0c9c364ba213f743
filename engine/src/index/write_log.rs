//! The writes a side rebuild logs while it runs (see `side_rebuild`).
//!
//! Millions of writes can be logged while a large subtree is rebuilt, and
//! the log is written by the index's writer and freed by whichever thread
//! ends the job, so it keeps its bytes in fixed blocks of its own anonymous
//! memory, outside the process's allocator:
//! - not an allocation per write: as many small allocations freed at once
//!   left gigabytes of the writer's malloc arena free but fragmented, never
//!   returned, at 100M keys;
//! - not one growing vector: it was copied whole each time it doubled, by
//!   the writer that logged the write that overflowed it (24 MiB copied and
//!   faulted in during one put: 14-17 ms, runner `hot-range` at 10M keys,
//!   found by sampling page faults);
//! - not blocks from malloc: the compaction thread ends a job and frees
//!   its log, and a thread freeing into another's arena takes that arena's
//!   lock, which a large free or `realloc` holds for milliseconds (the
//!   writer waited 16 ms in one put on such a lock, `__lll_lock_wait_private`
//!   in a trace of its switches; there the memory was node bitmaps and the
//!   holder compaction's `realloc`, both since moved out of the way).

use memmap2::MmapMut;

/// Bytes of a block of keys (a longer key gets a block of its own).
const KEY_BLOCK_BYTES: usize = 256 << 10;

/// Writes recorded per block of records.
const WRITES_PER_BLOCK: usize = 8192;

/// Bytes of one record: key block (u32), key start (u32), key length
/// (u32), whether a payload follows (u8), payload (u64); little-endian.
const RECORD_BYTES: usize = 21;

/// One logged write: the key and its new payload (`None`: removed).
pub(crate) type Write = (Box<[u8]>, Option<u64>);

/// A block of anonymous memory filled from its start.
#[derive(Debug)]
struct Block {
    map: MmapMut,
    len: usize,
}

impl Block {
    /// A block of `bytes` (at least 1), or `None` if none can be mapped.
    fn new(bytes: usize) -> Option<Self> {
        let map = MmapMut::map_anon(bytes.max(1)).ok()?;
        Some(Block { map, len: 0 })
    }

    fn room(&self) -> usize {
        self.map.len() - self.len
    }

    /// Appends `bytes` (which fit) and returns where they start.
    fn append(&mut self, bytes: &[u8]) -> usize {
        let start = self.len;
        self.map[start..start + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
        start
    }
}

/// The writes logged through a frozen node, in order.
#[derive(Debug)]
pub(crate) struct WriteLog {
    key_blocks: Vec<Block>,
    record_blocks: Vec<Block>,
    len: usize,
    key_block_bytes: usize,
    writes_per_block: usize,
}

impl Default for WriteLog {
    fn default() -> Self {
        Self::with_blocks(KEY_BLOCK_BYTES, WRITES_PER_BLOCK)
    }
}

impl WriteLog {
    /// An empty log with blocks of these sizes.
    fn with_blocks(key_block_bytes: usize, writes_per_block: usize) -> Self {
        WriteLog {
            key_blocks: Vec::new(),
            record_blocks: Vec::new(),
            len: 0,
            key_block_bytes,
            writes_per_block,
        }
    }

    /// Logs a write of `key` (`payload` `None`: a removal). False if no
    /// memory could be mapped for it: the write is not logged, and the
    /// log is no longer complete.
    pub(crate) fn push(&mut self, key: &[u8], payload: Option<u64>) -> bool {
        if self.key_blocks.last().is_none_or(|b| b.room() < key.len()) {
            let Some(block) = Block::new(self.key_block_bytes.max(key.len())) else {
                return false;
            };
            self.key_blocks.push(block);
        }
        if self.len.is_multiple_of(self.writes_per_block) {
            let Some(block) = Block::new(self.writes_per_block * RECORD_BYTES) else {
                return false;
            };
            self.record_blocks.push(block);
        }
        let block = self.key_blocks.len() - 1;
        let start = self.key_blocks[block].append(key);
        let mut record = [0u8; RECORD_BYTES];
        record[0..4].copy_from_slice(&(block as u32).to_le_bytes());
        record[4..8].copy_from_slice(&(start as u32).to_le_bytes());
        record[8..12].copy_from_slice(&(key.len() as u32).to_le_bytes());
        record[12] = u8::from(payload.is_some());
        record[13..21].copy_from_slice(&payload.unwrap_or(0).to_le_bytes());
        self.record_blocks
            .last_mut()
            .expect("a block with room")
            .append(&record);
        self.len += 1;
        true
    }

    /// Writes logged.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The writes in `range` (within `0..len`), as the replay takes them.
    pub(crate) fn writes(&self, range: std::ops::Range<usize>) -> Vec<Write> {
        range.map(|i| self.write(i)).collect()
    }

    /// Write number `i`.
    fn write(&self, i: usize) -> Write {
        let at = (i % self.writes_per_block) * RECORD_BYTES;
        let record = &self.record_blocks[i / self.writes_per_block].map[at..at + RECORD_BYTES];
        let u32_at = |o: usize| u32::from_le_bytes(record[o..o + 4].try_into().unwrap()) as usize;
        let (block, start, len) = (u32_at(0), u32_at(4), u32_at(8));
        let payload = u64::from_le_bytes(record[13..21].try_into().unwrap());
        let key = &self.key_blocks[block].map[start..start + len];
        (key.into(), (record[12] == 1).then_some(payload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes of keys of every length 0..7 and a payload or none.
    fn sample(n: u64) -> Vec<Write> {
        (0..n)
            .map(|i| {
                let key = vec![i as u8; (i % 7) as usize].into();
                (key, (i % 3 != 0).then_some(i))
            })
            .collect()
    }

    /// The log gives back every write, in order, over any range, across
    /// block boundaries of keys and of records, keys longer than a block
    /// included; blocks are never grown (nothing logged ever moves).
    #[test]
    fn the_log_returns_its_writes_in_order() {
        for (key_block, per_block) in [(KEY_BLOCK_BYTES, WRITES_PER_BLOCK), (5, 3), (1, 1)] {
            let mut log = WriteLog::with_blocks(key_block, per_block);
            let logged = sample(50);
            for (key, payload) in &logged {
                assert!(log.push(key, *payload));
            }
            assert_eq!(log.len(), 50);
            assert_eq!(log.writes(0..50), logged);
            assert_eq!(log.writes(17..31), logged[17..31].to_vec());
            assert!(log.writes(50..50).is_empty());
            for block in &log.key_blocks {
                assert!(block.map.len() == key_block.max(1) || block.len == block.map.len());
            }
            assert_eq!(log.record_blocks.len(), 50usize.div_ceil(per_block));
        }
    }
}
