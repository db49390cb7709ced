//! The search against known systems, the service level's syntax and the cause rule.

use super::*;

/// Runs a search against a system that holds every rate up to `limit`.
fn against(limit: f64, start: f64) -> (Found, u32) {
    let mut s = Search::new(start, 10_000_000.0, 0.05, 40);
    while let Some(r) = s.next_rate() {
        s.record(r <= limit);
    }
    (s.found(), s.steps)
}

#[test]
fn the_limit_is_bracketed_then_bisected_to_the_tolerance_and_held_at_the_boundary() {
    for limit in [1_500.0, 37_000.0, 123_456.0, 2_000_000.0] {
        let (found, steps) = against(limit, 1_000.0);
        let Found::Limit { held, broke } = found else {
            panic!("{limit}: {found:?}")
        };
        assert!(held <= limit && broke > limit, "{limit}: {held} {broke}");
        assert!(broke <= held * 1.05, "{limit}: {held} {broke}");
        assert!(held >= limit * 0.95, "{limit}: {held}");
        // Doubling then bisection: a handful of steps, not a sweep.
        assert!(steps <= 20, "{limit}: {steps} steps");
    }
}

#[test]
fn a_start_that_breaks_goes_down_and_one_that_never_breaks_stops_at_the_ceiling() {
    let (found, _) = against(300.0, 1_000.0);
    let Found::Limit { held, .. } = found else {
        panic!("{found:?}")
    };
    assert!((285.0..=300.0).contains(&held), "{held}");
    let (found, _) = against(1e12, 1_000.0);
    assert_eq!(found, Found::AboveCeiling { held: 10_000_000.0 });
}

#[test]
fn a_rate_held_once_and_broken_on_its_second_run_is_not_the_limit() {
    // Holds up to 50k, except that 49k-50k flakes the second time it runs.
    let mut s = Search::new(1_000.0, 1e7, 0.05, 60);
    let mut runs = std::collections::HashMap::new();
    while let Some(r) = s.next_rate() {
        let n = runs.entry((r as u64) / 1000).or_insert(0);
        *n += 1;
        let flaky = (49_000.0..=50_000.0).contains(&r) && *n > 1;
        s.record(r <= 50_000.0 && !flaky);
    }
    let Found::Limit { held, .. } = s.found() else {
        panic!("{:?}", s.found())
    };
    assert!(held < 49_000.0, "{held}");
}

#[test]
fn whole_values_are_bisected_to_one_apart_and_the_boundary_runs_three_times() {
    let mut s = Search::new(1.0, 100_000.0, 0.05, 40).whole();
    while let Some(v) = s.next_rate() {
        assert_eq!(v, v.round(), "{v}");
        s.record(v <= 37.0);
    }
    assert_eq!(
        s.found(),
        Found::Limit {
            held: 37.0,
            broke: 38.0
        }
    );
    // The last four steps: 37 twice more (held three times), then 38 twice more.
    let tail: Vec<_> = s.history.iter().rev().take(4).copied().collect();
    assert_eq!(
        tail,
        [(38.0, false), (38.0, false), (37.0, true), (37.0, true)]
    );
    assert_eq!(s.history.iter().filter(|h| h.0 == 37.0).count(), 3);
    assert_eq!(s.band(), (Some(37.0), Some(38.0)));
}

#[test]
fn the_band_widens_where_the_steps_disagree() {
    let mut s = Search::new(1_000.0, 1e7, 0.05, 40);
    s.history = vec![
        (1_000.0, true),
        (2_000.0, true),
        (4_000.0, false),
        (3_000.0, true),
    ];
    assert_eq!(s.band(), (Some(3_000.0), Some(4_000.0)));
    // 2,000 broke once although 3,000 held: the band goes down to what held below it.
    s.history.push((2_000.0, false));
    s.history.push((3_500.0, true));
    assert_eq!(s.band(), (Some(1_000.0), Some(4_000.0)));
    // The lowest broken held when run again: no upper bound is known.
    s.history.push((4_000.0, true));
    assert_eq!(s.band(), (Some(1_000.0), None));
}

