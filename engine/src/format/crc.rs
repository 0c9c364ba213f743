//! CRC-32C (Castagnoli) of the format's checksummed byte ranges.
//!
//! The same function as the `crc32c` crate's, which computes long ranges
//! (frames, checkpoints) here. For a record-sized range the crate's setup
//! (aligning the start byte by byte, two three-way interleaved loops that
//! find no full block to run) costs more instructions than the data: a
//! 124-byte record took about 215 instructions per checksum, in every
//! point read and every entry a cursor buffers. Up to 768 bytes (`SHORT_MAX`),
//! and on a CPU with SSE 4.2, this module folds the range 8 bytes at a
//! time with the `crc32` instruction instead (about a third of that); the
//! crate's three-way interleaving only pays from 768 bytes on.

/// The longest range computed here rather than by the crate: below three
/// of the crate's 256-byte blocks it runs the same serial loop, after its
/// setup.
#[cfg_attr(
    all(not(target_arch = "x86_64"), not(test)),
    expect(dead_code, reason = "only x86_64 has the short path")
)]
const SHORT_MAX: usize = 768;

/// The CRC-32C of `bytes` (as `crc32c::crc32c` computes it).
#[inline]
pub fn crc32c(bytes: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if bytes.len() <= SHORT_MAX && std::arch::is_x86_feature_detected!("sse4.2") {
        // SAFETY: `short_sse42` only requires SSE 4.2, which the CPU was
        // just found to support.
        return unsafe { short_sse42(bytes) };
    }
    crc32c::crc32c(bytes)
}

/// Folds `bytes` with the `crc32` instruction: eight bytes at a time
/// (unaligned loads), then the last up to seven one at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
fn short_sse42(bytes: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u8, _mm_crc32_u64};
    let mut words = bytes.chunks_exact(8);
    let mut crc = u64::from(u32::MAX);
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        crc = _mm_crc32_u64(crc, u64::from_le_bytes(w));
    }
    let mut crc = crc as u32;
    for &byte in words.remainder() {
        crc = _mm_crc32_u8(crc, byte);
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length from 0 to past [`SHORT_MAX`], at every start offset
    /// modulo 8, agrees with the crate.
    #[test]
    fn agrees_with_the_crate_at_every_length_and_alignment() {
        let data: Vec<u8> = (0..SHORT_MAX as u32 + 80)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for start in 0..8 {
            for len in 0..=data.len() - start {
                let range = &data[start..start + len];
                assert_eq!(
                    crc32c(range),
                    crc32c::crc32c(range),
                    "start {start}, len {len}"
                );
            }
        }
    }

    /// The check value of the CRC-32C catalogue ("123456789").
    #[test]
    fn check_value() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }
}
