//! The tables of one level 1+ (sorted, non-overlapping) read as one
//! stream, opening one file at a time.

use std::collections::VecDeque;

use crate::entry::Entry;
use crate::error::Result;
use crate::table::{Table, TableIter, TableMeta};

/// Streams the tables of one level in key order.
pub struct LevelIter {
    files: VecDeque<TableMeta>,
    lower: Option<Vec<u8>>,
    current: Option<TableIter>,
    failed: bool,
}

impl LevelIter {
    /// The tables `files`, already in key order; entries before `lower`
    /// may be skipped.
    pub fn new(files: Vec<TableMeta>, lower: Option<Vec<u8>>) -> Self {
        LevelIter {
            files: files.into(),
            lower,
            current: None,
            failed: false,
        }
    }

    fn open_next(&mut self) -> Result<bool> {
        let Some(meta) = self.files.pop_front() else {
            return Ok(false);
        };
        let table = Table::reopen(&meta)?;
        self.current = Some(TableIter::seek(table, self.lower.as_deref()));
        Ok(true)
    }
}

impl Iterator for LevelIter {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            if let Some(item) = self.current.as_mut().and_then(Iterator::next) {
                self.failed = item.is_err();
                return Some(item);
            }
            match self.open_next() {
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
