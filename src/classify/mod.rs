//! Failure classification: taxonomy, signals, the heuristic and LLM classifiers.

pub mod llm;
