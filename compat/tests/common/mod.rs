//! Fixtures shared by the integration tests.

use alexdb::{DB, Options};

/// A fresh database with the default family and `"cf"`, in a temporary
/// directory that lives as long as the returned guard.
pub fn open_with_cf() -> (tempfile::TempDir, DB) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let db = DB::open_cf(&opts, dir.path().join("db"), ["cf"]).unwrap();
    (dir, db)
}
