//! The heuristic's rules by name: the vocabulary a taxonomy maps to its modes. What each rule
//! reads and concludes is the classifier's (`classify::rules`).

/// A built-in rule of the heuristic classifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum Rule {
    ExpectedFileNeverSeen,
    ExpectedFileNotEdited,
    ExpectedFunctionNotEdited,
    GaveUpApplying,
    EditLost,
    GatedRejectionBypassed,
    GatedRejectionAbandoned,
    GatedRejectionRecovered,
    FloodThenRepeat,
    StaleIdentifier,
    GoldPeripheryUntouched,
    /// Gold sites that follow the agent's own change (call it, make the same change) left.
    ChangeNotCarried,
    BudgetExhausted,
    Forfeited,
}

/// Rules that run only with a gold patch (the others read the task text and the run): the
/// classifier skips them without one, and the statistics say so (`review::stats::gold_note`).
pub const NEEDS_GOLD: &[Rule] = &[Rule::ExpectedFunctionNotEdited, Rule::GoldPeripheryUntouched];

impl Rule {
    pub fn name(self) -> &'static str {
        self.into()
    }

    pub fn from_name(name: &str) -> Option<Rule> {
        name.parse().ok()
    }
}
