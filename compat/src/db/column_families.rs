//! Creating, dropping and finding column families, in both thread modes.

use std::sync::{Arc, PoisonError};

use super::core::{Core, FamilyInfo};
use super::errors::IntoRocks;
use super::{DBCommon, DBInner, MultiThreaded, SingleThreaded};
use crate::column_family::ColumnFamily;
use crate::comparator_names;
use crate::{BoundColumnFamily, DEFAULT_COLUMN_FAMILY_NAME, Error, Options};

impl Core {
    /// Creates column family `name` with `opts`; returns its id.
    pub(crate) fn create_family(&self, name: &str, opts: &Options) -> Result<u32, Error> {
        self.check_writable()?;
        let mut families = self.families_mut();
        if families.values().any(|f| f.name == name) {
            return Err(Error::invalid_argument("Column family already exists"));
        }
        let order = crate::comparator::Comparator::range_order(opts.comparator.as_ref());
        let id = self.engine.create_keyspace_ordered(name, order).rocks()?;
        comparator_names::record(self.engine.path(), name, comparator_names::name_of(opts))?;
        let info = FamilyInfo::register(&self.engine, id, name, opts)?;
        super::filter_hook::install(&self.engine, id, &info, self.value_trim())?;
        self.note_family(&info);
        families.insert(id.0, info);
        drop(families);
        self.apply_auto_compaction();
        if let Some(logger) = &self.logger {
            logger.header(&crate::info_log::column_family(name, opts));
        }
        Ok(id.0)
    }

    /// Drops column family `name` (id `id`) and frees its space: the
    /// segments are compacted before this returns, so the dropped records'
    /// bytes are gone from disk (except those an open snapshot still sees).
    pub(crate) fn drop_family(&self, id: u32, name: &str) -> Result<(), Error> {
        drop(self.unlist_family(id, name)?);
        // A failed pass only delays reclamation; background compaction retries.
        let _ = self.engine.compact();
        Ok(())
    }

    /// [`Self::drop_family`], keeping the family's keys readable by its id
    /// until the returned hold is dropped (a handle that outlives the drop
    /// reads them, as in RocksDB); the compaction this runs keeps them too.
    pub(crate) fn drop_family_held(
        &self,
        id: u32,
        name: &str,
    ) -> Result<alexdb_engine::KeyspaceHold, Error> {
        let hold = self.unlist_family(id, name)?;
        // A failed pass only delays reclamation; background compaction retries.
        let _ = self.engine.compact();
        Ok(hold)
    }

    /// Drops column family `name` (id `id`) from the database, durably,
    /// holding its keys readable until the returned hold is dropped.
    fn unlist_family(&self, id: u32, name: &str) -> Result<alexdb_engine::KeyspaceHold, Error> {
        self.check_writable()?;
        if name == DEFAULT_COLUMN_FAMILY_NAME {
            return Err(Error::invalid_argument("Can't drop default column family"));
        }
        let hold = self.engine.drop_keyspace_held(name).rocks()?;
        comparator_names::forget(self.engine.path(), name)?;
        self.families_mut().remove(&id);
        self.apply_auto_compaction();
        Ok(hold)
    }
}

/// The error rocksdb gives for a column family the handle does not know.
fn unknown_family(name: &str) -> Error {
    Error::new(format!("Invalid column family: {name}"))
}

impl<I: DBInner> DBCommon<SingleThreaded, I> {
    /// Creates a column family.
    pub fn create_cf<N: AsRef<str>>(&mut self, name: N, opts: &Options) -> Result<(), Error> {
        let name = name.as_ref();
        let id = self.inner.core().create_family(name, opts)?;
        self.cfs
            .cfs
            .insert(name.to_owned(), ColumnFamily::new(id, name));
        Ok(())
    }

    /// Drops a column family and all its keys; the space is reclaimed by
    /// compaction.
    pub fn drop_cf(&mut self, name: &str) -> Result<(), Error> {
        match self.cfs.cfs.remove(name) {
            Some(cf) => self.inner.core().drop_family(cf.id(), name),
            None => Err(unknown_family(name)),
        }
    }

    /// The handle of column family `name`, if it was opened or created
    /// through this handle.
    pub fn cf_handle(&self, name: &str) -> Option<&ColumnFamily> {
        self.cfs.cfs.get(name)
    }
}

impl<I: DBInner> DBCommon<MultiThreaded, I> {
    /// Creates a column family.
    pub fn create_cf<N: AsRef<str>>(&self, name: N, opts: &Options) -> Result<(), Error> {
        let name = name.as_ref();
        let id = self.inner.core().create_family(name, opts)?;
        self.cfs
            .cfs
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_owned(), (id, Arc::default()));
        Ok(())
    }

    /// Drops a column family and all its keys; the space is reclaimed by
    /// compaction. A handle to it that outlives the drop still reads its
    /// keys, as in RocksDB (writes through it fail); the space of those is
    /// reclaimed once the last such handle is dropped.
    pub fn drop_cf(&self, name: &str) -> Result<(), Error> {
        let removed = self
            .cfs
            .cfs
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(name);
        let Some((id, token)) = removed else {
            return Err(unknown_family(name));
        };
        let core = self.inner.core();
        match Arc::strong_count(&token) {
            1 => core.drop_family(id, name),
            _ => core.drop_family_held(id, name).map(|hold| token.keep(hold)),
        }
    }

    /// The handle of column family `name`, if it was opened or created
    /// through this handle.
    pub fn cf_handle(&self, name: &str) -> Option<Arc<BoundColumnFamily<'_>>> {
        let cfs = self.cfs.cfs.read().unwrap_or_else(PoisonError::into_inner);
        cfs.get(name)
            .map(|(id, token)| Arc::new(BoundColumnFamily::new(*id, name, Arc::clone(token))))
    }
}
