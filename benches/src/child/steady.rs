//! `overwrite-anon`: the memory a process holds once it has lived with the
//! store a while, not only right after an open. After the reopen, three
//! rounds each overwrite a random third of the keys (with the values they
//! hold, in batches of 1,000) and compact everything; then the store is
//! left alone for [`QUIET`] and the anonymous memory (`RssAnon`) the
//! process holds beyond what it held before its first open (the load's
//! process is the reopen's, as in a service that loads then serves) is
//! read, per key.

use std::time::Duration;

use crate::engines::Engine;
use crate::error::Result;
use crate::keys::DataSet;
use crate::measure::anon_rss_bytes;
use crate::rng::Xorshift;

/// Rounds of overwrites and compaction.
const ROUNDS: usize = 3;

/// Keys a batch of overwrites holds.
const BATCH: usize = 1_000;

/// How long the store is left alone before the memory is read: AlexDB acts
/// on an index no write changed for 2 s, within a second after.
const QUIET: Duration = Duration::from_secs(5);

/// Runs the rounds on `engine` (open on the settled store of `data`) and
/// returns the anonymous memory per key it holds after [`QUIET`], less
/// `anon_before_open`, what the process held before the open.
pub(super) fn overwrite_anon<E: Engine>(
    engine: &mut E,
    data: &DataSet,
    anon_before_open: u64,
) -> Result<f64> {
    let n = data.present.len();
    let mut rng = Xorshift::new(0x5EAD_7E57);
    for _ in 0..ROUNDS {
        let picked: Vec<usize> = (0..n / 3).map(|_| rng.below(n as u64) as usize).collect();
        for chunk in picked.chunks(BATCH) {
            let pairs: Vec<(&[u8], &[u8])> = chunk
                .iter()
                .map(|&i| (data.present.get(i), data.value(i, 0)))
                .collect();
            engine.write_batch(&pairs)?;
        }
        engine.compact()?;
    }
    std::thread::sleep(QUIET);
    let added = anon_rss_bytes()?.saturating_sub(anon_before_open);
    Ok(added as f64 / n.max(1) as f64)
}
