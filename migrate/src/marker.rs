//! The progress markers a migration keeps in its target's reserved family
//! [`MARKER_FAMILY`](crate::source::MARKER_FAMILY).
//!
//! Records (keys and values are bytes):
//!
//! | key | value |
//! |---|---|
//! | `plan` | JSON of [`Plan`]: what is being migrated, written before any data |
//! | `family:` + name | `0x01` + the last target key written, or `0x02` once the family is complete |
//!
//! Every data batch is written together with its family's record in one
//! atomic write, so after any crash the record names exactly the last key
//! present. The family is dropped once the copy has been verified.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Key of the plan record.
pub const PLAN_KEY: &[u8] = b"plan";
const FAMILY_PREFIX: &[u8] = b"family:";
const TAG_AFTER: u8 = 1;
const TAG_DONE: u8 = 2;

/// What a migration copies; a resumed run must ask for the same.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// `"copy"` or `"export"`.
    pub operation: String,
    /// The families copied, in order.
    pub families: Vec<String>,
    /// Whether keys are mapped with `--i64-keys`.
    pub i64_keys: bool,
}

/// How far a family has been copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Position {
    /// Nothing copied yet.
    Start,
    /// Every key up to and including this target key is copied.
    After(Vec<u8>),
    /// The family is complete.
    Done,
}

/// A migration's recorded state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    /// What is being migrated.
    pub plan: Plan,
    /// Each family's position; families absent here are at the start.
    pub positions: BTreeMap<String, Position>,
}

impl State {
    /// The position of `family`.
    pub fn position(&self, family: &str) -> Position {
        self.positions
            .get(family)
            .cloned()
            .unwrap_or(Position::Start)
    }
}

/// The key of `family`'s progress record.
pub fn family_key(family: &str) -> Vec<u8> {
    let mut key = FAMILY_PREFIX.to_vec();
    key.extend_from_slice(family.as_bytes());
    key
}

/// The value recording `position`.
pub fn encode_position(position: &Position) -> Vec<u8> {
    match position {
        Position::Start => Vec::new(),
        Position::After(key) => {
            let mut v = Vec::with_capacity(key.len() + 1);
            v.push(TAG_AFTER);
            v.extend_from_slice(key);
            v
        }
        Position::Done => vec![TAG_DONE],
    }
}

/// The value of the plan record.
pub fn encode_plan(plan: &Plan) -> Vec<u8> {
    serde_json::to_vec(plan).unwrap_or_default()
}

/// Rebuilds the state from the marker family's records; `None` if there is
/// no plan record. A record that cannot be decoded is an `Err` with reason.
pub fn decode(records: &[(Vec<u8>, Vec<u8>)]) -> Result<Option<State>, String> {
    let Some((_, plan)) = records.iter().find(|(k, _)| k == PLAN_KEY) else {
        return Ok(None);
    };
    let plan: Plan =
        serde_json::from_slice(plan).map_err(|e| format!("unreadable plan record: {e}"))?;
    let mut positions = BTreeMap::new();
    for (key, value) in records {
        let Some(name) = key.strip_prefix(FAMILY_PREFIX) else {
            continue;
        };
        let name = String::from_utf8_lossy(name).into_owned();
        positions.insert(name, decode_position(value)?);
    }
    Ok(Some(State { plan, positions }))
}

fn decode_position(value: &[u8]) -> Result<Position, String> {
    match value.split_first() {
        None => Ok(Position::Start),
        Some((&TAG_AFTER, key)) => Ok(Position::After(key.to_vec())),
        Some((&TAG_DONE, [])) => Ok(Position::Done),
        Some((tag, _)) => Err(format!("unknown progress record tag {tag}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let plan = Plan {
            operation: "copy".into(),
            families: vec!["default".into(), "b".into()],
            i64_keys: false,
        };
        let records = vec![
            (PLAN_KEY.to_vec(), encode_plan(&plan)),
            (family_key("default"), encode_position(&Position::Done)),
            (family_key("b"), encode_position(&Position::After(vec![]))),
        ];
        let state = decode(&records).unwrap().unwrap();
        assert_eq!(state.plan, plan);
        assert_eq!(state.position("default"), Position::Done);
        assert_eq!(state.position("b"), Position::After(vec![]));
        assert_eq!(state.position("c"), Position::Start);
    }
}
