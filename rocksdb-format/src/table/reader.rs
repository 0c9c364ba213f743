//! An open block-based table: footer, metaindex, properties, the list of
//! data blocks (from a one- or two-level index) and its range tombstones.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::checksum::{ChecksumType, context_modifier};
use crate::error::{FormatError, Result};
use crate::internal_key;
use crate::table::block;
use crate::table::compression;
use crate::table::footer::{self, FOOTER_SIZE, Footer};
use crate::table::handle::{BLOCK_TRAILER_SIZE, BlockHandle};
use crate::table::properties::{self, IndexType, Properties};

/// Refuse blocks larger than this (a damaged handle).
const MAX_BLOCK_SIZE: u64 = 1 << 31;

/// A range tombstone: deletes keys in `start..end` older than `sequence`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeTombstone {
    /// The first deleted user key.
    pub start: Vec<u8>,
    /// The end (exclusive) user key.
    pub end: Vec<u8>,
    /// The tombstone's sequence number.
    pub sequence: u64,
}

/// Where a table's bytes come from.
#[derive(Debug)]
enum Source {
    File { file: File, size: u64 },
    Bytes(Vec<u8>),
}

impl Source {
    fn size(&self) -> u64 {
        match self {
            Source::File { size, .. } => *size,
            Source::Bytes(b) => b.len() as u64,
        }
    }

    fn read_at(&mut self, path: &Path, offset: u64, len: usize) -> Result<Vec<u8>> {
        let size = self.size();
        if offset.checked_add(len as u64).is_none_or(|end| end > size) {
            return Err(FormatError::corrupt(
                path.display().to_string(),
                format!("block at {offset}+{len} lies past the end of the {size}-byte file"),
            ));
        }
        match self {
            Source::Bytes(b) => Ok(b[offset as usize..offset as usize + len].to_vec()),
            Source::File { file, .. } => {
                let mut buf = vec![0u8; len];
                file.seek(SeekFrom::Start(offset))
                    .and_then(|_| file.read_exact(&mut buf))
                    .map_err(|e| FormatError::io(path, e))?;
                Ok(buf)
            }
        }
    }
}

/// A table file opened for reading.
#[derive(Debug)]
pub struct Table {
    path: PathBuf,
    source: Source,
    footer: Footer,
    /// The table's properties.
    pub properties: Properties,
    /// The data blocks in key order, each with its separator user key (at
    /// least the largest user key in the block).
    pub data_blocks: Arc<Vec<(Vec<u8>, BlockHandle)>>,
    /// The table's range tombstones.
    pub range_tombstones: Vec<RangeTombstone>,
}

/// What reading a table's data needs once its metadata was read: kept by
/// [`crate::RocksDir`] so a scan or a point read opens only the file.
#[derive(Debug, Clone)]
pub struct TableMeta {
    path: PathBuf,
    footer: Footer,
    properties: Properties,
    data_blocks: Arc<Vec<(Vec<u8>, BlockHandle)>>,
}

impl TableMeta {
    /// The table's properties.
    pub fn properties(&self) -> &Properties {
        &self.properties
    }
}

/// The meta blocks named by the metaindex.
#[derive(Default)]
struct MetaIndex {
    properties: Option<BlockHandle>,
    range_del: Option<BlockHandle>,
    index: Option<BlockHandle>,
}

impl Table {
    /// Opens the table at `path`, reading everything but its data blocks.
    pub fn open(path: &Path) -> Result<Table> {
        let file = File::open(path).map_err(|e| FormatError::io(path, e))?;
        let size = file.metadata().map_err(|e| FormatError::io(path, e))?.len();
        Table::from_source(path, Source::File { file, size })
    }

    /// The metadata needed to [`Table::reopen`] this table later.
    pub fn meta(&self) -> TableMeta {
        TableMeta {
            path: self.path.clone(),
            footer: self.footer,
            properties: self.properties.clone(),
            data_blocks: Arc::clone(&self.data_blocks),
        }
    }

    /// Opens the file of a table whose metadata was read before.
    pub fn reopen(meta: &TableMeta) -> Result<Table> {
        let path = &meta.path;
        let file = File::open(path).map_err(|e| FormatError::io(path, e))?;
        let size = file.metadata().map_err(|e| FormatError::io(path, e))?.len();
        Ok(Table {
            path: path.clone(),
            source: Source::File { file, size },
            footer: meta.footer,
            properties: meta.properties.clone(),
            data_blocks: Arc::clone(&meta.data_blocks),
            range_tombstones: Vec::new(),
        })
    }

    /// Opens a table held in memory; `name` names it in errors.
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<Table> {
        Table::from_source(Path::new(name), Source::Bytes(bytes))
    }

