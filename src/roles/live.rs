//! Intervals as they happen (`--interval`): a receiving role hands each interval it closes
//! to one hook of its process. In the runner's process the command sets the hook (it
//! prints a line per interval); in a node's own process the hook writes the interval to the
//! runner as a control line, which the runner hands to its own hook. Without a hook, the
//! intervals are only kept for the report.

use crate::model::IntervalRecord;
use std::sync::{Arc, Mutex};

/// What is called with each interval: the node's name and the interval.
pub type IntervalHook = Arc<dyn Fn(&str, &IntervalRecord) + Send + Sync>;

static HOOK: Mutex<Option<IntervalHook>> = Mutex::new(None);

/// Sets (or with None, clears) the hook of this process.
pub fn set_interval_hook(hook: Option<IntervalHook>) {
    *HOOK.lock().unwrap_or_else(|e| e.into_inner()) = hook;
}

/// Hands an interval to the hook, if there is one.
pub fn interval(node: &str, record: &IntervalRecord) {
    let hook = HOOK.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(h) = hook {
        h(node, record);
    }
}
