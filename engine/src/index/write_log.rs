//! The writes a side rebuild logs while it runs (see `side_rebuild`).
//!
//! Millions of writes can be logged while a large subtree is rebuilt, so
//! the log keeps no allocation per write (as many small allocations freed
//! at once left gigabytes of the writer's malloc arena free but
//! fragmented, never returned, at 100M keys) and never moves what it holds:
//! keys end to end in fixed blocks, and the writes in fixed blocks of
//! records. A single growing vector was copied whole each time it doubled,
//! by the writer that logged the write that overflowed it: 24 MiB copied
//! and faulted in during one put (14-17 ms, runner `hot-range` at 10M keys,
//! found by sampling page faults).

/// Bytes of a block of keys (a longer key gets a block of its own).
const KEY_BLOCK_BYTES: usize = 256 << 10;

/// Writes recorded per block of records (32 bytes each: 256 KiB).
const WRITES_PER_BLOCK: usize = 8192;

/// One logged write: the key and its new payload (`None`: removed).
pub(crate) type Write = (Box<[u8]>, Option<u64>);

/// Where a logged write's key lies, and its payload.
#[derive(Debug, Clone, Copy)]
struct Record {
    block: u32,
    start: u32,
    len: u32,
    payload: Option<u64>,
}

/// The writes logged through a frozen node, in order.
#[derive(Debug)]
pub(crate) struct WriteLog {
    key_blocks: Vec<Vec<u8>>,
    records: Vec<Vec<Record>>,
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
            records: Vec::new(),
            len: 0,
            key_block_bytes,
            writes_per_block,
        }
    }

    /// Logs a write of `key` (`payload` `None`: a removal).
    pub(crate) fn push(&mut self, key: &[u8], payload: Option<u64>) {
        let keys = match self.key_blocks.last_mut() {
            Some(block) if block.capacity() - block.len() >= key.len() => block,
            _ => {
                let capacity = self.key_block_bytes.max(key.len());
                self.key_blocks.push(Vec::with_capacity(capacity));
                self.key_blocks.last_mut().expect("just pushed")
            }
        };
        let start = keys.len();
        keys.extend_from_slice(key);
        let record = Record {
            block: (self.key_blocks.len() - 1) as u32,
            start: start as u32,
            len: key.len() as u32,
            payload,
        };
        if self.len.is_multiple_of(self.writes_per_block) {
            self.records.push(Vec::with_capacity(self.writes_per_block));
        }
        self.records
            .last_mut()
            .expect("a block with room")
            .push(record);
        self.len += 1;
    }

    /// Writes logged.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The writes in `range` (within `0..len`), as the replay takes them.
    pub(crate) fn writes(&self, range: std::ops::Range<usize>) -> Vec<Write> {
        range
            .map(|i| {
                let r = self.records[i / self.writes_per_block][i % self.writes_per_block];
                let (start, len) = (r.start as usize, r.len as usize);
                let key = &self.key_blocks[r.block as usize][start..start + len];
                (key.into(), r.payload)
            })
            .collect()
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
                log.push(key, *payload);
            }
            assert_eq!(log.len(), 50);
            assert_eq!(log.writes(0..50), logged);
            assert_eq!(log.writes(17..31), logged[17..31].to_vec());
            assert!(log.writes(50..50).is_empty());
            for block in &log.key_blocks {
                assert!(block.capacity() == key_block || block.capacity() == block.len());
            }
            assert!(log.records.iter().all(|b| b.capacity() == per_block));
        }
    }
}
