//! Reading a family on its own thread, cut into the batches the target
//! will commit, so that reading the source overlaps writing the target.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use crate::error::{MigrateError, Result};
use crate::keymap::KeyMap;
use crate::source::Source;

/// Batches read ahead of the writer.
const BATCHES_IN_FLIGHT: usize = 2;

/// One batch of entries (target keys) in a flat buffer.
#[derive(Debug, Default)]
pub struct Batch {
    data: Vec<u8>,
    /// Key and value lengths of each entry, in order.
    lengths: Vec<(usize, usize)>,
    /// Whether the family has no entries after this batch.
    pub last: bool,
}

impl Batch {
    fn push(&mut self, key: &[u8], value: &[u8]) {
        self.data.extend_from_slice(key);
        self.data.extend_from_slice(value);
        self.lengths.push((key.len(), value.len()));
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    /// Whether the batch has no entries.
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// Key and value bytes in the batch.
    pub fn bytes(&self) -> usize {
        self.data.len()
    }

    /// The entries, in key order.
    pub fn entries(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let mut at = 0;
        self.lengths.iter().map(move |&(k, v)| {
            let key = &self.data[at..at + k];
            let value = &self.data[at + k..at + k + v];
            at += k + v;
            (key, value)
        })
    }

    /// The last key of the batch.
    pub fn last_key(&self) -> Option<&[u8]> {
        self.entries().last().map(|(k, _)| k)
    }
}

/// Where to read and how to cut batches.
#[derive(Clone, Copy)]
pub struct Reader<'a> {
    /// The source.
    pub source: &'a dyn Source,
    /// The family read.
    pub family: &'a str,
    /// How source keys become target keys.
    pub keymap: KeyMap,
    /// Read target keys after this one (all when `None`).
    pub resume_after: Option<&'a [u8]>,
    /// A batch ends at this many keys...
    pub batch_keys: usize,
    /// ...or this many key and value bytes.
    pub batch_bytes: usize,
}

/// Runs `write` on every batch of `reader`'s family, in order, while the
/// next batches are read on another thread. The last batch has `last` set
/// (it may be empty). Stops at the first error of either side.
pub fn for_each_batch(
    reader: Reader<'_>,
    mut write: impl FnMut(Batch) -> Result<()>,
) -> Result<()> {
    std::thread::scope(|scope| {
        let (tx, rx) = sync_channel(BATCHES_IN_FLIGHT);
        scope.spawn(move || {
            if let Err(e) = read_batches(reader, &tx) {
                let _ = tx.send(Err(e));
            }
        });
        drain(rx, &mut write)
    })
}

/// Hands each received batch to `write` until the last one.
fn drain(rx: Receiver<Result<Batch>>, write: &mut impl FnMut(Batch) -> Result<()>) -> Result<()> {
    for batch in rx {
        let batch = batch?;
        let last = batch.last;
        write(batch)?;
        if last {
            return Ok(());
        }
    }
    Err(MigrateError::Io {
        path: std::path::PathBuf::new(),
        source: std::io::Error::other("the thread reading the source stopped early"),
    })
}

/// Reads the family and sends it in batches; stops quietly if the writer
/// has gone.
fn read_batches(r: Reader<'_>, tx: &SyncSender<Result<Batch>>) -> Result<()> {
    let mut batch = Batch::default();
    for run in r.keymap.source_runs(r.family, r.resume_after)? {
        let mut connected = true;
        r.source.scan(r.family, &run, &mut |key, value| {
            let key = r.keymap.map(r.family, key)?;
            batch.push(&key, value);
            if batch.len() >= r.batch_keys || batch.bytes() >= r.batch_bytes {
                connected = tx.send(Ok(std::mem::take(&mut batch))).is_ok();
            }
            Ok(connected)
        })?;
        if !connected {
            return Ok(());
        }
    }
    batch.last = true;
    let _ = tx.send(Ok(batch));
    Ok(())
}
