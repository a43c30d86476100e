//! The taxonomy of failure modes, as data: embedded TOML presets (`refactoring`, the default,
//! and `bugfix`), or a team's own file with the same shape. Each mode names the built-in
//! heuristic rules that can give it; a mode without rules comes only from the LLM or a human.

use super::Rule;
use serde::Deserialize;
use std::path::Path;

const PRESETS: &[(&str, &str)] =
    &[("refactoring", include_str!("taxonomies/refactoring.toml")), ("bugfix", include_str!("taxonomies/bugfix.toml"))];

/// The preset used when none is named.
pub const DEFAULT: &str = "refactoring";

#[derive(Debug, Clone, PartialEq)]
pub struct Taxonomy {
    pub name: String,
    pub version: String,
    pub description: String,
    pub modes: Vec<Mode>,
    /// A mode is assigned at this confidence or above; below it, it is weighed (shown with its
    /// evidence, not counted in statistics). Set from the reliability table of `trajan bench
    /// validity` (docs/CLASSIFYING.md); [`crate::label::ASSIGN_THRESHOLD`] when not given.
    pub assign_threshold: f64,
    /// How the hard cases are ruled (failure-modes.md): given to the LLM with the modes.
    pub rulings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Mode {
    /// Stable identifier stored in labels (`missed_edit_location`).
    pub id: String,
    pub title: String,
    pub definition: String,
    /// Hints for reviewers and the LLM: what evidence shows this mode.
    pub evidence: Vec<String>,
    pub rules: Vec<Rule>,
}

#[derive(Debug, thiserror::Error)]
pub enum TaxonomyError {
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
    /// Not a regular file, too large, not text, or unreadable.
    #[error(transparent)]
    File(#[from] crate::files::FileError),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTaxonomy {
    name: String,
    version: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    assign_threshold: Option<f64>,
    #[serde(default)]
    rulings: Vec<String>,
    modes: Vec<RawMode>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMode {
    id: String,
    title: String,
    definition: String,
    #[serde(default)]
    evidence: Vec<String>,
    #[serde(default)]
    rules: Vec<String>,
}

impl Taxonomy {
    /// A built-in preset by name.
    pub fn preset(name: &str) -> Option<Taxonomy> {
        let (_, text) = PRESETS.iter().find(|(n, _)| *n == name)?;
        Taxonomy::parse(text, &format!("built-in taxonomy {name}")).ok()
    }

    /// Names of the built-in presets.
    pub fn preset_names() -> impl Iterator<Item = &'static str> {
        PRESETS.iter().map(|(n, _)| *n)
    }

    /// A preset name, or else the path of a taxonomy file.
    pub fn load(name_or_path: &str) -> Result<Taxonomy, TaxonomyError> {
        if let Some(t) = Taxonomy::preset(name_or_path) {
            return Ok(t);
        }
        let path = Path::new(name_or_path);
        if !path.exists() {
            let names: Vec<&str> = Taxonomy::preset_names().collect();
            return Err(TaxonomyError::Invalid {
                origin: name_or_path.to_string(),
                message: format!("neither a taxonomy file nor a built-in taxonomy ({})", names.join(", ")),
            });
        }
        let text = crate::files::read_regular(path, crate::files::TAXONOMY)?;
        Taxonomy::parse(&text, &path.display().to_string())
    }

    /// Parse and validate a taxonomy file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Taxonomy, TaxonomyError> {
        let invalid = |message: String| TaxonomyError::Invalid { origin: origin.to_string(), message };
        let raw: RawTaxonomy = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        if raw.name.trim().is_empty() || raw.version.trim().is_empty() {
            return Err(invalid("`name` and `version` must not be empty".into()));
        }
        if raw.modes.is_empty() {
            return Err(invalid("no modes".into()));
        }
        // Taxonomy text reaches terminals and prompts: no control characters (escape sequences).
        let texts = [&raw.name, &raw.version, &raw.description].into_iter().chain(raw.rulings.iter()).chain(
            raw.modes.iter().flat_map(|m| [&m.id, &m.title, &m.definition].into_iter().chain(m.evidence.iter())),
        );
        for t in texts {
            if let Some(c) = t.chars().find(|c| c.is_control() && *c != '\n' && *c != '\t') {
                return Err(invalid(format!("control character U+{:04X} in {t:?}", c as u32)));
            }
        }
        let mut modes: Vec<Mode> = Vec::with_capacity(raw.modes.len());
        for m in raw.modes {
            let valid_id =
                !m.id.is_empty() && m.id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if !valid_id {
                return Err(invalid(format!("mode id `{}`: use lowercase letters, digits and _", m.id)));
            }
            if m.id == super::UNCLASSIFIED {
                return Err(invalid(format!("`{}` is implicit: a run with no mode is unclassified", m.id)));
            }
            if modes.iter().any(|x| x.id == m.id) {
                return Err(invalid(format!("mode `{}` appears twice", m.id)));
            }
            let rules = m
                .rules
                .iter()
                .map(|r| {
                    Rule::from_name(r).ok_or_else(|| {
                        let known: Vec<&str> = <Rule as strum::IntoEnumIterator>::iter().map(Rule::name).collect();
                        invalid(format!("mode `{}`: unknown rule `{r}` (known: {})", m.id, known.join(", ")))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            modes.push(Mode { id: m.id, title: m.title, definition: m.definition, evidence: m.evidence, rules });
        }
        let assign_threshold = raw.assign_threshold.unwrap_or(super::ASSIGN_THRESHOLD);
        if !(assign_threshold > 0.0 && assign_threshold <= 1.0) {
            return Err(invalid(format!("`assign_threshold` {assign_threshold} is not in (0, 1]")));
        }
        Ok(Taxonomy {
            name: raw.name,
            version: raw.version,
            description: raw.description,
            modes,
            assign_threshold,
            rulings: raw.rulings,
        })
    }

    pub fn mode(&self, id: &str) -> Option<&Mode> {
        self.modes.iter().find(|m| m.id == id)
    }

    /// The modes' ids, in the taxonomy's order (the keys 1–9 of the TUI).
    pub fn mode_ids(&self) -> Vec<String> {
        self.modes.iter().map(|m| m.id.clone()).collect()
    }

    /// `name@version`, as labels and exports are stamped.
    pub fn stamp(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }

    /// A hash of everything the classifiers read (modes, definitions, rules): a team file edited
    /// without a new version still makes the heuristic label again.
    pub fn fingerprint(&self) -> String {
        let mut h = blake3::Hasher::new();
        h.update(self.stamp().as_bytes());
        h.update(&self.assign_threshold.to_le_bytes());
        for r in &self.rulings {
            h.update(r.as_bytes());
            h.update(b"\0");
        }
        for m in &self.modes {
            for part in [&m.id, &m.title, &m.definition].into_iter().chain(&m.evidence) {
                h.update(part.as_bytes());
                h.update(b"\0");
            }
            for r in &m.rules {
                h.update(r.name().as_bytes());
                h.update(b"\0");
            }
        }
        h.finalize().to_hex()[..16].to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_parse_and_every_rule_serves_the_default() {
        let default = Taxonomy::preset(DEFAULT).unwrap();
        assert_eq!(default.modes.len(), 4);
        assert_eq!(default.stamp(), "refactoring@1.0");
        let used: Vec<Rule> = default.modes.iter().flat_map(|m| m.rules.clone()).collect();
        for r in <Rule as strum::IntoEnumIterator>::iter() {
            let in_bugfix = Taxonomy::preset("bugfix").unwrap().modes.iter().any(|m| m.rules.contains(&r));
            assert!(used.contains(&r) || in_bugfix, "rule {} is used by no preset", r.name());
        }
        let bugfix = Taxonomy::preset("bugfix").unwrap();
        assert_eq!(bugfix.modes.len(), 8);
        assert!(bugfix.mode("incorrect_implementation").unwrap().rules.is_empty());
    }

    #[test]
    fn bad_taxonomies_are_refused_with_the_reason() {
        let cases = [
            ("name = \"x\"\nversion = \"1\"\nmodes = []", "no modes"),
            (
                "name = \"x\"\nversion = \"1\"\n[[modes]]\nid = \"Bad Id\"\ntitle = \"t\"\ndefinition = \"d\"",
                "lowercase",
            ),
            (
                "name = \"x\"\nversion = \"1\"\n[[modes]]\nid = \"a\"\ntitle = \"t\"\ndefinition = \"d\"\nrules = [\"nope\"]",
                "unknown rule `nope`",
            ),
            (
                "name = \"x\"\nversion = \"1\"\n[[modes]]\nid = \"unclassified\"\ntitle = \"t\"\ndefinition = \"d\"",
                "implicit",
            ),
            (
                "name = \"x\"\nversion = \"1\"\n[[modes]]\nid = \"a\"\ntitle = \"t\"\ndefinition = \"d\"\n[[modes]]\nid = \"a\"\ntitle = \"t\"\ndefinition = \"d\"",
                "twice",
            ),
            (
                "name = \"x\"\nversion = \"1\"\ncolour = 3\n[[modes]]\nid = \"a\"\ntitle = \"t\"\ndefinition = \"d\"",
                "unknown field",
            ),
            ("name = [", "expected"),
            (
                "name = \"x\\u001b]0;PWNED\\u0007\"\nversion = \"1\"\n[[modes]]\nid = \"a\"\ntitle = \"t\"\ndefinition = \"d\"",
                "control character U+001B",
            ),
        ];
        for (text, want) in cases {
            let err = Taxonomy::parse(text, "team.toml").unwrap_err().to_string();
            assert!(err.starts_with("team.toml: ") && err.contains(want), "{err}");
        }
    }

    #[test]
    fn load_takes_a_preset_name_or_a_file() {
        assert_eq!(Taxonomy::load("bugfix").unwrap().name, "bugfix");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("team.toml");
        std::fs::write(
            &path,
            "name = \"team\"\nversion = \"2\"\n[[modes]]\nid = \"a\"\ntitle = \"A\"\ndefinition = \"d\"\n",
        )
        .unwrap();
        let t = Taxonomy::load(path.to_str().unwrap()).unwrap();
        assert_eq!((t.stamp().as_str(), t.modes[0].rules.len()), ("team@2", 0));
        let err = Taxonomy::load("no-such-taxonomy").unwrap_err().to_string();
        assert!(err.contains("refactoring, bugfix"), "{err}");
    }
}
