//! Decoding one MANIFEST record, a `VersionEdit`: a sequence of tagged
//! fields (varint32 tag, then a tag-specific payload).

use crate::coding::Reader;
use crate::error::{FormatError, Result};

const WHAT: &str = "MANIFEST version edit";

mod tag {
    pub const COMPARATOR: u32 = 1;
    pub const LOG_NUMBER: u32 = 2;
    pub const NEXT_FILE_NUMBER: u32 = 3;
    pub const LAST_SEQUENCE: u32 = 4;
    pub const COMPACT_CURSOR: u32 = 5;
    pub const DELETED_FILE: u32 = 6;
    pub const NEW_FILE: u32 = 7;
    pub const PREV_LOG_NUMBER: u32 = 9;
    pub const MIN_LOG_NUMBER_TO_KEEP: u32 = 10;
    pub const NEW_FILE2: u32 = 100;
    pub const NEW_FILE3: u32 = 102;
    pub const NEW_FILE4: u32 = 103;
    pub const COLUMN_FAMILY: u32 = 200;
    pub const COLUMN_FAMILY_ADD: u32 = 201;
    pub const COLUMN_FAMILY_DROP: u32 = 202;
    pub const MAX_COLUMN_FAMILY: u32 = 203;
    pub const IN_ATOMIC_GROUP: u32 = 300;
    pub const BLOB_FILE_ADDITION: u32 = 400;
    pub const BLOB_FILE_GARBAGE: u32 = 401;
    /// Unknown tags with this bit are length-prefixed and may be skipped.
    pub const SAFE_IGNORE_MASK: u32 = 1 << 13;
    pub const BLOB_FILE_ADDITION_DEPRECATED: u32 = SAFE_IGNORE_MASK + 2;
}

mod file_tag {
    pub const TERMINATE: u32 = 1;
    pub const PATH_ID: u32 = 65;
    /// Unknown custom fields with this bit must not be ignored.
    pub const NON_SAFE_IGNORE_MASK: u32 = 1 << 6;
}

/// A table file added to a level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFile {
    /// The level (0 = newest, overlapping files).
    pub level: u32,
    /// The file number: the table is `{number:06}.sst`.
    pub number: u64,
    /// The file's size in bytes.
    pub size: u64,
    /// The smallest internal key in the file.
    pub smallest: Vec<u8>,
    /// The largest internal key in the file (range tombstones included).
    pub largest: Vec<u8>,
}

/// The decoded fields of one `VersionEdit`; absent fields are `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionEdit {
    /// The comparator's name.
    pub comparator: Option<String>,
    /// WALs older than this hold nothing unflushed for the column family.
    pub log_number: Option<u64>,
    /// The previous log number (obsolete).
    pub prev_log_number: Option<u64>,
    /// The next file number to allocate.
    pub next_file_number: Option<u64>,
    /// The last sequence number used.
    pub last_sequence: Option<u64>,
    /// WALs older than this may be deleted.
    pub min_log_number_to_keep: Option<u64>,
    /// The column family the edit applies to (0 when absent).
    pub column_family: u32,
    /// A column family created by this edit, with its name.
    pub column_family_add: Option<String>,
    /// Whether this edit drops its column family.
    pub column_family_drop: bool,
    /// The largest column family id allocated.
    pub max_column_family: Option<u32>,
    /// When part of an atomic group: how many edits of it remain after this.
    pub remaining_in_atomic_group: Option<u32>,
    /// Table files removed: (level, number).
    pub deleted_files: Vec<(u32, u64)>,
    /// Table files added.
    pub new_files: Vec<NewFile>,
}

/// Decodes one `VersionEdit` record.
pub fn decode(record: &[u8]) -> Result<VersionEdit> {
    let mut r = Reader::new(record, WHAT);
    let mut edit = VersionEdit::default();
    while !r.is_empty() {
        let tag = r.varint32("tag")?;
        decode_field(&mut r, tag, &mut edit)?;
    }
    Ok(edit)
}

fn decode_field(r: &mut Reader<'_>, tag: u32, edit: &mut VersionEdit) -> Result<()> {
    match tag {
        tag::COMPARATOR => edit.comparator = Some(utf8(r.length_prefixed("comparator")?)?),
        tag::LOG_NUMBER => edit.log_number = Some(r.varint64("log number")?),
        tag::PREV_LOG_NUMBER => edit.prev_log_number = Some(r.varint64("prev log number")?),
        tag::NEXT_FILE_NUMBER => edit.next_file_number = Some(r.varint64("next file number")?),
        tag::LAST_SEQUENCE => edit.last_sequence = Some(r.varint64("last sequence")?),
        tag::MIN_LOG_NUMBER_TO_KEEP => {
            edit.min_log_number_to_keep = Some(r.varint64("min log number to keep")?)
        }
        tag::COMPACT_CURSOR => {
            r.varint32("compact cursor level")?;
            r.length_prefixed("compact cursor key")?;
        }
        tag::DELETED_FILE => {
            let level = r.varint32("deleted file level")?;
            edit.deleted_files
                .push((level, r.varint64("deleted file number")?));
        }
        tag::NEW_FILE | tag::NEW_FILE2 | tag::NEW_FILE3 | tag::NEW_FILE4 => {
            edit.new_files.push(decode_new_file(r, tag)?)
        }
        tag::COLUMN_FAMILY => edit.column_family = r.varint32("column family")?,
        tag::COLUMN_FAMILY_ADD => {
            edit.column_family_add = Some(utf8(r.length_prefixed("column family name")?)?)
        }
        tag::COLUMN_FAMILY_DROP => edit.column_family_drop = true,
        tag::MAX_COLUMN_FAMILY => edit.max_column_family = Some(r.varint32("max column family")?),
        tag::IN_ATOMIC_GROUP => edit.remaining_in_atomic_group = Some(r.varint32("atomic group")?),
        tag::BLOB_FILE_ADDITION | tag::BLOB_FILE_GARBAGE | tag::BLOB_FILE_ADDITION_DEPRECATED => {
            return Err(FormatError::unsupported(
                "BlobDB blob files (integrated BlobDB)",
            ));
        }
        t if t & tag::SAFE_IGNORE_MASK != 0 => {
            r.length_prefixed("ignorable field")?;
        }
        t => {
            return Err(FormatError::unsupported(format!(
                "MANIFEST record tag {t}, from a newer RocksDB, that must not be ignored"
            )));
        }
    }
    Ok(())
}

