//! Block-based tables (`.sst` files), read-only.

pub mod block;
pub mod compression;
pub mod footer;
pub mod handle;
pub mod iter;
pub mod properties;
pub mod reader;

pub use iter::TableIter;
pub use reader::{RangeTombstone, Table, TableMeta};
