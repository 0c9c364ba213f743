//! The linear models of ALEX nodes.

/// `position = floor(slope * (model_key - anchor) + intercept) + offset`,
/// clamped to the node's slot range.
///
/// Anchoring at the smallest build key keeps the arithmetic precise when a
/// node's keys are clustered far from zero (an `f64` has 53 bits, model keys
/// 64). The slope is never negative, which keeps routing monotone. The
/// integer `offset` lets an inner node grow slots on its left without
/// changing which of the old slots any key maps to (floating-point
/// additions could round across a slot boundary; integer ones cannot).
///
/// `repr(C)` keeps `offset` last: data nodes, whose offset is always 0,
/// predict with [`Self::predict_local`], which never reads it, so a data
/// node's lookup fields fit in one cache line.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub(crate) struct LinearModel {
    anchor: u64,
    slope: f64,
    intercept: f64,
    offset: i64,
}

impl LinearModel {
    /// Least-squares fit of the ranks of the sorted `mks`, scaled so that
    /// the `n` keys spread over `span` positions (`rank * span / n`).
    pub(crate) fn fit(mks: &[u64], span: f64) -> Self {
        let n = mks.len();
        let Some(&anchor) = mks.first() else {
            return Self::default();
        };
        let scale = span / n as f64;
        let flat = Self {
            anchor,
            intercept: ((span - n as f64) * 0.5).max(0.0),
            ..Self::default()
        };
        if mks[n - 1] == anchor {
            return flat;
        }
        let dx = |m: u64| (m - anchor) as f64;
        let mean_x = mks.iter().map(|&m| dx(m)).sum::<f64>() / n as f64;
        let mean_y = (n as f64 - 1.0) * 0.5;
        let (mut cov, mut var) = (0.0, 0.0);
        for (i, &m) in mks.iter().enumerate() {
            let x = dx(m) - mean_x;
            cov += x * (i as f64 - mean_y);
            var += x * x;
        }
        let slope = cov / var;
        if !slope.is_finite() || slope <= 0.0 {
            return flat;
        }
        Self {
            anchor,
            slope: slope * scale,
            intercept: (mean_y - slope * mean_x) * scale,
            offset: 0,
        }
    }

    /// The line at `mk` (without the integer offset).
    #[inline]
    pub(crate) fn predict_f64(&self, mk: u64) -> f64 {
        let dx = if mk >= self.anchor {
            (mk - self.anchor) as f64
        } else {
            -((self.anchor - mk) as f64)
        };
        self.slope * dx + self.intercept
    }

    /// The unclamped predicted slot of `mk`.
    #[inline]
    pub(crate) fn predict_slot(&self, mk: u64) -> i64 {
        floor_i64(self.predict_f64(mk)).saturating_add(self.offset)
    }

    /// The predicted slot of `mk`, clamped to `0..len` (`len >= 1`), for a
    /// model without an integer offset (data nodes). Same result as
    /// [`Self::predict`] without reading `offset`.
    #[inline]
    pub(crate) fn predict_local(&self, mk: u64, len: usize) -> usize {
        debug_assert_eq!(self.offset, 0);
        // Truncation equals `floor` once negative values are clamped to 0;
        // `as` saturates (and maps NaN to 0).
        (self.predict_f64(mk) as i64).clamp(0, len as i64 - 1) as usize
    }

    /// The predicted slot of `mk`, clamped to `0..len` (`len >= 1`).
    #[inline]
    pub(crate) fn predict(&self, mk: u64, len: usize) -> usize {
        self.predict_slot(mk).clamp(0, len as i64 - 1) as usize
    }

    /// The model key the line (with the integer offset) puts at `position`,
    /// saturated to `0..=u64::MAX`; `None` for a flat line.
    pub(crate) fn model_key_at(&self, position: f64) -> Option<u64> {
        if !(self.slope > 0.0 && self.slope.is_finite()) {
            return None;
        }
        let dx = (position - self.offset as f64 - self.intercept) / self.slope;
        // `as` saturates: below 0 gives 0, beyond u64::MAX gives u64::MAX.
        Some(match dx >= 0.0 {
            true => self.anchor.saturating_add(dx as u64),
            false => self.anchor.saturating_sub((-dx) as u64),
        })
    }

    /// [`Self::predict`], and where within that slot the prediction falls,
    /// from 0 (its start) towards 1 (its end); a prediction clamped to the
    /// first or last slot falls at that slot's near edge.
    #[inline]
    pub(crate) fn predict_within(&self, mk: u64, len: usize) -> (usize, f64) {
        let f = self.predict_f64(mk);
        let whole = floor_i64(f);
        let slot = whole.saturating_add(self.offset);
        let last = len as i64 - 1;
        match slot {
            s if s < 0 => (0, 0.0),
            s if s > last => (last as usize, ALMOST_ONE),
            s => (s as usize, (f - whole as f64).clamp(0.0, ALMOST_ONE)),
        }
    }

