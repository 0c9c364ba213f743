//! The README's quickstart: the `rocksdb` crate's API, served by AlexDB.
//!
//! `cargo run --release -p alexdb --example quickstart`. A program that
//! switched its dependency (`rocksdb = { package = "alexdb", ... }`) writes
//! `rocksdb::` where this one writes `alexdb::`.

use alexdb::{DB, Direction, IteratorMode, Options, WriteBatch};

fn main() -> Result<(), alexdb::Error> {
    let path = std::env::temp_dir().join(format!("alexdb-quickstart-{}", std::process::id()));
    {
        let db = DB::open_default(&path)?;
        db.put(b"user:1", b"ada")?;
        let mut batch = WriteBatch::default(); // atomic: all or nothing
        batch.put(b"user:2", b"grace");
        batch.put(b"user:3", b"linus");
        db.write(batch)?;
        db.delete(b"user:3")?;

        let value = db.get(b"user:1")?.expect("user:1 was written");
        println!("get user:1 -> {}", text(&value));
        for item in db.iterator(IteratorMode::From(b"user:", Direction::Forward)) {
            let (key, value) = item?;
            println!("{} = {}", text(&key), text(&value));
        }
    } // the handle closes here
    DB::destroy(&Options::default(), path)?;
    println!("quickstart: ok");
    Ok(())
}

fn text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}
