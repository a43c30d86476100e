//! The LLM classifier: any OpenAI-compatible chat-completions endpoint. `prompt` condenses a
//! run, `client` sends it (retries, timeouts, the key kept out of errors), `reply` validates the
//! answer, `pipeline` runs many at once against the store.

pub mod client;
pub mod pipeline;
pub mod prompt;
pub mod reply;
