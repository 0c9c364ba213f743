//! Streaming a table's entries in internal-key order, one data block at a
//! time.

use crate::entry::Entry;
use crate::error::Result;
use crate::internal_key::{self, ValueKind};
use crate::table::block;
use crate::table::reader::Table;

/// The entries of one table, in order. Yields each entry once; an error
/// ends the iteration.
#[derive(Debug)]
pub struct TableIter {
    table: Table,
    next_block: usize,
    pending: std::vec::IntoIter<Entry>,
    failed: bool,
}

impl TableIter {
    /// Iterates `table` from its first entry.
    pub fn new(table: Table) -> Self {
        TableIter {
            table,
            next_block: 0,
            pending: Vec::new().into_iter(),
            failed: false,
        }
    }

    /// Iterates `table` from the first block that may hold user keys at or
    /// after `lower` (earlier entries of that block are still yielded).
    pub fn seek(table: Table, lower: Option<&[u8]>) -> Self {
        let first = match lower {
            Some(lower) => table
                .data_blocks
                .partition_point(|(separator, _)| separator.as_slice() < lower),
            None => 0,
        };
        let mut it = TableIter::new(table);
        it.next_block = first;
        it
    }

    fn load_next_block(&mut self) -> Result<bool> {
        let Some(&(_, handle)) = self.table.data_blocks.get(self.next_block) else {
            return Ok(false);
        };
        self.next_block += 1;
        let bytes = self.table.read_block(handle)?;
        let mut out = Vec::new();
        block::for_each_entry(&bytes, "data block", |key, value| {
            let (user, sequence, t) = internal_key::split(key)?;
            out.push(Entry {
                user_key: user.to_vec(),
                sequence,
                kind: ValueKind::from_byte(t)?,
                value: bytes[value].to_vec(),
            });
            Ok(())
        })?;
        self.pending = out.into_iter();
        Ok(true)
    }
}

impl Iterator for TableIter {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            if let Some(e) = self.pending.next() {
                return Some(Ok(e));
            }
            match self.load_next_block() {
                Ok(true) => continue,
                Ok(false) => return None,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
    }
}
