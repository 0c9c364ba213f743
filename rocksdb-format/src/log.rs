//! RocksDB's log format, shared by the MANIFEST and the WAL: the file is a
//! sequence of 32 KiB blocks; each block holds physical records
//! (`crc32c:u32 | length:u16 | type:u8 [| log_number:u32] | payload`), a
//! logical record being one FULL fragment or FIRST, MIDDLE…, LAST. A block
//! tail shorter than a header is zero padding. The "recyclable" types carry
//! the number of the log they were written to, so stale records of a reused
//! file are recognised as its end.

use crate::checksum::masked_crc32c;
use crate::error::{FormatError, Result};

/// Size of a log block.
pub const BLOCK_SIZE: usize = 32 * 1024;
/// Header of a legacy record: checksum, length, type.
pub const HEADER_SIZE: usize = 4 + 2 + 1;
/// Header of a recyclable record: the legacy header and the log number.
pub const RECYCLABLE_HEADER_SIZE: usize = HEADER_SIZE + 4;
/// Record types with this bit set may be skipped by readers that do not
/// know them.
const SAFE_IGNORE_MASK: u8 = 1 << 7;

/// One logical record of a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A user record (a `VersionEdit` or a `WriteBatch`).
    Data(Vec<u8>),
    /// A `kSetCompressionType` record: the WAL's compression from here on.
    SetCompression(Vec<u8>),
    /// A user-defined timestamp size record: column family id → size.
    TimestampSizes(Vec<u8>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fragment {
    Full,
    First,
    Middle,
    Last,
}

/// Kinds of physical record, from the type byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Zero,
    Data(Fragment),
    SetCompression,
    TimestampSizes,
    Ignorable,
}

/// The kind of a type byte and whether its header carries a log number.
fn classify(t: u8) -> Result<(Kind, bool)> {
    Ok(match t {
        0 => (Kind::Zero, false),
        1 => (Kind::Data(Fragment::Full), false),
        2 => (Kind::Data(Fragment::First), false),
        3 => (Kind::Data(Fragment::Middle), false),
        4 => (Kind::Data(Fragment::Last), false),
        5 => (Kind::Data(Fragment::Full), true),
        6 => (Kind::Data(Fragment::First), true),
        7 => (Kind::Data(Fragment::Middle), true),
        8 => (Kind::Data(Fragment::Last), true),
        9 => (Kind::SetCompression, false),
        10 => (Kind::TimestampSizes, false),
        11 => (Kind::TimestampSizes, true),
        t if t & SAFE_IGNORE_MASK != 0 => (Kind::Ignorable, t & 1 == 1),
        t => {
            return Err(FormatError::corrupt(
                "log",
                format!("unknown record type {t}"),
            ));
        }
    })
}

/// Reads the logical records of one log file held in memory.
#[derive(Debug)]
pub struct LogReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    log_number: u64,
    what: String,
}

/// One physical record.
struct Physical<'a> {
    kind: Kind,
    payload: &'a [u8],
}

impl<'a> LogReader<'a> {
    /// A reader over the log `bytes`, the file numbered `log_number`
    /// (recyclable records of another number end the log); `what` names it
    /// in errors.
    pub fn new(bytes: &'a [u8], log_number: u64, what: impl Into<String>) -> Self {
        LogReader {
            bytes,
            pos: 0,
            log_number,
            what: what.into(),
        }
    }

    fn corrupt(&self, detail: String) -> FormatError {
        FormatError::corrupt(
            self.what.clone(),
            format!("{detail} at offset {}", self.pos),
        )
    }

