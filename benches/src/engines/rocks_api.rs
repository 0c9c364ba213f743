//! One implementation of [`Engine`](super::Engine) for every crate with the
//! `rocksdb` crate's API: the real `rocksdb` and AlexDB's drop-in `alexdb`
//! run exactly the same calls.

/// Implements `Engine` for `$ty`, a struct with a `db: $krate::DB` field and
/// associated functions `options(&Sizing) -> $krate::Options` and
/// `index_bytes_of(&$krate::DB) -> Option<u64>`; `$txn` is the
/// `optimistic_txn_store!` type its transactions run on.
macro_rules! rocks_api_engine {
    ($ty:ident, $krate:ident, $txn:ident) => {
        rocks_api_ordered!($ty);
        rocks_api_compacting!($ty, $krate);
        rocks_api_merging!($ty);

        impl $crate::engines::SharedAccess for $ty {
            fn get(&self, key: &[u8]) -> $crate::error::Result<Option<u64>> {
                Ok(self.db.get(key)?.map(|v| $crate::engines::touch(&v)))
            }

            fn put(&self, key: &[u8], value: &[u8]) -> $crate::error::Result<()> {
                Ok(self.db.put(key, value)?)
            }
        }

        impl $crate::engines::Engine for $ty {
            fn supports(_workload: $crate::workloads::Workload) -> bool {
                true
            }

            fn open_reverse_ordered(
                dir: &::std::path::Path,
                sizing: &$crate::engines::Sizing,
            ) -> $crate::error::Result<Box<dyn $crate::engines::OrderedSeek>> {
                let mut opts = $ty::options(sizing);
                opts.set_comparator(
                    "alexdb-bench.reverse",
                    Box::new(|a: &[u8], b: &[u8]| b.cmp(a)),
                );
                let db = $krate::DB::open(&opts, dir)?;
                Ok(Box::new($ty { db }))
            }

            fn open_compacting(
                dir: &::std::path::Path,
                sizing: &$crate::engines::Sizing,
                filtered: bool,
            ) -> $crate::error::Result<Box<dyn $crate::engines::Compacting>> {
                let mut opts = $ty::options(sizing);
                opts.set_disable_auto_compactions(true);
                if filtered {
                    opts.set_compaction_filter(
                        "alexdb-bench.half",
                        |_level, key: &[u8], _value: &[u8]| {
                            match $crate::workloads::removed_by_filter(key) {
                                true => $krate::CompactionDecision::Remove,
                                false => $krate::CompactionDecision::Keep,
                            }
                        },
                    );
                }
                let db = $krate::DB::open(&opts, dir)?;
                Ok(Box::new($ty { db }))
            }

            fn open_merging(
                dir: &::std::path::Path,
                sizing: &$crate::engines::Sizing,
                shape: $crate::engines::MergeShape,
            ) -> $crate::error::Result<Box<dyn $crate::engines::MergeStore>> {
                let mut opts = $ty::options(sizing);
                match shape {
                    $crate::engines::MergeShape::Append => opts.set_merge_operator_associative(
                        "alexdb-bench.append",
                        |_: &[u8], existing: Option<&[u8]>, operands: &$krate::MergeOperands| {
                            Some($crate::workloads::append_all(existing, operands.iter()))
                        },
                    ),
                    $crate::engines::MergeShape::Counter => opts.set_merge_operator_associative(
                        "alexdb-bench.add",
                        |_: &[u8], existing: Option<&[u8]>, operands: &$krate::MergeOperands| {
                            $crate::workloads::add_all(existing, operands.iter())
                        },
                    ),
                }
                let db = $krate::DB::open(&opts, dir)?;
                Ok(Box::new($ty { db }))
            }

            fn open(
                dir: &::std::path::Path,
                sizing: &$crate::engines::Sizing,
            ) -> $crate::error::Result<Self> {
                let db = $krate::DB::open(&$ty::options(sizing), dir)?;
                Ok($ty { db })
            }

            fn write_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> $crate::error::Result<()> {
                let mut batch = $krate::WriteBatch::default();
                for (k, v) in pairs {
                    batch.put(k, v);
                }
                Ok(self.db.write(batch)?)
            }

            fn put(&mut self, key: &[u8], value: &[u8]) -> $crate::error::Result<()> {
                Ok(self.db.put(key, value)?)
            }

            fn get(&mut self, key: &[u8]) -> $crate::error::Result<Option<u64>> {
                Ok(self.db.get(key)?.map(|v| $crate::engines::touch(&v)))
            }

            fn get_pinned(&mut self, key: &[u8]) -> $crate::error::Result<Option<u64>> {
                Ok(self.db.get_pinned(key)?.map(|v| $crate::engines::touch(&v)))
            }

            fn multi_get(&mut self, keys: &[&[u8]]) -> $crate::error::Result<(u64, usize)> {
                let mut sum = 0u64;
                let mut found = 0;
                for value in self.db.multi_get(keys) {
                    if let Some(v) = value? {
                        sum = sum.wrapping_add($crate::engines::touch(&v));
                        found += 1;
                    }
                }
                Ok((sum, found))
            }

            fn seek_next(
                &mut self,
                key: &[u8],
                nexts: usize,
            ) -> $crate::error::Result<(u64, usize)> {
                let mut it = self.db.raw_iterator();
                it.seek(key);
                let mut sum = 0;
                let mut seen = 0;
                while seen <= nexts && it.valid() {
                    sum += it.key().map_or(0, $crate::engines::touch);
                    sum += it.value().map_or(0, $crate::engines::touch);
                    seen += 1;
                    it.next();
                }
                it.status()?;
                Ok((sum, seen))
            }

            fn index_bytes(&self) -> Option<u64> {
                $ty::index_bytes_of(&self.db)
            }

            fn background_errors(&self) -> Option<u64> {
                self.db
                    .property_int_value("rocksdb.background-errors")
                    .ok()
                    .flatten()
            }

            fn shared(&self) -> Option<&dyn $crate::engines::SharedAccess> {
                Some(self)
            }

            fn delete_batch(&mut self, keys: &[&[u8]]) -> $crate::error::Result<()> {
                let mut batch = $krate::WriteBatch::default();
                for k in keys {
                    batch.delete(k);
                }
                Ok(self.db.write(batch)?)
            }

            fn delete_range(&mut self, start: &[u8], end: &[u8]) -> $crate::error::Result<()> {
                let mut batch = $krate::WriteBatch::default();
                batch.delete_range(start, end);
                Ok(self.db.write(batch)?)
            }

            fn settle(&mut self) -> $crate::error::Result<()> {
                Ok(self
                    .db
                    .wait_for_compact(&$krate::WaitForCompactOptions::default())?)
            }

            fn compact(&mut self) -> $crate::error::Result<()> {
                self.db.compact_range(None::<&[u8]>, None::<&[u8]>);
                Ok(())
            }

            fn open_transactional(
                dir: &::std::path::Path,
                sizing: &$crate::engines::Sizing,
            ) -> $crate::error::Result<Box<dyn $crate::engines::ReadModifyWrite>> {
                let db = $krate::OptimisticTransactionDB::open(&$ty::options(sizing), dir)?;
                Ok(Box::new($txn { db }))
            }

            fn scan(&mut self) -> $crate::error::Result<(u64, usize)> {
                let mut it = self.db.raw_iterator();
                it.seek_to_first();
                let mut sum = 0;
                let mut seen = 0;
                while it.valid() {
                    sum += it.key().map_or(0, $crate::engines::touch);
                    sum += it.value().map_or(0, $crate::engines::touch);
                    seen += 1;
                    it.next();
                }
                it.status()?;
                Ok((sum, seen))
            }
        }
    };
}

