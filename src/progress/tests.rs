//! The progress line and the planned end: what is shown, when, and how the end is guessed.

use super::*;
use std::time::{Duration, Instant};

fn p(fixed_s: f64, guess_s: f64) -> Planned {
    Planned { fixed_s, guess_s }
}

#[test]
fn the_eta_counts_paced_time_whole_and_scales_the_guesses() {
    // A paced case of 2 s x 3 repetitions, and two unpaced ones guessed at 0.5 s.
    let mut eta = Eta::new(vec![p(6.0, 0.3), p(0.0, 0.5), p(0.0, 0.5)]);
    assert!((eta.total_s() - 7.3).abs() < 1e-9);
    eta.started(0);
    assert!((eta.left_s(0.0) - 7.3).abs() < 1e-9);
    assert!((eta.left_s(4.0) - 3.3).abs() < 1e-9, "{}", eta.left_s(4.0));
    // Past its plan, the current case counts for nothing more, never less than 0.
    assert!((eta.left_s(9.0) - 1.0).abs() < 1e-9);
    // It took 6.6 s: its guessed 0.3 s took 0.6 s, so the other guesses double.
    eta.done(0, 6.6);
    eta.started(1);
    assert!((eta.left_s(0.0) - 2.0).abs() < 1e-9, "{}", eta.left_s(0.0));
    eta.done(1, 1.0);
    eta.started(2);
    assert!((eta.left_s(0.5) - 0.5).abs() < 1e-9, "{}", eta.left_s(0.5));
    eta.done(2, 1.0);
    assert_eq!(eta.left_s(0.0), 0.0);
}

#[test]
fn a_fixed_part_that_ran_long_does_not_shrink_the_guesses_below_a_tenth() {
    let mut eta = Eta::new(vec![p(2.0, 1.0), p(0.0, 1.0)]);
    eta.done(0, 1.0);
    assert!((eta.left_s(0.0) - 0.1).abs() < 1e-9);
}

#[test]
fn the_eta_reads_in_seconds_then_minutes() {
    assert_eq!(eta_text(3.4), "ETA 3 s");
    assert_eq!(eta_text(-1.0), "ETA 0 s");
    assert_eq!(eta_text(99.0), "ETA 1 min 39 s");
    let now = Instant::now();
    assert_eq!(
        live_text("[1/2] x", Some(now + Duration::from_secs(5)), now),
        "[1/2] x  ETA 5 s"
    );
    assert_eq!(
        live_text("[1/2] x", Some(now), now + Duration::from_secs(4)),
        "[1/2] x  4 s past the planned end"
    );
}

#[test]
fn off_a_terminal_the_live_line_and_the_planning_counter_stay_quiet() {
    let live = Live::new(false);
    assert!(!live.is_live());
    live.set("[1/1] case".into(), Some(Instant::now()));
    assert!(
        !live.state().line.is_shown(),
        "nothing shown off a terminal"
    );
    assert!(
        live.shared.thread.lock().unwrap().is_none(),
        "no redraw thread"
    );
    let mut planning = Planning::new(false);
    for i in 0..10_000 {
        planning.planned(i);
    }
    assert!(planning.line.is_none());
    planning.done();
}
