//! The floor of a point get on this machine, run as an engine so every
//! report shows each engine's distance from it: the sorted keys in memory
//! (a `Vec<u64>` for 8-byte keys, else one flat array of fixed-width keys),
//! found by binary search, plus one read of the value from a warm read-only
//! memory map of a file that holds the values in key order.
//!
//! It stores nothing durably while loading: the load is collected in
//! memory and written out (keys, then values in key order) at close. It
//! runs the read workloads only.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use super::{Engine, SharedAccess, Sizing, touch};
use crate::error::{BenchError, Result};
use crate::workloads::Workload;

/// How the floor is set up, for the report.
pub const CONFIGURATION: &str = "not a store: the floor of a point get. The loaded keys, \
sorted, in a `Vec<u64>` (8-byte keys; a flat array of fixed-width keys otherwise), found by \
binary search; the values in key order in one file, read through a read-only memory map \
(`memmap2`) that the warm-up scan made warm. Copying get copies the 100 bytes out; zero-copy \
get reads them in place. Same keys and probe order as the engines; read workloads only (its \
load figure is not reported: it only collects the pairs in memory).";

const KEYS_FILE: &str = "floor.keys";
const VALUES_FILE: &str = "floor.values";

/// Sorted keys and the mapped values; or, before the first close, the
/// pairs being loaded.
pub struct Floor {
    dir: PathBuf,
    value_bytes: usize,
    keys: SortedKeys,
    values: Option<Mmap>,
    loading: Vec<(Vec<u8>, Vec<u8>)>,
}

/// Sorted keys, searched by binary search.
enum SortedKeys {
    /// 8-byte keys as big-endian integers.
    Integers(Vec<u64>),
    /// Keys of one width, back to back.
    Fixed { width: usize, bytes: Vec<u8> },
}

impl SortedKeys {
    fn from_file(bytes: Vec<u8>, width: usize) -> SortedKeys {
        if width == 8 {
            let ints = bytes
                .chunks_exact(8)
                .map(|c| u64::from_be_bytes(c.try_into().unwrap_or([0; 8])))
                .collect();
            SortedKeys::Integers(ints)
        } else {
            SortedKeys::Fixed { width, bytes }
        }
    }

    fn len(&self) -> usize {
        match self {
            SortedKeys::Integers(v) => v.len(),
            SortedKeys::Fixed { width, bytes } => bytes.len() / width.max(&1),
        }
    }

    /// The position of the first key ≥ `key`, and whether it equals `key`.
    fn lower_bound(&self, key: &[u8]) -> (usize, bool) {
        let found = match self {
            SortedKeys::Integers(v) => match <[u8; 8]>::try_from(key) {
                Ok(k) => v.binary_search(&u64::from_be_bytes(k)),
                Err(_) => Err(v.partition_point(|&x| x.to_be_bytes().as_slice() < key)),
            },
            SortedKeys::Fixed { width, bytes } => {
                let n = bytes.len() / width;
                let at = |i: usize| &bytes[i * width..(i + 1) * width];
                let pos = partition(n, |i| at(i) < key);
                if pos < n && at(pos) == key {
                    Ok(pos)
                } else {
                    Err(pos)
                }
            }
        };
        match found {
            Ok(i) => (i, true),
            Err(i) => (i, false),
        }
    }

    fn key_touch(&self, i: usize) -> u64 {
        match self {
            SortedKeys::Integers(v) => touch(&v[i].to_be_bytes()),
            SortedKeys::Fixed { width, bytes } => touch(&bytes[i * width..(i + 1) * width]),
        }
    }
}

