//! Failure classification (docs/CLASSIFYING.md): the taxonomy as data, per-run signals, the
//! offline heuristic classifier and the LLM classifier, both producing [`label::Label`]s.

pub mod heuristic;
pub mod label;
pub mod llm;
pub mod pipeline;
pub mod rules;
pub mod signals;
pub mod taxonomy;
