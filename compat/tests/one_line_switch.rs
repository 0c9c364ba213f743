//! The one-line switch: a program written for the `rocksdb` crate, using
//! only `rocksdb::` paths, compiles and runs unchanged against `alexdb`.
//! A user gets the same effect from
//! `rocksdb = { package = "alexdb", version = "0.1" }` in `Cargo.toml`.

extern crate alexdb as rocksdb;

mod program_written_for_rocksdb {
    use std::sync::Arc;

    use rocksdb::{
        ColumnFamilyDescriptor, DB, DBAccess, DBRawIteratorWithThreadMode, Direction, Error,
        ErrorKind, IteratorMode, Options, ReadOptions, WriteBatch, WriteOptions,
    };

    fn first_key<D: DBAccess>(mut iter: DBRawIteratorWithThreadMode<'_, D>) -> Option<Vec<u8>> {
        iter.seek_to_first();
        iter.key().map(<[u8]>::to_vec)
    }

    pub fn run(path: &std::path::Path) -> Result<Vec<String>, Error> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        opts.set_max_open_files(512);
        opts.increase_parallelism(2);
        let cfs = vec![ColumnFamilyDescriptor::new("users", Options::default())];
        let db = Arc::new(DB::open_cf_descriptors(&opts, path, cfs)?);
        let users = db.cf_handle("users").expect("opened above");

        let mut batch = WriteBatch::default();
        batch.put_cf(&users, b"user:1", b"ada");
        batch.put_cf(&users, b"user:2", b"grace");
        batch.put(b"count", b"2");
        let mut write_opts = WriteOptions::default();
        write_opts.set_sync(true);
        db.write_opt(batch, &write_opts)?;

        let mut out = Vec::new();
        for item in db.iterator_cf(&users, IteratorMode::From(b"user:2", Direction::Reverse)) {
            let (key, value) = item?;
            out.push(format!(
                "{}={}",
                String::from_utf8_lossy(&key),
                String::from_utf8_lossy(&value)
            ));
        }
        let mut read_opts = ReadOptions::default();
        read_opts.set_iterate_upper_bound(b"user:2".to_vec());
        out.push(format!(
            "{}",
            db.iterator_cf_opt(&users, read_opts, IteratorMode::Start)
                .count()
        ));
        if let Some(key) = first_key(db.raw_iterator_cf(&users)) {
            out.push(String::from_utf8_lossy(&key).into_owned());
        }
        let count = db.get_pinned(b"count")?.map(|v| v.to_vec());
        out.push(String::from_utf8_lossy(&count.unwrap_or_default()).into_owned());
        let again = DB::open_default(path).map(|_| ()).unwrap_err();
        out.push(format!("{:?}", again.kind() == ErrorKind::IOError));
        Ok(out)
    }
}

#[test]
fn a_rocksdb_program_runs_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let out = program_written_for_rocksdb::run(&dir.path().join("db")).unwrap();
    assert_eq!(
        out,
        ["user:2=grace", "user:1=ada", "1", "user:1", "2", "true"]
    );
}