    /// The model with every prediction moved `shift` slots up, exactly.
    pub(crate) fn offset_by(&self, shift: i64) -> Self {
        Self {
            offset: self.offset + shift,
            ..*self
        }
    }

    /// The model with its line moved `delta` positions up (data nodes,
    /// whose placement need not be exact).
    pub(crate) fn shifted(&self, delta: f64) -> Self {
        Self {
            intercept: self.intercept + delta,
            ..*self
        }
    }

    /// The same model over twice as many positions. Scaling by 2 is exact in
    /// floating point and `floor(2x)` is `2 floor(x)` or one more, so a key
    /// predicted at `p` is predicted at `2p` or `2p + 1` by the result.
    pub(crate) fn doubled(&self) -> Self {
        Self {
            anchor: self.anchor,
            slope: self.slope * 2.0,
            intercept: self.intercept * 2.0,
            offset: self.offset * 2,
        }
    }
}

/// The largest fraction [`LinearModel::predict_within`] gives.
const ALMOST_ONE: f64 = 1.0 - f64::EPSILON;

/// `floor(x)` as an integer, saturating (NaN maps to 0). Avoids a libm
/// call on targets without SSE4.1.
#[inline]
fn floor_i64(x: f64) -> i64 {
    let t = x as i64;
    if (t as f64) > x {
        t.saturating_sub(1)
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_matches_std() {
        for x in [
            -2.5,
            -1.0,
            -0.5,
            -0.0,
            0.0,
            0.3,
            1.0,
            7.9,
            1e30,
            -1e30,
            f64::NAN,
        ] {
            let want = x.floor() as i64;
            assert_eq!(floor_i64(x), want, "{x}");
        }
    }

    #[test]
    fn a_prediction_within_its_slot_and_the_key_at_a_position_invert_each_other() {
        let mks: Vec<u64> = (0..500u64).map(|i| (i * i) << 20).collect();
        let m = LinearModel::fit(&mks, 256.0).offset_by(5);
        for &mk in mks.iter().step_by(7) {
            let (slot, within) = m.predict_within(mk, 300);
            assert_eq!(slot, m.predict(mk, 300));
            assert!((0.0..1.0).contains(&within), "{within}");
        }
        let mut checked = 0;
        for slot in 1..299usize {
            let mk = m.model_key_at(slot as f64).unwrap();
            if mk == 0 || mk == u64::MAX {
                continue; // saturated: the line reaches the slot outside u64
            }
            checked += 1;
            // The key at a slot's start routes to that slot (or, rounded
            // down by a fraction, to the one before).
            assert!((slot - 1..=slot).contains(&m.predict(mk, 300)), "{slot}");
            assert_eq!(m.predict(mk + (1 << 12), 300), slot, "{slot}");
        }
        assert!(checked > 200, "{checked}");
        assert_eq!(LinearModel::fit(&[7, 7, 7], 8.0).model_key_at(3.0), None);
    }

    #[test]
    fn local_prediction_matches_predict() {
        let mks: Vec<u64> = (0..100u64).map(|i| i * i * 977).collect();
        let m = LinearModel::fit(&mks, 150.0).shifted(-3.5);
        for k in (0..10_000_000u64).step_by(1013) {
            assert_eq!(m.predict_local(k, 150), m.predict(k, 150));
        }
    }

    #[test]
    fn fits_uniform_keys_exactly() {
        let mks: Vec<u64> = (0..100u64).map(|i| 1_000_000 + i * 10).collect();
        let m = LinearModel::fit(&mks, 200.0);
        for (i, &k) in mks.iter().enumerate() {
            assert!((m.predict_f64(k) - 2.0 * i as f64).abs() < 1e-6);
        }
    }

    #[test]
    fn degenerate_inputs_are_flat_and_monotone() {
        let m = LinearModel::fit(&[5, 5, 5], 16.0);
        assert_eq!(m.predict(5, 16), m.predict(u64::MAX, 16));
        let m = LinearModel::fit(&[], 16.0);
        assert_eq!(m.predict(9, 16), 0);
        let m = LinearModel::fit(&[u64::MAX - 3, u64::MAX - 2, u64::MAX], 8.0);
        assert!(m.predict(0, 8) <= m.predict(u64::MAX, 8));
    }

    #[test]
    fn doubling_refines_slots() {
        let mks: Vec<u64> = (0..50u64).map(|i| i * i * 1000).collect();
        let m = LinearModel::fit(&mks, 16.0).offset_by(5);
        let d = m.doubled();
        for k in (0..3_000_000u64).step_by(997) {
            let p = m.predict(k, 16);
            let q = d.predict(k, 32);
            assert!(q == 2 * p || q == 2 * p + 1, "{k}: {p} -> {q}");
        }
    }
}
