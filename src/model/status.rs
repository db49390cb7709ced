//! The status of a run ([`RunStatus`]): one of four words, the same in the JSON report and
//! in the history's `runs.status` column.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Where a run stands. Serialized as its word (`"complete"`, ...), the form of the JSON
/// report (schema/run-result.schema.json) and of the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunStatus {
    /// Begun and not ended (or, read from the history, its writer still alive).
    Running,
    /// Every case (or experiment) ran.
    Complete,
    /// Cut short by Ctrl-C, a signal or a crash: the cases so far are kept.
    Interrupted,
    /// As read from the history: the run ended but some of its cases could not be
    /// written there.
    Partial,
}

impl RunStatus {
    /// Every status, in the order the history's messages name them.
    pub const ALL: [RunStatus; 4] = [
        RunStatus::Complete,
        RunStatus::Interrupted,
        RunStatus::Partial,
        RunStatus::Running,
    ];

    /// The word for this status.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Partial => "partial",
        }
    }

    /// The status a word names, if any.
    pub fn parse(word: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|s| s.as_str() == word)
    }

    /// Why `word` is refused as a status (the words a status may be).
    pub fn refusal(word: &str) -> String {
        format!("'{word}' is not a run's status (complete, interrupted, partial or running)")
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for RunStatus {
    fn eq(&self, word: &&str) -> bool {
        self.as_str() == *word
    }
}

impl PartialEq<str> for RunStatus {
    fn eq(&self, word: &str) -> bool {
        self.as_str() == word
    }
}

impl Serialize for RunStatus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for RunStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let word = String::deserialize(d)?;
        RunStatus::parse(&word).ok_or_else(|| serde::de::Error::custom(RunStatus::refusal(&word)))
    }
}

#[cfg(test)]
mod tests {
    use super::RunStatus;

    #[test]
    fn each_status_is_its_word_in_json_and_back() {
        for s in RunStatus::ALL {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(serde_json::from_str::<RunStatus>(&json).unwrap(), s);
            assert_eq!(RunStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(RunStatus::Interrupted, "interrupted");
    }

    #[test]
    fn an_unknown_word_is_refused_with_the_four_words() {
        let e = serde_json::from_str::<RunStatus>("\"finished\"").unwrap_err();
        assert!(
            e.to_string().starts_with(
                "'finished' is not a run's status (complete, interrupted, partial or running)"
            ),
            "{e}"
        );
    }
}
