//! Failure classification (docs/CLASSIFYING.md): per-run signals, the offline heuristic
//! classifier and the LLM classifier, both producing [`crate::label::Label`]s under a
//! [`crate::label::taxonomy::Taxonomy`]. The signals, rules and prompt are pure functions of a
//! run's [`input::RunInput`]; the pipelines (`pipeline`, `llm::pipeline`) read runs from the
//! store (made into that input in `from_store`, the one place the two meet) and write labels.

mod from_store;
pub mod heuristic;
pub mod input;
pub mod llm;
pub mod pipeline;
pub mod rules;
pub mod signals;
