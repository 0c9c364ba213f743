//! `multi_get` and its variants: every key read at one point (the
//! snapshot of the read options, or one taken for the call), the keys of
//! each run of one column family in one batched engine read, whose index
//! lookups overlap (see `alexdb_engine::Snapshot::get_many_with`).

use std::time::Instant;

use alexdb_engine::{KeyspaceId, Snapshot};

use crate::db::core::Core;
use crate::db::errors::IntoRocks;
use crate::perf::{PerfMetric, count_perf};
use crate::pinnable_slice::DBPinnableSlice;
use crate::statistics::{Histogram, Ticker};
use crate::{Error, ReadOptions};

/// A multi-get's result for one key.
type Read<T> = Result<Option<T>, Error>;

impl Core {
    /// Reads every `(column family, key)` of `keys` at one point, in order,
    /// into owned buffers.
    pub(crate) fn multi_get_copied(
        &self,
        keys: &[(u32, &[u8])],
        readopts: &ReadOptions,
    ) -> Vec<Read<Vec<u8>>> {
        let started = self.clock();
        let readopts = self.at_one_point(readopts);
        let snapshot = readopts.snapshot.as_ref().expect("a point to read at");
        let mut values = Vec::with_capacity(keys.len());
        for run in keys.chunk_by(|a, b| a.0 == b.0) {
            let cf = run[0].0;
            match self.read_timestamp(cf, &readopts) {
                Ok(None) => self.read_run(snapshot, cf, run, &mut values),
                // Versions under user timestamps are read one key at a time.
                _ => values.extend(
                    run.iter()
                        .map(|(cf, key)| self.get_copied(*cf, key, &readopts)),
                ),
            }
        }
        self.count_multi_get(started, keys.len(), &values, Vec::len);
        values
    }

    /// Reads every key of column family `cf` at one point, in order,
    /// without copying the values.
    pub(crate) fn multi_get_pinned(
        &self,
        cf: u32,
        keys: &[&[u8]],
        readopts: &ReadOptions,
    ) -> Vec<Read<DBPinnableSlice<'static>>> {
        let started = self.clock();
        let readopts = self.at_one_point(readopts);
        let snapshot = readopts.snapshot.as_ref().expect("a point to read at");
        let values: Vec<Read<DBPinnableSlice<'static>>> = match self.read_timestamp(cf, &readopts) {
            Ok(None) => match snapshot.get_many(KeyspaceId(cf), keys).rocks() {
                Ok(values) => values
                    .into_iter()
                    .zip(keys)
                    .map(|(v, key)| {
                        let v = match v.rocks()? {
                            Some(v) => Some(v),
                            None => self.read_other_form(cf, key, Some(snapshot), Snapshot::get)?,
                        };
                        Ok(v.map(|v| DBPinnableSlice::new(v, self.value_trim())))
                    })
                    .collect(),
                Err(e) => keys.iter().map(|_| Err(e.clone())).collect(),
            },
            _ => keys
                .iter()
                .map(|key| self.get(cf, key, &readopts))
                .collect(),
        };
        self.count_multi_get(started, keys.len(), &values, |v| v.len());
        values
    }

    /// Reads the keys of `run` (all of column family `cf`) through
    /// `snapshot` in one batched read, appending their values to `values`.
    fn read_run(
        &self,
        snapshot: &Snapshot,
        cf: u32,
        run: &[(u32, &[u8])],
        values: &mut Vec<Read<Vec<u8>>>,
    ) {
        let trim = self.value_trim();
        let keys: Vec<&[u8]> = run.iter().map(|(_, key)| *key).collect();
        let read = snapshot.get_many_with(KeyspaceId(cf), &keys, |_, value| {
            let copy = |v: &[u8]| v[..v.len().saturating_sub(trim)].to_vec();
            values.push(value.rocks().map(|v| v.map(copy)));
        });
        if let Err(e) = read.rocks() {
            values.extend(run.iter().map(|_| Err(e.clone())));
        }
        if !self.has_ordered_families() {
            return;
        }
        let start = values.len() - run.len();
        for (value, (_, key)) in values[start..].iter_mut().zip(run) {
            if let Ok(None) = value {
                let read = |s: &Snapshot, ks, k: &[u8]| s.get_pinned(ks, k);
                *value = self
                    .read_other_form(cf, key, Some(snapshot), read)
                    .map(|v| v.map(|v| v[..v.len().saturating_sub(trim)].to_vec()));
            }
        }
    }

    /// Counts a multi-get of `keys` keys that read `values`, started at
    /// `started`, as RocksDB's `MultiGet` does (with its own tickers, not
    /// those of `Get`).
    fn count_multi_get<T>(
        &self,
        started: Option<Instant>,
        keys: usize,
        values: &[Read<T>],
        len: impl Fn(&T) -> usize,
    ) {
        let found: Vec<usize> = values
            .iter()
            .filter_map(|v| v.as_ref().ok().and_then(Option::as_ref).map(&len))
            .collect();
        let bytes = found.iter().sum::<usize>() as u64;
        // A key found was compared with its stored key, as a get counts it.
        count_perf(&[
            (PerfMetric::MultigetReadBytes, bytes),
            (PerfMetric::UserKeyComparisonCount, found.len() as u64),
        ]);
        if let (Some(stats), Some(started)) = (self.statistics(), started) {
            stats.add(Ticker::NumberMultigetCalls, 1);
            stats.add(Ticker::NumberMultigetKeysRead, keys as u64);
            stats.add(Ticker::NumberMultigetKeysFound, found.len() as u64);
            stats.add(Ticker::NumberMultigetBytesRead, bytes);
            stats.record(Histogram::BytesPerMultiget, bytes);
            stats.record_micros(Histogram::DbMultiget, started.elapsed());
        }
    }
}
