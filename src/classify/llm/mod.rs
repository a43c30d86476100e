//! The LLM classifier: any OpenAI-compatible chat-completions endpoint.

pub mod client;