    fn from_source(path: &Path, mut source: Source) -> Result<Table> {
        let size = source.size();
        let tail_at = size.checked_sub(FOOTER_SIZE as u64).ok_or_else(|| {
            FormatError::corrupt(path.display().to_string(), "too short to be a table")
        })?;
        let tail = source.read_at(path, tail_at, FOOTER_SIZE)?;
        let footer = footer::decode(&tail, size)?;
        let mut table = Table {
            path: path.to_path_buf(),
            source,
            footer,
            properties: placeholder_properties(),
            data_blocks: Arc::default(),
            range_tombstones: Vec::new(),
        };
        table.load_meta()?;
        Ok(table)
    }

    fn load_meta(&mut self) -> Result<()> {
        let meta = self.read_metaindex()?;
        let props = meta
            .properties
            .ok_or_else(|| self.corrupt("no properties block"))?;
        self.properties = properties::decode(&self.read_block(props)?)?;
        let index = meta
            .index
            .or(self.footer.index)
            .ok_or_else(|| self.corrupt("no index block"))?;
        self.data_blocks = Arc::new(self.read_index(index)?);
        if let Some(h) = meta.range_del {
            self.range_tombstones = self.read_range_tombstones(h)?;
        }
        Ok(())
    }

    fn corrupt(&self, detail: &str) -> FormatError {
        FormatError::corrupt(self.path.display().to_string(), detail)
    }

    fn read_metaindex(&mut self) -> Result<MetaIndex> {
        let bytes = self.read_block(self.footer.metaindex)?;
        let mut meta = MetaIndex::default();
        for e in block::entries(&bytes, "metaindex block")? {
            let handle = || BlockHandle::from_value(&bytes[e.value.clone()], "metaindex block");
            match e.key.as_slice() {
                b"rocksdb.properties" => meta.properties = Some(handle()?),
                b"rocksdb.range_del" => meta.range_del = Some(handle()?),
                b"rocksdb.index" => meta.index = Some(handle()?),
                b"rocksdb.compression_dict" => {
                    return Err(FormatError::unsupported("compression dictionaries"));
                }
                _ => {}
            }
        }
        Ok(meta)
    }

    fn read_index(&mut self, index: BlockHandle) -> Result<Vec<(Vec<u8>, BlockHandle)>> {
        let delta = self.properties.index_value_is_delta_encoded;
        let top = block::index_handles(&self.read_block(index)?, delta, "index block")?;
        let top = self.user_keys(top)?;
        if self.properties.index_type != IndexType::TwoLevel {
            return Ok(top);
        }
        let mut out = Vec::new();
        for (_, partition) in top {
            let bytes = self.read_block(partition)?;
            let entries = block::index_handles(&bytes, delta, "index partition")?;
            out.extend(self.user_keys(entries)?);
        }
        Ok(out)
    }

    /// Index keys are internal keys unless `index_key_is_user_key`.
    fn user_keys(
        &self,
        entries: Vec<(Vec<u8>, BlockHandle)>,
    ) -> Result<Vec<(Vec<u8>, BlockHandle)>> {
        if self.properties.index_key_is_user_key {
            return Ok(entries);
        }
        entries
            .into_iter()
            .map(|(k, h)| Ok((internal_key::split(&k)?.0.to_vec(), h)))
            .collect()
    }

    fn read_range_tombstones(&mut self, h: BlockHandle) -> Result<Vec<RangeTombstone>> {
        let bytes = self.read_block(h)?;
        let mut out = Vec::new();
        for e in block::entries(&bytes, "range deletion block")? {
            let (start, sequence, _) = internal_key::split(&e.key)?;
            out.push(RangeTombstone {
                start: start.to_vec(),
                end: bytes[e.value].to_vec(),
                sequence,
            });
        }
        Ok(out)
    }

    /// Reads, verifies and decompresses the block at `h`.
    pub fn read_block(&mut self, h: BlockHandle) -> Result<Vec<u8>> {
        if h.size > MAX_BLOCK_SIZE {
            return Err(self.corrupt("block handle too large"));
        }
        let len = (h.size + BLOCK_TRAILER_SIZE) as usize;
        let raw = self.source.read_at(&self.path, h.offset, len)?;
        let (data, trailer) = raw.split_at(h.size as usize);
        let kind = trailer[0];
        let stored = u32::from_le_bytes([trailer[1], trailer[2], trailer[3], trailer[4]]);
        self.verify(data, kind, stored, h.offset)?;
        compression::decompress(kind, data)
    }

    fn verify(&self, data: &[u8], kind: u8, stored: u32, offset: u64) -> Result<()> {
        let checksum = self.footer.checksum;
        if checksum == ChecksumType::None {
            return Ok(());
        }
        let got = checksum
            .of_block(data, kind)
            .wrapping_add(context_modifier(self.footer.base_context, offset));
        if got != stored {
            return Err(FormatError::ChecksumMismatch {
                what: format!("{} block at offset {offset}", self.path.display()),
                got,
                expected: stored,
            });
        }
        Ok(())
    }
}

fn placeholder_properties() -> Properties {
    Properties {
        comparator: None,
        column_family_id: None,
        compression: None,
        index_type: IndexType::Binary,
        index_value_is_delta_encoded: false,
        index_key_is_user_key: false,
        num_entries: 0,
    }
}
