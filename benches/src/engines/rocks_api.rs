//! One implementation of [`Engine`](super::Engine) for every crate with the
//! `rocksdb` crate's API: the real `rocksdb` and AlexDB's drop-in `alexdb`
//! run exactly the same calls.

/// Implements `Engine` for `$ty`, a struct with a `db: $krate::DB` field and
/// associated functions `options(&Sizing) -> $krate::Options` and
/// `index_bytes_of(&$krate::DB) -> Option<u64>`.
macro_rules! rocks_api_engine {
    ($ty:ident, $krate:ident) => {
        impl $crate::engines::Engine for $ty {
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
