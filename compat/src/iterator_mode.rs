//! Where an iterator starts and which way it moves.

/// The direction of an iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Ascending key order.
    Forward,
    /// Descending key order.
    Reverse,
}

/// The start of an iteration created by `DB::iterator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IteratorMode<'a> {
    /// From the first key, forward.
    Start,
    /// From the last key, in reverse.
    End,
    /// From a key in a direction: forward from the first key `>=` it, or in
    /// reverse from the last key `<=` it.
    From(&'a [u8], Direction),
}