    /// The next logical record, `None` at the end of the log. A record cut
    /// short by the end of the file (a torn final write) ends the log; a
    /// checksum mismatch or a malformed record is an error.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        let mut pending: Option<Vec<u8>> = None;
        loop {
            let Some(rec) = self.next_physical()? else {
                return Ok(None);
            };
            let fragment = match rec.kind {
                Kind::Data(f) => f,
                Kind::SetCompression => {
                    return Ok(Some(Record::SetCompression(rec.payload.to_vec())));
                }
                Kind::TimestampSizes => {
                    return Ok(Some(Record::TimestampSizes(rec.payload.to_vec())));
                }
                Kind::Zero | Kind::Ignorable => continue,
            };
            if let Some(done) = self.assemble(&mut pending, fragment, rec.payload)? {
                return Ok(Some(Record::Data(done)));
            }
        }
    }

    fn assemble(
        &self,
        pending: &mut Option<Vec<u8>>,
        fragment: Fragment,
        payload: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        match (fragment, pending.as_mut()) {
            (Fragment::Full, None) => Ok(Some(payload.to_vec())),
            (Fragment::First, None) => {
                *pending = Some(payload.to_vec());
                Ok(None)
            }
            (Fragment::Middle, Some(buf)) => {
                buf.extend_from_slice(payload);
                Ok(None)
            }
            (Fragment::Last, Some(buf)) => {
                buf.extend_from_slice(payload);
                Ok(pending.take())
            }
            (f, Some(_)) => {
                Err(self.corrupt(format!("{f:?} fragment inside an unfinished record")))
            }
            (f, None) => Err(self.corrupt(format!("{f:?} fragment without a FIRST"))),
        }
    }

    /// The next physical record, skipping block trailers and zero-filled
    /// (preallocated) space; `None` at the end of the file or of the
    /// records written to this (possibly recycled) log.
    fn next_physical(&mut self) -> Result<Option<Physical<'a>>> {
        loop {
            let in_block = self.pos % BLOCK_SIZE;
            let block_left = BLOCK_SIZE - in_block;
            if block_left < HEADER_SIZE {
                self.pos += block_left;
                continue;
            }
            let Some(header) = self.bytes.get(self.pos..self.pos + HEADER_SIZE) else {
                return Ok(None);
            };
            let stored = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
            let length = usize::from(u16::from_le_bytes([header[4], header[5]]));
            let (kind, recyclable) = classify(header[6])?;
            if kind == Kind::Zero && length == 0 {
                // Preallocated space: nothing more in this block.
                self.pos += block_left;
                continue;
            }
            return self.finish_physical(stored, length, kind, recyclable, block_left);
        }
    }

    fn finish_physical(
        &mut self,
        stored: u32,
        length: usize,
        kind: Kind,
        recyclable: bool,
        block_left: usize,
    ) -> Result<Option<Physical<'a>>> {
        let header_len = if recyclable {
            RECYCLABLE_HEADER_SIZE
        } else {
            HEADER_SIZE
        };
        let end = self.pos + header_len + length;
        if header_len + length > block_left {
            if end > self.bytes.len() {
                return Ok(None);
            }
            return Err(self.corrupt(format!("record of {length} bytes crosses its block")));
        }
        let Some(record) = self.bytes.get(self.pos..end) else {
            return Ok(None); // torn at the end of the file
        };
        let covered = &record[6..];
        let computed = masked_crc32c(&[covered]);
        if computed != stored {
            return Err(FormatError::ChecksumMismatch {
                what: format!("{} record at offset {}", self.what, self.pos),
                got: computed,
                expected: stored,
            });
        }
        if recyclable {
            let n = u32::from_le_bytes([record[7], record[8], record[9], record[10]]);
            if u64::from(n) != self.log_number & 0xffff_ffff {
                return Ok(None); // a stale record of the file's previous use
            }
        }
        self.pos = end;
        Ok(Some(Physical {
            kind,
            payload: &record[header_len..],
        }))
    }
}

