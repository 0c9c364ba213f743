//! [`iterator_methods!`]: the iterator constructors of rocksdb's API
//! (`iterator`, `iterator_opt`, `iterator_cf`, `full_iterator*`,
//! `prefix_iterator*`, `raw_iterator*`), written once for every type that
//! offers them: database handles and transactions. The type must implement
//! `DBAccess`; its iterators see what its `DBAccess` methods show.

/// Expands, inside an `impl` block of a `DBAccess` type, to rocksdb's
/// iterator constructors.
macro_rules! iterator_methods {
    () => {
        /// An iterator over the default column family.
        pub fn iterator<'a: 'b, 'b>(
            &'a self,
            mode: $crate::IteratorMode,
        ) -> $crate::DBIteratorWithThreadMode<'b, Self> {
            self.iterator_opt(mode, $crate::ReadOptions::default())
        }

        /// An iterator over the default column family, with read options.
        pub fn iterator_opt<'a: 'b, 'b>(
            &'a self,
            mode: $crate::IteratorMode,
            readopts: $crate::ReadOptions,
        ) -> $crate::DBIteratorWithThreadMode<'b, Self> {
            $crate::DBIteratorWithThreadMode::new(self, readopts, mode)
        }

        /// An iterator over column family `cf`, with read options (note the
        /// argument order, as in rocksdb).
        pub fn iterator_cf_opt<'a: 'b, 'b>(
            &'a self,
            cf_handle: &impl $crate::AsColumnFamilyRef,
            readopts: $crate::ReadOptions,
            mode: $crate::IteratorMode,
        ) -> $crate::DBIteratorWithThreadMode<'b, Self> {
            $crate::DBIteratorWithThreadMode::new_cf(self, cf_handle.cf_id(), readopts, mode)
        }

        /// An iterator with `total_order_seek` set (AlexDB always iterates in
        /// total order).
        pub fn full_iterator<'a: 'b, 'b>(
            &'a self,
            mode: $crate::IteratorMode,
        ) -> $crate::DBIteratorWithThreadMode<'b, Self> {
            $crate::DBIteratorWithThreadMode::total_order(
                self,
                $crate::column_family::DEFAULT_COLUMN_FAMILY_ID,
                mode,
            )
        }

        /// An iterator forward from `prefix` with `prefix_same_as_start` set: it
        /// stops when the prefix under the prefix extractor changes, and scans
        /// to the end when there is no prefix extractor, as in rocksdb.
        pub fn prefix_iterator<'a: 'b, 'b, P: AsRef<[u8]>>(
            &'a self,
            prefix: P,
        ) -> $crate::DBIteratorWithThreadMode<'b, Self> {
            $crate::DBIteratorWithThreadMode::within_prefix(
                self,
                $crate::column_family::DEFAULT_COLUMN_FAMILY_ID,
                prefix.as_ref(),
            )
        }

        /// An iterator over column family `cf`.
        pub fn iterator_cf<'a: 'b, 'b>(
            &'a self,
            cf_handle: &impl $crate::AsColumnFamilyRef,
            mode: $crate::IteratorMode,
        ) -> $crate::DBIteratorWithThreadMode<'b, Self> {
            self.iterator_cf_opt(cf_handle, $crate::ReadOptions::default(), mode)
        }

        /// [`Self::full_iterator`] over column family `cf`.
        pub fn full_iterator_cf<'a: 'b, 'b>(
            &'a self,
            cf_handle: &impl $crate::AsColumnFamilyRef,
            mode: $crate::IteratorMode,
        ) -> $crate::DBIteratorWithThreadMode<'b, Self> {
            $crate::DBIteratorWithThreadMode::total_order(self, cf_handle.cf_id(), mode)
        }

        /// [`Self::prefix_iterator`] over column family `cf`.
        pub fn prefix_iterator_cf<'a, P: AsRef<[u8]>>(
            &'a self,
            cf_handle: &impl $crate::AsColumnFamilyRef,
            prefix: P,
        ) -> $crate::DBIteratorWithThreadMode<'a, Self> {
            $crate::DBIteratorWithThreadMode::within_prefix(
                self,
                cf_handle.cf_id(),
                prefix.as_ref(),
            )
        }

        /// A raw iterator over the default column family (not yet positioned).
        pub fn raw_iterator<'a: 'b, 'b>(&'a self) -> $crate::DBRawIteratorWithThreadMode<'b, Self> {
            self.raw_iterator_opt($crate::ReadOptions::default())
        }

        /// A raw iterator over column family `cf`.
        pub fn raw_iterator_cf<'a: 'b, 'b>(
            &'a self,
            cf_handle: &impl $crate::AsColumnFamilyRef,
        ) -> $crate::DBRawIteratorWithThreadMode<'b, Self> {
            self.raw_iterator_cf_opt(cf_handle, $crate::ReadOptions::default())
        }

        /// A raw iterator over the default column family, with read options.
        pub fn raw_iterator_opt<'a: 'b, 'b>(
            &'a self,
            readopts: $crate::ReadOptions,
        ) -> $crate::DBRawIteratorWithThreadMode<'b, Self> {
            $crate::DBRawIteratorWithThreadMode::new(self, readopts)
        }

        /// A raw iterator over column family `cf`, with read options.
        pub fn raw_iterator_cf_opt<'a: 'b, 'b>(
            &'a self,
            cf_handle: &impl $crate::AsColumnFamilyRef,
            readopts: $crate::ReadOptions,
        ) -> $crate::DBRawIteratorWithThreadMode<'b, Self> {
            $crate::DBRawIteratorWithThreadMode::new_cf(self, cf_handle.cf_id(), readopts)
        }
    };
}

pub(crate) use iterator_methods;
