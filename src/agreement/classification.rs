//! A rater scored as a binary classifier against a reference: confusion, precision, recall, F1.

use serde::Serialize;
use std::ops::{Add, AddAssign};

/// The 2×2 confusion of a rater (predicted) against a reference (actual), one mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Confusion {
    /// Rater and reference both name the mode.
    pub tp: u64,
    /// The rater names it, the reference does not.
    pub fp: u64,
    /// The reference names it, the rater does not (serialized as `fn`).
    #[serde(rename = "fn")]
    pub fn_: u64,
    /// Neither names it.
    pub tn: u64,
}

impl Confusion {
    /// Counts `(predicted, reference)` pairs (items where either is missing are the caller's to
    /// skip, e.g. with [`super::Table::pairs`]).
    pub fn from_pairs<'a, I>(pairs: I) -> Confusion
    where
        I: IntoIterator<Item = &'a (bool, bool)>,
    {
        let mut c = Confusion::default();
        for &(p, r) in pairs {
            c.count(p, r);
        }
        c
    }

    /// Adds one `(predicted, reference)` pair.
    pub fn count(&mut self, predicted: bool, reference: bool) {
        let cell = match (predicted, reference) {
            (true, true) => &mut self.tp,
            (true, false) => &mut self.fp,
            (false, true) => &mut self.fn_,
            (false, false) => &mut self.tn,
        };
        *cell = cell.saturating_add(1);
    }

    /// Number of items counted.
    pub fn n(&self) -> u64 {
        self.tp.saturating_add(self.fp).saturating_add(self.fn_).saturating_add(self.tn)
    }

    /// tp / (tp + fp); `None` when the rater named the mode nowhere (sklearn's
    /// `zero_division=np.nan`).
    pub fn precision(&self) -> Option<f64> {
        let (tp, fp, _, _) = self.wide();
        ratio(tp, tp + fp)
    }

    /// tp / (tp + fn); `None` when the reference named the mode nowhere.
    pub fn recall(&self) -> Option<f64> {
        let (tp, _, fn_, _) = self.wide();
        ratio(tp, tp + fn_)
    }

    /// 2tp / (2tp + fp + fn), the harmonic mean of precision and recall where both are defined;
    /// 0 when only one is; `None` when neither names the mode anywhere (as sklearn ≥ 1.3 with
    /// `zero_division=np.nan`).
    pub fn f1(&self) -> Option<f64> {
        let (tp, fp, fn_, _) = self.wide();
        ratio(2 * tp, 2 * tp + fp + fn_)
    }

    /// Cohen's kappa of the two (see [`super::cohen_kappa`]).
    pub fn kappa(&self) -> Option<f64> {
        super::cohen_kappa_from_matrix(&[self.tn, self.fp, self.fn_, self.tp], 2)
    }

    /// Raw agreement (tp + tn) / n; `None` when empty.
    pub fn raw_agreement(&self) -> Option<f64> {
        let (tp, fp, fn_, tn) = self.wide();
        ratio(tp + tn, tp + fp + fn_ + tn)
    }
}

impl Confusion {
    fn wide(&self) -> (u128, u128, u128, u128) {
        (u128::from(self.tp), u128::from(self.fp), u128::from(self.fn_), u128::from(self.tn))
    }
}

impl Add for Confusion {
    type Output = Confusion;
    fn add(self, o: Confusion) -> Confusion {
        Confusion {
            tp: self.tp.saturating_add(o.tp),
            fp: self.fp.saturating_add(o.fp),
            fn_: self.fn_.saturating_add(o.fn_),
            tn: self.tn.saturating_add(o.tn),
        }
    }
}

impl AddAssign for Confusion {
    fn add_assign(&mut self, o: Confusion) {
        *self = *self + o;
    }
}

fn ratio(num: u128, den: u128) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}
