//! The JSON report: the whole [`RunResult`], pretty-printed; its shape is pinned by
//! schema/run-result.schema.json.

use super::Reporter;
use crate::model::RunResult;

/// Renders a run as JSON.
pub struct Json;

impl Reporter for Json {
    fn render(&self, run: &RunResult) -> String {
        match serde_json::to_string_pretty(run) {
            Ok(mut s) => {
                s.push('\n');
                s
            }
            // The model has only string keys and plain values, so this cannot happen; still,
            // a report is no reason to panic.
            Err(e) => format!(
                "{{\"error\": {}}}\n",
                serde_json::Value::String(format!("cannot serialise the run: {e}"))
            ),
        }
    }
}
