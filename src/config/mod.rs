//! The `[llm]`, `[classify]` and `[labels]` sections of `config.toml` (the XDG config folder,
//! see `tui::config`, which reads `[tui]`). Flags override them.

mod file;

pub(crate) use file::read_optional;
pub use file::{ConfigError, config_dir};
use serde::Deserialize;
use std::path::Path;

/// `[llm]`: how to reach the endpoint and what it costs. Every key is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmConfig {
    /// e.g. `http://127.0.0.1:8000/v1` (vLLM), `http://127.0.0.1:11434/v1` (Ollama).
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// The environment variable holding the key (the key itself never goes in a file).
    pub api_key_env: Option<String>,
    pub concurrency: Option<usize>,
    pub timeout_secs: Option<f64>,
    pub max_retries: Option<u32>,
    pub max_prompt_tokens: Option<usize>,
    /// Dollars per million prompt / completion tokens, for the cost of each label.
    pub price_in_per_mtok: Option<f64>,
    pub price_out_per_mtok: Option<f64>,
    pub temperature: Option<f32>,
    /// Ask for `response_format: json_object` (servers that support it).
    pub json_mode: Option<bool>,
    /// The largest reply body read, in MB (default 4): a longer reply fails its run.
    pub max_reply_mb: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassifySection {
    /// A built-in taxonomy name or a taxonomy file.
    pub taxonomy: Option<String>,
}

/// `[labels]`: who is labelling, and whether classifier labels stay hidden until they have.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelsSection {
    /// The reviewer's name (default `$USER`).
    pub rater: Option<String>,
    /// Hide the classifiers' labels of a run until the rater has labelled it (default true).
    pub blind: Option<bool>,
    /// Count runs whose outcome is unknown as failed runs in the queues, `]` and the
    /// statistics (default false: failed means the verdict is known and unresolved).
    pub include_unknown: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct UserConfig {
    #[serde(default)]
    pub llm: LlmConfig,
    #[serde(default)]
    pub classify: ClassifySection,
    #[serde(default)]
    pub labels: LabelsSection,
}

impl UserConfig {
    /// Reads `config.toml` of the config folder (`env` looks up environment variables); a
    /// missing folder or file gives the defaults, and so does one that cannot be read (with a
    /// warning on stderr, see `tui::config::read_optional`). A file with mistakes is an error.
    pub fn load(env: impl Fn(&str) -> Option<String>) -> Result<UserConfig, ConfigError> {
        let Some(dir) = config_dir(env) else { return Ok(UserConfig::default()) };
        let path = dir.join("config.toml");
        match read_optional(&path)? {
            Some(text) => UserConfig::parse(&text, &path),
            None => Ok(UserConfig::default()),
        }
    }

    pub fn parse(text: &str, path: &Path) -> Result<UserConfig, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::toml(path, text, &e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_read_and_others_ignored() {
        let text = "[tui]\ntheme = \"light\"\n\n[llm]\nbase_url = \"http://127.0.0.1:8000/v1\"\nmodel = \"qwen\"\nconcurrency = 8\nprice_in_per_mtok = 0.5\n\n[classify]\ntaxonomy = \"bugfix\"\n";
        let c = UserConfig::parse(text, Path::new("config.toml")).unwrap();
        assert_eq!(c.llm.model.as_deref(), Some("qwen"));
        assert_eq!(c.llm.concurrency, Some(8));
        assert_eq!(c.classify.taxonomy.as_deref(), Some("bugfix"));
    }

    #[test]
    fn a_mistyped_key_names_file_and_line() {
        let err =
            UserConfig::parse("[llm]\nmodel = \"x\"\nbase_uri = \"y\"\n", Path::new("/c/config.toml")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("/c/config.toml:3") && msg.contains("base_uri"), "{msg}");
    }
}
