//! How a run ended, as one category beside the failure modes: budget, format, timeout, API,
//! no patch... Statistics can then separate "ran out of budget" from "reasoned wrongly".

use serde::{Deserialize, Serialize};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::EnumIter, strum::IntoStaticStr, strum::EnumString,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ExitCategory {
    /// Submitted a non-empty patch.
    Submitted,
    /// Submitted, or finished, with no patch.
    NoPatch,
    /// Cost, step or iteration limit.
    Cost,
    /// Wall-clock or command time limit.
    Timeout,
    Context,
    /// Repeated malformed responses.
    Format,
    /// The model API failed.
    Api,
    Environment,
    Forfeit,
    /// Any other error or exception.
    Error,
    Unknown,
}

impl ExitCategory {
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// From the exit status the agent wrote (SWE-agent `exit_*`, `submitted (exit_X)`;
    /// mini-swe-agent `Submitted`, `LimitsExceeded`, an exception name; OpenHands `finished`,
    /// an error text) and whether a patch was submitted.
    pub fn classify(exit_status: Option<&str>, has_patch: bool) -> ExitCategory {
        let Some(status) = exit_status.map(str::trim).filter(|s| !s.is_empty()) else {
            return if has_patch { ExitCategory::Submitted } else { ExitCategory::Unknown };
        };
        let s = status.to_ascii_lowercase();
        // `submitted (exit_cost)`: a patch existed when the limit hit; the limit is the story.
        let inner = s.find("(exit_").map(|p| &s[p + 1..]).unwrap_or(&s);
        if inner.contains("exit_cost")
            || s.contains("limitsexceeded")
            || s.contains("maximum iteration")
            || s.contains("budget")
        {
            ExitCategory::Cost
        } else if inner.contains("exit_total_execution_time")
            || inner.contains("exit_command_timeout")
            || s.contains("timeexceeded")
            || s.contains("timeout")
        {
            ExitCategory::Timeout
        } else if inner.contains("exit_context") || s.contains("context window") || s.contains("contextwindow") {
            ExitCategory::Context
        } else if inner.contains("exit_format") || s.contains("repeatedformaterror") || s.contains("formaterror") {
            ExitCategory::Format
        } else if inner.contains("exit_api")
            || s.contains("ratelimit")
            || s.contains("apierror")
            || s.contains("api error")
        {
            ExitCategory::Api
        } else if inner.contains("exit_environment") {
            ExitCategory::Environment
        } else if inner.contains("exit_forfeit") {
            ExitCategory::Forfeit
        } else if s.starts_with("submitted") || s == "finished" || s == "success" {
            if has_patch { ExitCategory::Submitted } else { ExitCategory::NoPatch }
        } else if inner.contains("exit_error") || s.contains("error") || s.contains("exception") {
            ExitCategory::Error
        } else {
            ExitCategory::Unknown
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ExitCategory::{self, *};

    #[test]
    fn the_exit_statuses_of_each_agent() {
        for (status, patch, want) in [
            (Some("submitted"), true, Submitted),
            (Some("submitted"), false, NoPatch),
            (Some("Submitted"), true, Submitted),
            (Some("finished"), false, NoPatch),
            (Some("submitted (exit_format)"), true, Format),
            (Some("submitted (exit_cost)"), true, Cost),
            (Some("exit_cost"), false, Cost),
            (Some("LimitsExceeded"), false, Cost),
            (Some("RuntimeError: Agent reached maximum iteration in headless mode"), true, Cost),
            (Some("exit_total_execution_time"), false, Timeout),
            (Some("exit_command_timeout"), false, Timeout),
            (Some("TimeExceeded"), false, Timeout),
            (Some("exit_context"), false, Context),
            (Some("RepeatedFormatError"), false, Format),
            (Some("exit_api"), false, Api),
            (Some("exit_environment_error"), false, Environment),
            (Some("exit_forfeit"), false, Forfeit),
            (Some("exit_error"), false, Error),
            (Some("KeyError"), false, Error),
            (Some("Stopped"), false, Unknown),
            (Some("ValueError exception"), false, Error),
            (None, true, Submitted),
            (None, false, Unknown),
        ] {
            assert_eq!(ExitCategory::classify(status, patch), want, "{status:?}");
        }
    }
}
