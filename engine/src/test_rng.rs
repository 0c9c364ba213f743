//! A small deterministic generator for unit tests (xorshift64): the same
//! seed gives the same sequence on every run and machine, so a failure
//! names its case.

/// xorshift64 from a nonzero seed.
pub(crate) struct TestRng(u64);

impl TestRng {
    /// A generator from `seed` (nonzero).
    pub(crate) fn new(seed: u64) -> Self {
        TestRng(seed)
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (nonzero).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}
