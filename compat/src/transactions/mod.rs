//! Transactions: [`OptimisticTransactionDB`] (conflicts checked at commit)
//! and [`TransactionDB`] (keys locked when touched), whose [`Transaction`]s
//! group writes that become visible all at once, and read their own
//! writes before anyone else sees them.
//!
//! Both are `DBCommon`s, so everything a `DB` offers works on them. The
//! engine supplies the two mechanisms underneath: a conflict check that
//! runs atomically with a commit under the writer lock
//! (`Db::write_unless_changed`), and a lock table (`key_locks`).

mod concurrency;
mod optimistic_transaction_db;
mod options;
mod transaction;
mod transaction_db;
mod transaction_read;
mod write_set;

pub use optimistic_transaction_db::OptimisticTransactionDB;
pub use options::{OptimisticTransactionOptions, TransactionDBOptions, TransactionOptions};
pub use transaction::Transaction;
pub use transaction_db::TransactionDB;