fn decode_new_file(r: &mut Reader<'_>, tag: u32) -> Result<NewFile> {
    let level = r.varint32("new file level")?;
    let number = r.varint64("new file number")?;
    if tag == tag::NEW_FILE3 {
        check_path_id(u64::from(r.varint32("new file path id")?))?;
    }
    let size = r.varint64("new file size")?;
    let smallest = r.length_prefixed("new file smallest key")?.to_vec();
    let largest = r.length_prefixed("new file largest key")?.to_vec();
    if tag != tag::NEW_FILE {
        r.varint64("new file smallest seqno")?;
        r.varint64("new file largest seqno")?;
    }
    if tag == tag::NEW_FILE4 {
        skip_custom_fields(r)?;
    }
    Ok(NewFile {
        level,
        number,
        size,
        smallest,
        largest,
    })
}

/// kNewFile4's custom fields: (varint32 tag, length-prefixed value) until
/// kTerminate. Only the path id changes how we read; unknown fields with
/// the non-ignorable bit are refused.
fn skip_custom_fields(r: &mut Reader<'_>) -> Result<()> {
    loop {
        let field = r.varint32("new file custom tag")?;
        if field == file_tag::TERMINATE {
            return Ok(());
        }
        let value = r.length_prefixed("new file custom field")?;
        if field == file_tag::PATH_ID {
            let id = value.first().copied().unwrap_or(0);
            check_path_id(u64::from(id))?;
        } else if field & file_tag::NON_SAFE_IGNORE_MASK != 0 {
            return Err(FormatError::unsupported(format!(
                "table file field {field}, from a newer RocksDB, that must not be ignored"
            )));
        }
    }
}

fn check_path_id(id: u64) -> Result<()> {
    if id == 0 {
        Ok(())
    } else {
        Err(FormatError::unsupported(format!(
            "table files in db_paths/cf_paths other than the database directory (path id {id})"
        )))
    }
}

fn utf8(bytes: &[u8]) -> Result<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| FormatError::corrupt(WHAT, "name is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coding::put_varint64;

    fn field(out: &mut Vec<u8>, tag: u32, body: &[u8]) {
        put_varint64(out, u64::from(tag));
        out.extend_from_slice(body);
    }

    fn slice(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint64(&mut out, bytes.len() as u64);
        out.extend_from_slice(bytes);
        out
    }

    #[test]
    fn decodes_new_file4_with_custom_fields() {
        let mut body = vec![2, 9, 100];
        body.extend(slice(b"aaaaaaaa\x01\x00\x00\x00\x00\x00\x00\x00"));
        body.extend(slice(b"zzzzzzzz\x01\x00\x00\x00\x00\x00\x00\x00"));
        body.extend([5, 6]);
        body.extend([13, 1, 42]); // epoch number
        body.push(1);
        let mut rec = Vec::new();
        field(&mut rec, tag::COLUMN_FAMILY, &[3]);
        field(&mut rec, tag::NEW_FILE4, &body);
        field(&mut rec, tag::LOG_NUMBER, &[7]);
        let edit = decode(&rec).unwrap();
        assert_eq!(edit.column_family, 3);
        assert_eq!(edit.log_number, Some(7));
        assert_eq!(edit.new_files[0].level, 2);
        assert_eq!(edit.new_files[0].number, 9);
        assert_eq!(edit.new_files[0].size, 100);
    }

    #[test]
    fn ignorable_tag_is_skipped_and_unknown_tag_refused() {
        let mut rec = Vec::new();
        field(&mut rec, tag::SAFE_IGNORE_MASK + 1, &slice(b"db-id"));
        field(&mut rec, tag::LAST_SEQUENCE, &[9]);
        assert_eq!(decode(&rec).unwrap().last_sequence, Some(9));
        let mut bad = Vec::new();
        field(&mut bad, 55, &[0]);
        assert!(matches!(decode(&bad), Err(FormatError::Unsupported { .. })));
    }

    #[test]
    fn truncated_edit_is_corrupt() {
        let mut rec = Vec::new();
        field(&mut rec, tag::COMPARATOR, &[10, b'a']);
        assert!(matches!(decode(&rec), Err(FormatError::Corrupt { .. })));
    }

    #[test]
    fn blob_files_are_refused() {
        let mut rec = Vec::new();
        field(&mut rec, tag::BLOB_FILE_ADDITION, &[]);
        assert!(matches!(decode(&rec), Err(FormatError::Unsupported { .. })));
    }
}
