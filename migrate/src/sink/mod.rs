//! Writing a migration's target, of either kind, through one interface.

mod alex;
#[cfg(feature = "librocksdb")]
mod rocks;

pub use alex::AlexSink;
#[cfg(feature = "librocksdb")]
pub use rocks::RocksSink;

use crate::error::{MigrateError, Result};
use crate::keymap::Bounds;
use crate::marker::{self, Plan, Position, State};
use crate::source::{MARKER_FAMILY, Source};

/// A migration's target. Data goes into a pending batch; [`Sink::commit`]
/// writes it together with the family's progress record in one atomic
/// write.
pub trait Sink {
    /// The target read as a source (for emptiness checks and verification).
    fn source(&self) -> &dyn Source;
    /// The recorded state of an interrupted migration, if any.
    fn load_state(&self) -> Result<Option<State>> {
        let source = self.source();
        if !source.has_marker_family() {
            return Ok(None);
        }
        let mut records = Vec::new();
        source.scan(MARKER_FAMILY, &Bounds::default(), &mut |k, v| {
            records.push((k.to_vec(), v.to_vec()));
            Ok(true)
        })?;
        marker::decode(&records).map_err(|reason| MigrateError::ResumeMismatch {
            path: source.path().to_path_buf(),
            reason,
        })
    }
    /// Creates the marker family and durably records `plan`.
    fn begin(&mut self, plan: &Plan) -> Result<()>;
    /// Creates `family` if missing and directs the next puts to it.
    fn open_family(&mut self, family: &str) -> Result<()>;
    /// Adds a put to the pending batch.
    fn put(&mut self, key: &[u8], value: &[u8]);
    /// Writes the pending batch and the current family's `position` atomically.
    fn commit(&mut self, position: &Position) -> Result<()>;
    /// Makes everything durable and drops the marker family.
    fn finish(&mut self) -> Result<()>;
}

/// The families of `source` holding at least one key.
pub fn non_empty_families(source: &dyn Source) -> Result<Vec<String>> {
    let mut found = Vec::new();
    for family in source.families() {
        let mut any = false;
        source.scan(&family, &Bounds::default(), &mut |_, _| {
            any = true;
            Ok(false)
        })?;
        if any {
            found.push(family);
        }
    }
    Ok(found)
}