/// The first index in `0..n` for which `before` is false (`before` holds
/// for a prefix).
fn partition(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl Floor {
    fn value(&self, i: usize) -> Result<&[u8]> {
        let map = self
            .values
            .as_ref()
            .ok_or_else(|| BenchError::from("floor: read before the first close"))?;
        Ok(&map[i * self.value_bytes..(i + 1) * self.value_bytes])
    }

    fn find(&self, key: &[u8]) -> Result<Option<&[u8]>> {
        match self.keys.lower_bound(key) {
            (i, true) => Ok(Some(self.value(i)?)),
            _ => Ok(None),
        }
    }

    /// Writes the collected pairs out, keys sorted, values in key order.
    fn write_files(&mut self) -> Result<()> {
        let mut pairs = std::mem::take(&mut self.loading);
        pairs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        pairs.dedup_by(|later, earlier| later.0 == earlier.0);
        let keys: Vec<u8> = pairs.iter().flat_map(|(k, _)| k.iter().copied()).collect();
        let values: Vec<u8> = pairs.iter().flat_map(|(_, v)| v.iter().copied()).collect();
        fs::write(self.dir.join(KEYS_FILE), keys)?;
        fs::write(self.dir.join(VALUES_FILE), values)?;
        Ok(())
    }
}

impl SharedAccess for Floor {
    fn get(&self, key: &[u8]) -> Result<Option<u64>> {
        // The copy is what a copying get costs: an allocation and a memcpy.
        Ok(self
            .find(key)?
            .map(|v| touch(&std::hint::black_box(v.to_vec()))))
    }

    fn put(&self, _key: &[u8], _value: &[u8]) -> Result<()> {
        Err(super::unsupported("write after the load"))
    }
}

impl Engine for Floor {
    fn open(dir: &Path, sizing: &Sizing) -> Result<Self> {
        let keys_path = dir.join(KEYS_FILE);
        let (keys, values) = if keys_path.exists() {
            let keys = SortedKeys::from_file(fs::read(&keys_path)?, sizing.key_bytes);
            let file = File::open(dir.join(VALUES_FILE))?;
            // SAFETY: the file is this benchmark's private file in its own
            // temporary directory; nothing writes or truncates it while the
            // map is alive (the floor never writes after the load).
            let map = unsafe { Mmap::map(&file) }?;
            (keys, Some(map))
        } else {
            (SortedKeys::Integers(Vec::new()), None)
        };
        Ok(Floor {
            dir: dir.to_path_buf(),
            value_bytes: sizing.value_bytes,
            keys,
            values,
            loading: Vec::new(),
        })
    }

    fn supports(workload: Workload) -> bool {
        matches!(
            workload,
            Workload::Reopen
                | Workload::Get
                | Workload::GetPinned
                | Workload::GetAbsent
                | Workload::GetZipf
                | Workload::MultiGet
                | Workload::Get2r
                | Workload::Seek10
                | Workload::Scan
                | Workload::DiskBytes
                | Workload::DiskSettled
                | Workload::IndexBytes
                | Workload::PeakRss
        )
    }

    fn write_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        if self.values.is_some() {
            return Err(super::unsupported("write after the load"));
        }
        self.loading
            .extend(pairs.iter().map(|(k, v)| (k.to_vec(), v.to_vec())));
        Ok(())
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.write_batch(&[(key, value)])
    }

    fn get(&mut self, key: &[u8]) -> Result<Option<u64>> {
        SharedAccess::get(self, key)
    }

    fn get_pinned(&mut self, key: &[u8]) -> Result<Option<u64>> {
        Ok(self.find(key)?.map(touch))
    }

    fn seek_next(&mut self, key: &[u8], nexts: usize) -> Result<(u64, usize)> {
        let (first, _) = self.keys.lower_bound(key);
        let end = first
            .saturating_add(nexts)
            .saturating_add(1)
            .min(self.keys.len());
        let mut sum = 0;
        for i in first..end {
            sum += self.keys.key_touch(i) + touch(self.value(i)?);
        }
        Ok((sum, end - first))
    }

    fn scan(&mut self) -> Result<(u64, usize)> {
        self.seek_next(&[], usize::MAX - 1)
    }

    fn index_bytes(&self) -> Option<u64> {
        let per_key = match &self.keys {
            SortedKeys::Integers(_) => 8,
            SortedKeys::Fixed { width, .. } => *width,
        };
        Some((self.keys.len() * per_key) as u64)
    }

    fn shared(&self) -> Option<&dyn SharedAccess> {
        Some(self)
    }

    fn close(mut self) -> Result<()> {
        if !self.loading.is_empty() {
            self.write_files()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizing(keys: usize, key_bytes: usize) -> Sizing {
        Sizing {
            keys,
            key_bytes,
            value_bytes: 4,
        }
    }

    fn loaded(keys: &[&[u8]], key_bytes: usize) -> (tempfile::TempDir, Floor) {
        let dir = tempfile::tempdir().unwrap();
        let s = sizing(keys.len(), key_bytes);
        let mut floor = Floor::open(dir.path(), &s).unwrap();
        let pairs: Vec<(&[u8], &[u8])> = keys.iter().map(|k| (*k, &k[..4])).collect();
        floor.write_batch(&pairs).unwrap();
        floor.close().unwrap();
        let floor = Floor::open(dir.path(), &s).unwrap();
        (dir, floor)
    }

    #[test]
    fn integer_keys_found_by_binary_search_with_their_values() {
        let keys: Vec<[u8; 8]> = [30u64, 10, 20].map(u64::to_be_bytes).to_vec();
        let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let (_dir, mut floor) = loaded(&refs, 8);
        assert_eq!(
            floor.find(&20u64.to_be_bytes()).unwrap(),
            Some(&20u64.to_be_bytes()[..4])
        );
        assert_eq!(floor.get(&15u64.to_be_bytes()).unwrap(), None);
        assert_eq!(floor.scan().unwrap().1, 3);
        assert_eq!(floor.seek_next(&15u64.to_be_bytes(), 10).unwrap().1, 2);
    }

    #[test]
    fn fixed_width_keys_found_by_binary_search() {
        let (_dir, mut floor) = loaded(&[b"key-c", b"key-a", b"key-b"], 5);
        assert_eq!(floor.find(b"key-b").unwrap(), Some(&b"key-"[..]));
        assert_eq!(floor.get(b"key-0").unwrap(), None);
        assert_eq!(floor.seek_next(b"key-b", 0).unwrap().1, 1);
        assert!(floor.write_batch(&[(b"key-d", b"1234")]).is_err());
    }
}
