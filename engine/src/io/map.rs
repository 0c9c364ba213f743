//! A read-only memory map of a file: the one `unsafe` map of a file in the
//! I/O layer (the calls it advises with are in [`super::os`]).

use std::fs::File;
use std::io;
use std::ops::Deref;

/// A read-only, shared memory map of the start of a file.
///
/// Writes to the file through its descriptor become visible through the
/// map (the page cache is shared). The engine never shrinks a mapped file,
/// so reads within the map never fault with SIGBUS.
#[derive(Debug)]
pub struct ReadOnlyMap {
    /// Declared first, so that it is unmapped before `_claim` drops.
    map: Option<memmap2::Mmap>,
    /// What the platform keeps while the map lives (see
    /// `io::os::claim_map`).
    _claim: Option<super::os::MapClaim>,
}

impl ReadOnlyMap {
    /// Maps the first `len` bytes of `file` read-only (on Windows, growing
    /// the file to `len` first: see `io::os::claim_map`).
    pub fn new(file: &File, len: u64) -> io::Result<Self> {
        if len == 0 {
            return Ok(Self::empty());
        }
        let (claim, len) = super::os::claim_map(file, len)?;
        if len == 0 {
            return Ok(Self::empty());
        }
        let len = usize::try_from(len).map_err(|_| io::Error::other("map too large"))?;
        // SAFETY: memmap2 requires that the file is not modified in a way that
        // invalidates the map while it is alive. The engine only appends to
        // its files through the descriptor within the mapped (pre-sized)
        // range, never truncates a file that may be mapped, and documents
        // that users must not modify the database files from outside.
        let map = unsafe { memmap2::MmapOptions::new().len(len).map(file)? };
        Ok(ReadOnlyMap {
            map: Some(map),
            _claim: Some(claim),
        })
    }

    /// A map of nothing.
    pub fn empty() -> Self {
        ReadOnlyMap {
            map: None,
            _claim: None,
        }
    }
}

impl ReadOnlyMap {
    /// An anonymous read-only map holding a copy of `bytes`: for test
    /// backends that hand the engine a map whose contents differ from the
    /// file (see [`super::faulty::Faults::hostile_holes`]).
    pub fn copy_of(bytes: &[u8]) -> io::Result<Self> {
        if bytes.is_empty() {
            return Ok(Self::empty());
        }
        let mut map = memmap2::MmapMut::map_anon(bytes.len())?;
        map.copy_from_slice(bytes);
        Ok(ReadOnlyMap {
            map: Some(map.make_read_only()?),
            _claim: None,
        })
    }
}

impl ReadOnlyMap {
    /// Asks the kernel to back the map with huge pages where it can
    /// (`MADV_HUGEPAGE`, after `MADV_NORMAL` undoes a random-access
    /// advice): a fault then reads a whole aligned 2 MiB of the file into
    /// one folio. Advisory: a kernel without transparent huge pages refuses
    /// it, and the map works as before. Linux only (elsewhere it undoes a
    /// random-access advice; nothing on Windows).
    pub fn advise_huge_pages(&self) {
        if let Some(map) = &self.map {
            super::os::advise_huge_pages(map);
        }
    }

    /// Tells the kernel the map is read at random (`MADV_RANDOM`, after
    /// `MADV_NOHUGEPAGE` undoes a huge-page advice): a fault reads the page
    /// it needs and no read-around. Advisory, as above; nothing on Windows.
    pub fn advise_random(&self) {
        if let Some(map) = &self.map {
            super::os::advise_random(map);
        }
    }

    /// Asks the kernel to start reading `len` bytes at `offset` in
    /// (`MADV_WILLNEED`), without waiting: what a reader about to walk
    /// them in order asks for when the map is advised random access.
    /// Advisory; a range past the map is cut to it.
    pub fn will_need(&self, offset: usize, len: usize) {
        if let Some(map) = &self.map {
            let offset = offset.min(map.len());
            let len = len.min(map.len() - offset);
            if len > 0 {
                super::os::will_need(map, offset, len);
            }
        }
    }
}

impl Deref for ReadOnlyMap {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}
