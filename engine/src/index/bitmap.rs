//! Occupancy bitmaps of gapped arrays, as `u64` words.

/// Words needed for `bits` bits.
pub(crate) fn words_for(bits: usize) -> usize {
    bits.div_ceil(64)
}

/// Whether bit `i` is set.
#[inline]
pub(crate) fn get(words: &[u64], i: usize) -> bool {
    (words[i / 64] >> (i % 64)) & 1 == 1
}

/// Sets bit `i`.
#[inline]
pub(crate) fn set(words: &mut [u64], i: usize) {
    words[i / 64] |= 1 << (i % 64);
}

/// Clears bit `i`.
#[inline]
pub(crate) fn clear(words: &mut [u64], i: usize) {
    words[i / 64] &= !(1 << (i % 64));
}

/// The first index in `from..limit` whose bit equals `want`.
#[inline]
fn next_with(words: &[u64], from: usize, limit: usize, want: bool) -> Option<usize> {
    if from >= limit {
        return None;
    }
    let mut w = from / 64;
    let flip = if want { 0 } else { u64::MAX };
    let mut word = (words[w] ^ flip) & (u64::MAX << (from % 64));
    loop {
        if word != 0 {
            let i = w * 64 + word.trailing_zeros() as usize;
            return (i < limit).then_some(i);
        }
        w += 1;
        if w * 64 >= limit {
            return None;
        }
        word = words[w] ^ flip;
    }
}

/// The last index `<= upto` whose bit equals `want`.
#[inline]
fn prev_with(words: &[u64], upto: usize, want: bool) -> Option<usize> {
    let mut w = upto / 64;
    let flip = if want { 0 } else { u64::MAX };
    let mut word = (words[w] ^ flip) & (u64::MAX >> (63 - upto % 64));
    loop {
        if word != 0 {
            return Some(w * 64 + 63 - word.leading_zeros() as usize);
        }
        if w == 0 {
            return None;
        }
        w -= 1;
        word = words[w] ^ flip;
    }
}

/// The first set bit in `from..limit`.
#[inline]
pub(crate) fn next_set(words: &[u64], from: usize, limit: usize) -> Option<usize> {
    next_with(words, from, limit, true)
}

/// The first clear bit in `from..limit`.
pub(crate) fn next_clear(words: &[u64], from: usize, limit: usize) -> Option<usize> {
    next_with(words, from, limit, false)
}

/// The last set bit at or before `upto`.
#[inline]
pub(crate) fn prev_set(words: &[u64], upto: usize) -> Option<usize> {
    prev_with(words, upto, true)
}

/// The last clear bit at or before `upto`.
pub(crate) fn prev_clear(words: &[u64], upto: usize) -> Option<usize> {
    prev_with(words, upto, false)
}

/// The set bits of a bitmap, ascending.
pub(crate) struct Ones<'a> {
    words: &'a [u64],
    w: usize,
    word: u64,
}

impl<'a> Ones<'a> {
    /// The set bits of `words`.
    pub(crate) fn new(words: &'a [u64]) -> Self {
        Self {
            words,
            w: 0,
            word: words.first().copied().unwrap_or(0),
        }
    }
}

impl Iterator for Ones<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.word == 0 {
            self.w += 1;
            self.word = *self.words.get(self.w)?;
        }
        let bit = self.word.trailing_zeros() as usize;
        self.word &= self.word - 1;
        Some(self.w * 64 + bit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_neighbours_across_words() {
        let mut w = vec![0u64; words_for(200)];
        for i in [0, 63, 64, 130, 199] {
            set(&mut w, i);
        }
        assert_eq!(next_set(&w, 1, 200), Some(63));
        assert_eq!(next_set(&w, 65, 200), Some(130));
        assert_eq!(next_set(&w, 131, 199), None);
        assert_eq!(prev_set(&w, 129), Some(64));
        assert_eq!(prev_set(&w, 62), Some(0));
        assert_eq!(next_clear(&w, 63, 200), Some(65));
        assert_eq!(prev_clear(&w, 64), Some(62));
        clear(&mut w, 0);
        assert_eq!(prev_set(&w, 62), None);
        assert!(!get(&w, 0) && get(&w, 199));
        assert_eq!(next_clear(&w, 199, 200), None);
        assert_eq!(Ones::new(&w).collect::<Vec<_>>(), [63, 64, 130, 199]);
    }
}