/// Implements `Compacting` for `$ty`, a database of `$krate` (as in
/// [`rocks_api_engine`]).
macro_rules! rocks_api_compacting {
    ($ty:ident, $krate:ident) => {
        impl $crate::engines::Compacting for $ty {
            fn write_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> $crate::error::Result<()> {
                $crate::engines::Engine::write_batch(self, pairs)
            }

            fn compact_all(&mut self) -> $crate::error::Result<()> {
                self.db.compact_range(None::<&[u8]>, None::<&[u8]>);
                Ok(())
            }

            fn count(&mut self) -> $crate::error::Result<usize> {
                let mut n = 0;
                for item in self.db.iterator($krate::IteratorMode::Start) {
                    item?;
                    n += 1;
                }
                Ok(n)
            }
        }
    };
}

/// Implements `OrderedSeek` for `$ty` (as in [`rocks_api_engine`]).
macro_rules! rocks_api_ordered {
    ($ty:ident) => {
        impl $crate::engines::OrderedSeek for $ty {
            fn write_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> $crate::error::Result<()> {
                $crate::engines::Engine::write_batch(self, pairs)
            }

            fn seek_next(
                &mut self,
                key: &[u8],
                nexts: usize,
            ) -> $crate::error::Result<(u64, usize)> {
                $crate::engines::Engine::seek_next(self, key, nexts)
            }
        }
    };
}

/// Implements `MergeStore` for `$ty` (as in [`rocks_api_engine`]).
macro_rules! rocks_api_merging {
    ($ty:ident) => {
        impl $crate::engines::MergeStore for $ty {
            fn merge(&mut self, key: &[u8], operand: &[u8]) -> $crate::error::Result<()> {
                Ok(self.db.merge(key, operand)?)
            }

            fn get(&mut self, key: &[u8]) -> $crate::error::Result<Option<Vec<u8>>> {
                Ok(self.db.get(key)?)
            }

            fn compact(&mut self) -> $crate::error::Result<()> {
                $crate::engines::Engine::compact(self)
            }
        }
    };
}

/// Defines `$name`, an `OptimisticTransactionDB` of `$krate` running
/// read-modify-write transactions (`get_for_update` + `put` + `commit`).
macro_rules! optimistic_txn_store {
    ($name:ident, $krate:ident) => {
        /// An open `OptimisticTransactionDB`.
        pub struct $name {
            db: $krate::OptimisticTransactionDB,
        }

        impl $crate::engines::ReadModifyWrite for $name {
            fn read_modify_write(
                &mut self,
                key: &[u8],
                value: &[u8],
            ) -> $crate::error::Result<Option<u64>> {
                let txn = self.db.transaction();
                let old = txn.get_for_update(key, true)?;
                txn.put(key, value)?;
                txn.commit()?;
                Ok(old.map(|v| $crate::engines::touch(&v)))
            }

            fn close(self: Box<Self>) -> $crate::error::Result<()> {
                Ok(())
            }
        }
    };
}
