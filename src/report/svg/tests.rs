//! Tests of the axes' ticks and labels, the split of long labels, and escaping.

use super::axis::nines_label;
use super::parts::split_label;
use super::*;

fn labels(a: &Axis) -> Vec<&str> {
    a.ticks.iter().map(|t| t.1.as_str()).collect()
}

#[test]
fn linear_ticks_are_round() {
    let a = Axis::new("y", Scale::Linear, [3.0, 97.0], |v| format!("{v}"));
    assert_eq!(labels(&a), ["0", "20", "40", "60", "80", "100"]);
    let a = Axis::new("y", Scale::Linear, [], |v| format!("{v}"));
    assert_eq!(a.lo, 0.0);
    assert!(a.hi > 0.0);
}

#[test]
fn log_ticks() {
    let a = Axis::new("x", Scale::Log2, [64.0, 65536.0], |v| format!("{v}"));
    assert_eq!(a.ticks.first().unwrap().1, "64");
    assert_eq!(a.ticks.last().unwrap().1, "65536");
    assert!(
        a.lo < 6.0 && a.hi > 16.0,
        "outer points stay inside the frame"
    );
    let one = Axis::new("x", Scale::Log2, [64.0], |v| format!("{v}"));
    assert_eq!(labels(&one), ["32", "64", "128"]);
    let a = Axis::new("y", Scale::Log10, [30.0, 700.0], |v| format!("{v}"));
    assert_eq!(labels(&a), ["20", "50", "100", "200", "500", "1000"]);
    let none = Axis::new("y", Scale::Log10, [0.0], |v| format!("{v}"));
    assert_eq!(none.scale, Scale::Linear);
}

#[test]
fn nines() {
    assert_eq!(nines_label(0), "0");
    assert_eq!(nines_label(1), "90");
    assert_eq!(nines_label(2), "99");
    assert_eq!(nines_label(4), "99.99");
    let a = Axis::new("p", Scale::Nines, [0.0, 3.2], |v| format!("{v}"));
    assert_eq!(labels(&a), ["0", "90", "99", "99.9", "99.99"]);
}

#[test]
fn long_labels_split_in_two() {
    assert_eq!(split_label("short (us)", 300.0), ["short (us)"]);
    let two = split_label("latency from the due send time (µs), log scale", 300.0);
    assert_eq!(two, ["latency from the due send", "time (µs), log scale"]);
}

#[test]
fn escapes() {
    assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
}
