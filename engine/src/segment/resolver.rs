//! Index payloads resolved to keys: an index entry's payload is a record's
//! [`Location`], and the index confirms a candidate by the key stored in
//! the record, read through one loaded segment table.

use std::cell::Cell;

use crate::format::location::Location;
use crate::index::KeyResolver;
use crate::segment::SegmentTable;

/// Resolves index payloads to keys through one loaded segment table,
/// remembering whether any location was missing from it.
pub(crate) struct TableResolver<'t> {
    table: &'t SegmentTable,
    missed: Cell<bool>,
}

impl<'t> TableResolver<'t> {
    pub fn new(table: &'t SegmentTable) -> Self {
        TableResolver {
            table,
            missed: Cell::new(false),
        }
    }

    /// Whether some payload could not be resolved (the caller must retry).
    pub fn missed(&self) -> bool {
        self.missed.get()
    }
}

impl KeyResolver for TableResolver<'_> {
    fn key(&self, payload: u64) -> &[u8] {
        key_in(self.table, payload, &self.missed)
    }

    fn failed(&self) -> bool {
        self.missed.get()
    }

    /// Hints the CPU to load the record and, where the segment's map is
    /// advised random access (data larger than memory), asks the kernel to
    /// start reading its page: the records an index step hints (a
    /// multi-get's batch, the entries after a seek's start) are then read
    /// from the disk in parallel while the first one is compared.
    fn prefetch(&self, payload: u64) {
        let loc = Location(payload);
        if let Some(segment) = self.table.get(loc.segment()) {
            segment.prefetch_record(loc.offset());
            segment.will_read_record(loc.offset());
        }
    }
}

/// The key of the record at location `payload` in `table`; empty, setting
/// `missed`, if the table has no such record.
pub(crate) fn key_in<'t>(table: &'t SegmentTable, payload: u64, missed: &Cell<bool>) -> &'t [u8] {
    let loc = Location(payload);
    match table
        .get(loc.segment())
        .and_then(|s| s.key_at(loc.offset()))
    {
        Some(key) => key,
        None => {
            missed.set(true);
            &[]
        }
    }
}
