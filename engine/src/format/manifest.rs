//! The `MANIFEST` file: marks a directory as an AlexDB database and lists
//! its keyspaces. It is small and rewritten whole, atomically (write a
//! temporary file, fsync it, rename it over the old one, fsync the directory).
//!
//! ```text
//! offset size field
//!   0     8   magic b"ALXDBMAN"
//!   8     4   format version (2; version 1 is read too)
//!  12     4   next keyspace id (ids are never reused)
//!  16     4   number n of keyspaces
//!  20     4   flags: bit 0 = a live-segment section follows the entries,
//!             bit 1 = a key-order section follows (a reader that does not
//!             know a flag refuses the manifest)
//!  24     -   n entries: keyspace id (4), name length (4), name (UTF-8)
//!   -     -   if flag bit 1: number m of key orders (4), then m entries:
//!             keyspace id (4), order name length (4), order name (UTF-8)
//!   -     -   if flag bit 0: the live-segment section (`live_segments.rs`)
//!  end-4  4   CRC-32C of every preceding byte
//! ```

use super::live_segments::LiveSegments;
use super::read_u32;

/// Magic bytes that open the manifest.
pub const MANIFEST_MAGIC: [u8; 8] = *b"ALXDBMAN";
/// The manifest format version this code writes (the database format
/// version, see `FORMAT.md`).
pub const MANIFEST_VERSION: u32 = 6;
/// The oldest manifest format version this code reads.
pub const OLDEST_MANIFEST_VERSION: u32 = 1;
const FLAGS_AT: usize = 20;
const ENTRIES_AT: usize = 24;
/// Flag bit: the manifest lists the live segments.
const FLAG_LIVE_SEGMENTS: u32 = 1;
/// Flag bit: the manifest names the key orders of keyspaces that have one.
const FLAG_KEY_ORDERS: u32 = 2;

/// The decoded manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// Next keyspace id to hand out.
    pub next_keyspace_id: u32,
    /// The live keyspaces, `(id, name)`.
    pub keyspaces: Vec<(u32, String)>,
    /// The keyspaces whose range deletes follow an order of their own
    /// (see [`crate::mvcc::key_order`]), `(id, order name)`.
    pub key_orders: Vec<(u32, String)>,
    /// The segments the database needs and the active segment's durable
    /// watermark; `None` in a manifest written before they were recorded
    /// (recovery then follows the older rules of `FORMAT.md`).
    pub live: Option<LiveSegments>,
}

impl Manifest {
    /// Encodes the manifest.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(64);
        b.extend_from_slice(&MANIFEST_MAGIC);
        b.extend_from_slice(&MANIFEST_VERSION.to_le_bytes());
        b.extend_from_slice(&self.next_keyspace_id.to_le_bytes());
        let n = u32::try_from(self.keyspaces.len()).expect("keyspace count fits in u32");
        b.extend_from_slice(&n.to_le_bytes());
        let mut flags = 0;
        if self.live.is_some() {
            flags |= FLAG_LIVE_SEGMENTS;
        }
        if !self.key_orders.is_empty() {
            flags |= FLAG_KEY_ORDERS;
        }
        b.extend_from_slice(&flags.to_le_bytes());
        for (id, name) in &self.keyspaces {
            encode_entry(&mut b, *id, name);
        }
        if !self.key_orders.is_empty() {
            let m = u32::try_from(self.key_orders.len()).expect("key order count fits in u32");
            b.extend_from_slice(&m.to_le_bytes());
            for (id, name) in &self.key_orders {
                encode_entry(&mut b, *id, name);
            }
        }
        if let Some(live) = &self.live {
            live.encode_into(&mut b);
        }
        let crc = crate::format::crc::crc32c(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes a manifest, or says what is wrong with it.
    pub fn decode(b: &[u8]) -> Result<Self, String> {
        if b.len() < ENTRIES_AT + 4 || b[..8] != MANIFEST_MAGIC {
            return Err("not an AlexDB manifest (bad magic or too short)".into());
        }
        let body = &b[..b.len() - 4];
        if crate::format::crc::crc32c(body) != read_u32(b, b.len() - 4) {
            return Err("manifest checksum mismatch".into());
        }
        let version = read_u32(b, 8);
        if !(OLDEST_MANIFEST_VERSION..=MANIFEST_VERSION).contains(&version) {
            return Err(format!("unsupported manifest version {version}"));
        }
        let next_keyspace_id = read_u32(b, 12);
        let n = read_u32(b, 16) as usize;
        let mut at = ENTRIES_AT;
        let keyspaces = decode_entries(body, &mut at, n)?;
        let flags = read_u32(b, FLAGS_AT);
        if flags & !(FLAG_LIVE_SEGMENTS | FLAG_KEY_ORDERS) != 0 {
            return Err(format!("unknown manifest flags {flags:#x}"));
        }
        let mut key_orders = Vec::new();
        if flags & FLAG_KEY_ORDERS != 0 {
            let m = body
                .get(at..at + 4)
                .map(|_| read_u32(body, at) as usize)
                .ok_or("manifest key orders run past the end")?;
            at += 4;
            key_orders = decode_entries(body, &mut at, m)?;
        }
        let live = match flags & FLAG_LIVE_SEGMENTS {
            0 if at == body.len() => None,
            0 => return Err("manifest has bytes after its last entry".into()),
            _ => Some(LiveSegments::decode(&body[at..])?),
        };
        Ok(Manifest {
            next_keyspace_id,
            keyspaces,
            key_orders,
            live,
        })
    }
}

/// Appends an entry: an id, then a name's length and bytes.
fn encode_entry(b: &mut Vec<u8>, id: u32, name: &str) {
    b.extend_from_slice(&id.to_le_bytes());
    let len = u32::try_from(name.len()).expect("keyspace and order names are short");
    b.extend_from_slice(&len.to_le_bytes());
    b.extend_from_slice(name.as_bytes());
}

/// Decodes `n` entries from `body` at `at`, moving `at` past them.
fn decode_entries(body: &[u8], at: &mut usize, n: usize) -> Result<Vec<(u32, String)>, String> {
    let mut entries = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        if *at + 8 > body.len() {
            return Err("manifest entry runs past the end".into());
        }
        let id = read_u32(body, *at);
        let len = read_u32(body, *at + 4) as usize;
        *at += 8;
        let name = body
            .get(*at..*at + len)
            .ok_or("manifest name runs past the end")?;
        let name = String::from_utf8(name.to_vec()).map_err(|_| "manifest name is not UTF-8")?;
        entries.push((id, name));
        *at += len;
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let mut m = Manifest {
            next_keyspace_id: 4,
            keyspaces: vec![(0, "default".into()), (3, "users".into())],
            key_orders: Vec::new(),
            live: None,
        };
        assert_eq!(Manifest::decode(&m.encode()), Ok(m.clone()));
        m.key_orders = vec![(3, "case-insensitive".into())];
        assert_eq!(Manifest::decode(&m.encode()), Ok(m.clone()));
        m.live = Some(LiveSegments {
            ids: vec![2, 5],
            watermark: None,
        });
        let mut b = m.encode();
        assert_eq!(Manifest::decode(&b), Ok(m));
        b[30] ^= 1;
        assert!(Manifest::decode(&b).is_err());
        assert!(Manifest::decode(b"hello").is_err());
    }
}
