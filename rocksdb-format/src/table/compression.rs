//! Block compression as RocksDB writes it (compress_format_version 2, used
//! by every format_version we read): Snappy's raw format as is; zlib, LZ4,
//! LZ4HC and ZSTD prefixed with the uncompressed size as a varint; zlib as
//! raw deflate (RocksDB's default window_bits of -14) or, with a positive
//! window_bits, a zlib stream.

use std::io::Read;

use crate::coding::Reader;
use crate::error::{FormatError, Result};

const WHAT: &str = "compressed block";
/// Refuse to inflate a block to more than this (a damaged size field):
/// RocksDB's blocks are kilobytes to a few megabytes.
const MAX_BLOCK: u64 = 1 << 28;
/// LZ4 cannot expand its input by more than this factor.
const LZ4_MAX_RATIO: usize = 255;

/// Decompresses a block stored with compression type byte `kind`.
pub fn decompress(kind: u8, data: &[u8]) -> Result<Vec<u8>> {
    match kind {
        0 => Ok(data.to_vec()),
        1 => snappy(data),
        2 => with_size(data, zlib),
        3 => Err(FormatError::unsupported("BZip2-compressed blocks")),
        4 | 5 => with_size(data, lz4),
        6 => Err(FormatError::unsupported(
            "Xpress-compressed blocks (Windows only)",
        )),
        7 | 0x40 => with_size(data, zstd),
        other => Err(FormatError::unsupported(format!(
            "compression type {other:#x} (a custom compression manager)"
        ))),
    }
}

fn bad(detail: impl std::fmt::Display) -> FormatError {
    FormatError::corrupt(WHAT, detail.to_string())
}

fn snappy(data: &[u8]) -> Result<Vec<u8>> {
    snap::raw::Decoder::new()
        .decompress_vec(data)
        .map_err(|e| bad(format!("snappy: {e}")))
}

/// Reads the varint uncompressed size, decodes the rest with `f`, and
/// checks the result has that size.
fn with_size(data: &[u8], f: fn(&[u8], usize) -> Result<Vec<u8>>) -> Result<Vec<u8>> {
    let mut r = Reader::new(data, WHAT);
    let size = r.varint64("uncompressed size")?;
    if size > MAX_BLOCK {
        return Err(bad(format!("uncompressed size {size} is implausible")));
    }
    let size = size as usize;
    let out = f(r.rest(), size)?;
    if out.len() != size {
        return Err(bad(format!(
            "{} bytes decompressed, {size} declared",
            out.len()
        )));
    }
    Ok(out)
}

fn zlib(data: &[u8], size: usize) -> Result<Vec<u8>> {
    use miniz_oxide::inflate::{decompress_to_vec_with_limit, decompress_to_vec_zlib_with_limit};
    decompress_to_vec_with_limit(data, size)
        .or_else(|_| decompress_to_vec_zlib_with_limit(data, size))
        .map_err(|e| bad(format!("zlib: {e}")))
}

fn lz4(data: &[u8], size: usize) -> Result<Vec<u8>> {
    if size > data.len().saturating_mul(LZ4_MAX_RATIO).saturating_add(16) {
        return Err(bad(format!(
            "lz4: {size} bytes cannot come from {}",
            data.len()
        )));
    }
    lz4_flex::block::decompress(data, size).map_err(|e| bad(format!("lz4: {e}")))
}

fn zstd(data: &[u8], size: usize) -> Result<Vec<u8>> {
    let mut source = data;
    let decoder = ruzstd::decoding::StreamingDecoder::new(&mut source)
        .map_err(|e| bad(format!("zstd: {e}")))?;
    let mut out = Vec::with_capacity(size.min(1 << 20));
    decoder
        .take(size as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| bad(format!("zstd: {e}")))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncompressed_passes_through() {
        assert_eq!(decompress(0, b"abc").unwrap(), b"abc");
    }

    #[test]
    fn snappy_raw_block_decodes() {
        let packed = snap::raw::Encoder::new()
            .compress_vec(b"hello hello hello")
            .unwrap();
        assert_eq!(decompress(1, &packed).unwrap(), b"hello hello hello");
    }

    #[test]
    fn lz4_with_size_prefix_decodes() {
        let body = lz4_flex::block::compress(b"abcabcabcabc");
        let mut block = vec![12u8];
        block.extend(body);
        assert_eq!(decompress(4, &block).unwrap(), b"abcabcabcabc");
        block[0] = 13;
        assert!(decompress(4, &block).is_err());
    }

    #[test]
    fn raw_deflate_decodes() {
        let body = miniz_oxide::deflate::compress_to_vec(b"zzzzzzzzzz", 6);
        let mut block = vec![10u8];
        block.extend(body);
        assert_eq!(decompress(2, &block).unwrap(), b"zzzzzzzzzz");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for kind in [1u8, 2, 4, 5, 7] {
            assert!(decompress(kind, &[5, 0xff, 0xfe, 0x01]).is_err(), "{kind}");
        }
        assert!(matches!(
            decompress(3, b""),
            Err(FormatError::Unsupported { .. })
        ));
    }
}
