//! Features the reader does not implement are refused at open with an
//! error naming them, never read in part.

use alexdb_rocksdb_format::{FormatError, RocksDir};
use rocksdb::{DB, DBCompressionType, Options, PlainTableFactoryOptions, SliceTransform};

fn fill(db: &DB) {
    for i in 0..500u32 {
        db.put(format!("key{i:05}"), vec![b'v'; 40]).unwrap();
    }
    db.flush().unwrap();
}

fn unsupported(path: &std::path::Path) -> String {
    match RocksDir::open(path) {
        Err(FormatError::Unsupported { feature }) => feature,
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

fn base_options() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts
}

#[test]
fn a_custom_comparator_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = base_options();
    opts.set_comparator("reverse", Box::new(|a: &[u8], b: &[u8]| b.cmp(a)));
    fill(&DB::open(&opts, dir.path()).unwrap());
    let feature = unsupported(dir.path());
    assert!(
        feature.contains("non-bytewise comparator") && feature.contains("reverse"),
        "{feature}"
    );
}

#[test]
fn blob_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = base_options();
    opts.set_enable_blob_files(true);
    opts.set_min_blob_size(0);
    fill(&DB::open(&opts, dir.path()).unwrap());
    assert!(unsupported(dir.path()).contains("BlobDB"));
}

#[test]
fn plain_tables_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = base_options();
    opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(3));
    opts.set_plain_table_factory(&PlainTableFactoryOptions {
        user_key_length: 0,
        bloom_bits_per_key: 10,
        hash_table_ratio: 0.75,
        index_sparseness: 16,
        huge_page_tlb_size: 0,
        encoding_type: rocksdb::KeyEncodingType::Plain,
        full_scan_mode: false,
        store_index_in_file: false,
    });
    fill(&DB::open(&opts, dir.path()).unwrap());
    assert!(unsupported(dir.path()).contains("PlainTable"));
}

#[test]
fn compression_dictionaries_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = base_options();
    opts.set_compression_type(DBCompressionType::Zstd);
    opts.set_compression_options(-14, 3, 0, 16 * 1024);
    opts.set_zstd_max_train_bytes(64 * 1024);
    fill(&DB::open(&opts, dir.path()).unwrap());
    assert!(unsupported(dir.path()).contains("compression dictionaries"));
}
