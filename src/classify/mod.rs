//! Failure classification (docs/CLASSIFYING.md): per-run signals, the offline heuristic
//! classifier and the LLM classifier, both producing [`crate::label::Label`]s under a
//! [`crate::label::taxonomy::Taxonomy`].

pub mod heuristic;
pub mod llm;
pub mod pipeline;
pub mod rules;
pub mod signals;
