// The transaction runner, written once against the rocksdb API and
// included into a module that names the crate `api` (see
// `differential_transactions.rs`). It applies the operations to an
// `OptimisticTransactionDB` or a `TransactionDB` and records what every
// one returned.

/// Runs `ops` on a fresh optimistic or pessimistic database in `dir`.
pub fn run(ops: &[super::TxnOp], dir: &std::path::Path, pessimistic: bool) -> Vec<String> {
    if pessimistic {
        let mut opts = api::Options::default();
        opts.create_if_missing(true);
        let mut txn_db_opts = api::TransactionDBOptions::default();
        txn_db_opts.set_txn_lock_timeout(0);
        txn_db_opts.set_default_lock_timeout(0);
        let db: api::TransactionDB =
            api::TransactionDB::open(&opts, &txn_db_opts, dir).expect("open");
        let begin = |snapshot: bool| {
            let mut o = api::TransactionOptions::default();
            o.set_snapshot(snapshot);
            db.transaction_opt(&api::WriteOptions::default(), &o)
        };
        drive(ops, begin, |k, v| db.put(k, v), |k| db.delete(k), |k| db.get(k))
    } else {
        let db: api::OptimisticTransactionDB =
            api::OptimisticTransactionDB::open_default(dir).expect("open");
        let begin = |snapshot: bool| {
            let mut o = api::OptimisticTransactionOptions::default();
            o.set_snapshot(snapshot);
            db.transaction_opt(&api::WriteOptions::default(), &o)
        };
        drive(ops, begin, |k, v| db.put(k, v), |k| db.delete(k), |k| db.get(k))
    }
}

type Got = Result<Option<Vec<u8>>, api::Error>;

fn drive<'db, D: 'db>(
    ops: &[super::TxnOp],
    begin: impl Fn(bool) -> api::Transaction<'db, D>,
    put: impl Fn(&[u8], &[u8]) -> Result<(), api::Error>,
    delete: impl Fn(&[u8]) -> Result<(), api::Error>,
    get: impl Fn(&[u8]) -> Got,
) -> Vec<String> {
    use super::TxnOp as Op;
    let mut txns: Vec<Option<api::Transaction<'db, D>>> = (0..super::SLOTS).map(|_| None).collect();
    let mut out = Vec::new();
    for op in ops {
        let line = match op {
            Op::Begin(t, snapshot) => {
                txns[*t] = None;
                txns[*t] = Some(begin(*snapshot));
                "began".to_string()
            }
            Op::DbPut(k, v) => unit(put(k, v)),
            Op::DbDelete(k) => unit(delete(k)),
            Op::DbGet(k) => value(get(k)),
            Op::Commit(t) => match txns[*t].take() {
                Some(txn) => unit(txn.commit()),
                None => "no txn".to_string(),
            },
            Op::InTxn(t, action) => match &txns[*t] {
                Some(txn) => act(txn, action),
                None => "no txn".to_string(),
            },
        };
        out.push(line);
    }
    out
}

fn act<D>(txn: &api::Transaction<'_, D>, action: &super::Action) -> String {
    use super::Action as A;
    match action {
        A::Put(k, v) => unit(txn.put(k, v)),
        A::Delete(k) => unit(txn.delete(k)),
        A::Get(k) => value(txn.get(k)),
        A::GetForUpdate(k, exclusive) => value(txn.get_for_update(k, *exclusive)),
        A::SetSavepoint => {
            txn.set_savepoint();
            "ok".to_string()
        }
        A::RollbackToSavepoint => unit(txn.rollback_to_savepoint()),
        A::Rollback => unit(txn.rollback()),
        A::Scan(forward) => {
            let mode = if *forward {
                api::IteratorMode::Start
            } else {
                api::IteratorMode::End
            };
            let items: Result<Vec<_>, _> = txn.iterator(mode).collect();
            match items {
                Ok(items) => format!("{items:?}"),
                Err(e) => format!("err {:?}", e.kind()),
            }
        }
    }
}

fn unit(r: Result<(), api::Error>) -> String {
    match r {
        Ok(()) => "ok".to_string(),
        Err(e) => format!("err {:?}", e.kind()),
    }
}

fn value(r: Got) -> String {
    match r {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!("err {:?}", e.kind()),
    }
}
