//! `alexdb`: a pure-Rust drop-in replacement for the `rocksdb` crate.