#[test]
fn a_broken_step_is_put_down_to_its_error_its_loss_or_the_busiest_node() {
    let slo = Slo::parse("loss=0,p99<=5ms").unwrap();
    let node = |n: &str, r: &str, p: f64| Busy {
        node: n.into(),
        role: r.into(),
        core_pct: p,
    };
    let failed = Figures {
        error: Some("zmq_socket: Too many open files".into()),
        ..Figures::default()
    };
    assert!(cause(&failed, &slo, &[], 2, None).starts_with("file descriptors"));
    let lost = Figures {
        lost: 7,
        ..Figures::default()
    };
    let said = cause(
        &lost,
        &slo,
        &[],
        2,
        Some("in the middle (7 lost), the high-water mark".into()),
    );
    assert!(said.starts_with("in the middle"), "{said}");
    let late = Figures {
        p99_ns: Some(9e6),
        ..Figures::default()
    };
    let nodes = [node("src", "source", 40.0), node("slow", "slow_sink", 99.0)];
    let said = cause(&late, &slo, &nodes, 2, None);
    assert!(
        said.starts_with("a slow consumer: slow (slow_sink) used 99%"),
        "{said}"
    );
    let nodes = [node("a", "source", 85.0), node("b", "sink", 80.0)];
    let said = cause(&late, &slo, &nodes, 2, None);
    assert!(
        said.starts_with("the machine's CPUs: the nodes together used 165%"),
        "{said}"
    );
    let said = cause(&late, &slo, &nodes, 4, None);
    assert!(
        said.starts_with("not the nodes' CPU (the busiest, a, used 85%"),
        "{said}"
    );
}

#[test]
fn the_figure_s_own_noise_at_the_boundary_widens_the_band() {
    let mut s = Search::new(1.0, 1e5, 0.05, 40).whole();
    s.history = vec![(100.0, true), (100.0, true), (104.0, false), (104.0, false)];
    s.held = Some(100.0);
    s.broke = Some(104.0);
    assert_eq!(s.uncertainty(), (Some(100.0), Some(104.0), None));
    // p99 at 0.90 and 0.99 of its bound at 100, 1.02 and 1.10 at 104: 10% apart at
    // most, so the band is 100 / 1.1 .. 104 x 1.1.
    for (v, u) in [(100.0, 0.9), (100.0, 0.99), (104.0, 1.02), (104.0, 1.10)] {
        s.note_usage(v, Some(u));
    }
    let (lo, hi, r) = s.uncertainty();
    assert!((r.unwrap() - 0.1).abs() < 1e-9, "{r:?}");
    assert_eq!((lo, hi), (Some(91.0), Some(114.0)));
    let slo = Slo::parse("p99<=1ms,delivered>=90%").unwrap();
    let f = Figures {
        p99_ns: Some(500_000.0),
        delivered: Some(900.0),
        offered: Some(1000.0),
        ..Figures::default()
    };
    assert_eq!(slo.usage(&f), Some(1.0));
}

#[test]
fn service_levels_parse_and_say_what_is_wrong() {
    assert_eq!(Slo::parse("").unwrap(), Slo::default());
    let s = Slo::parse("loss=0,p99<=5ms").unwrap();
    assert_eq!((s.max_lost, s.max_p99_ns), (0, Some(5_000_000)));
    for (text, ns) in [
        ("250us", 250_000),
        ("1.5ms", 1_500_000),
        ("800ns", 800),
        ("2s", 2_000_000_000),
    ] {
        assert_eq!(
            Slo::parse(&format!("p99<={text}")).unwrap().max_p99_ns,
            Some(ns),
            "{text}"
        );
    }
    let s = Slo::parse("loss=10, delivered>=90%").unwrap();
    assert_eq!((s.max_lost, s.min_delivered), (10, 0.9));
    for (bad, says) in [
        ("p99<5ms", "is not a part of a service level"),
        ("loss=x", "loss= takes a count"),
        ("p99<=soon", "p99<= takes a latency"),
        ("p99<=5", "p99<= takes a latency"),
        ("p99<=0us", "p99<= takes a latency"),
        ("delivered>=150%", "delivered>= takes a percentage"),
    ] {
        let e = Slo::parse(bad).unwrap_err().to_string();
        assert!(e.contains(says) && e.contains("--slo"), "{bad}: {e}");
    }
}

#[test]
fn a_step_held_by_the_multicast_rate_limit_is_named_so() {
    let mut warnings =
        vec!["rate not reached: asked for 400 msg/s, delivered 188 msg/s".to_string()];
    assert_eq!(pace_of(&warnings), None);
    warnings.push("cause: the multicast rate limit: 'pub' delivered 96 kbit/s of payload; fix: multicast_rate = 1000000".into());
    let said = pace_of(&warnings).unwrap();
    assert!(
        said.starts_with("the multicast rate limit: 'pub' delivered 96 kbit/s"),
        "{said}"
    );
    assert!(said.contains("fix: multicast_rate = 1000000"), "{said}");
}