/// Reads every data record of a log, failing on metadata records other
/// than ignorable ones (the MANIFEST carries none).
pub fn read_all(bytes: &[u8], log_number: u64, what: &str) -> Result<Vec<Vec<u8>>> {
    let mut reader = LogReader::new(bytes, log_number, what);
    let mut out = Vec::new();
    while let Some(rec) = reader.next_record()? {
        match rec {
            Record::Data(d) => out.push(d),
            other => {
                return Err(FormatError::corrupt(
                    what.to_string(),
                    format!("unexpected metadata record {other:?}"),
                ));
            }
        }
    }
    Ok(out)
}

/// Writes `records` in the log format (tests build logs with it).
#[cfg(test)]
pub(crate) fn write_log(records: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for rec in records {
        let mut rest: &[u8] = rec;
        let mut first = true;
        loop {
            let left = BLOCK_SIZE - out.len() % BLOCK_SIZE;
            if left < HEADER_SIZE {
                out.resize(out.len() + left, 0);
                continue;
            }
            let room = left - HEADER_SIZE;
            let take = rest.len().min(room);
            let last = take == rest.len();
            let t: u8 = match (first, last) {
                (true, true) => 1,
                (true, false) => 2,
                (false, false) => 3,
                (false, true) => 4,
            };
            let (chunk, tail) = rest.split_at(take);
            let crc = masked_crc32c(&[&[t], chunk]);
            out.extend_from_slice(&crc.to_le_bytes());
            out.extend_from_slice(&(take as u16).to_le_bytes());
            out.push(t);
            out.extend_from_slice(chunk);
            rest = tail;
            first = false;
            if last {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_reassemble_across_blocks() {
        let big = vec![7u8; BLOCK_SIZE * 2 + 100];
        let small = b"small".to_vec();
        let log = write_log(&[&small, &big, &small]);
        let got = read_all(&log, 1, "log").unwrap();
        assert_eq!(got, vec![small.clone(), big, small]);
    }

    #[test]
    fn block_trailer_padding_is_skipped() {
        let first = vec![1u8; BLOCK_SIZE - HEADER_SIZE - 3];
        let log = write_log(&[&first, b"next"]);
        assert_eq!(read_all(&log, 1, "log").unwrap()[1], b"next");
    }

    #[test]
    fn torn_tail_ends_the_log() {
        let log = write_log(&[b"one", b"two"]);
        let got = read_all(&log[..log.len() - 1], 1, "log").unwrap();
        assert_eq!(got, vec![b"one".to_vec()]);
    }

    #[test]
    fn flipped_payload_byte_is_a_checksum_error() {
        let mut log = write_log(&[b"one", b"two"]);
        log[HEADER_SIZE] ^= 1;
        assert!(matches!(
            read_all(&log, 1, "log"),
            Err(FormatError::ChecksumMismatch { .. })
        ));
    }

    #[test]
    fn middle_without_first_is_corrupt() {
        let mut log = write_log(&[b"one"]);
        log[6] = 3;
        let crc = masked_crc32c(&[&log[6..]]);
        log[..4].copy_from_slice(&crc.to_le_bytes());
        assert!(matches!(
            read_all(&log, 1, "log"),
            Err(FormatError::Corrupt { .. })
        ));
    }

    #[test]
    fn recyclable_record_of_another_log_ends_it() {
        let payload = b"data";
        let mut rec = Vec::new();
        let number = 9u32.to_le_bytes();
        let crc = masked_crc32c(&[&[5], &number, payload]);
        rec.extend_from_slice(&crc.to_le_bytes());
        rec.extend_from_slice(&(payload.len() as u16).to_le_bytes());
        rec.push(5);
        rec.extend_from_slice(&number);
        rec.extend_from_slice(payload);
        assert_eq!(read_all(&rec, 9, "log").unwrap(), vec![payload.to_vec()]);
        assert!(read_all(&rec, 10, "log").unwrap().is_empty());
    }

    #[test]
    fn unknown_type_is_an_error() {
        let mut log = write_log(&[b"one"]);
        log[6] = 42;
        assert!(read_all(&log, 1, "log").is_err());
    }
}
