//! Failure classification (docs/CLASSIFYING.md): per-run signals, the offline heuristic
//! classifier and the LLM classifier, both producing [`crate::label::Label`]s under a
//! [`crate::label::taxonomy::Taxonomy`], with the run's onset and blame (`onset`, `blame`). The signals, rules and prompt are pure functions of a
//! run's [`input::RunInput`]; the pipelines (`pipeline`, `llm::pipeline`) read runs from the
//! store (made into that input in `from_store`, the one place the two meet) and write labels.

pub mod blame;
mod from_store;
pub mod heuristic;
pub mod input;
pub mod llm;
pub mod onset;
pub mod pipeline;
pub mod rules;
pub mod signals;
