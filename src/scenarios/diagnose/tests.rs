//! Tests of the experiments' names, the plan of steps, and the words for numbers.

use super::*;

#[test]
fn names_parse_back_and_others_are_refused() {
    for e in Experiment::ALL {
        assert_eq!(Experiment::parse(e.name()).unwrap(), e);
    }
    assert_eq!(
        Experiment::parse("Slow_Joiner").unwrap(),
        Experiment::SlowJoiner
    );
    let err = Experiment::parse("lag").unwrap_err().to_string();
    assert!(
        err.contains("slow-joiner, hwm, fast-quit, sender-stops, deep-queue"),
        "{err}"
    );
}

#[test]
fn plan_runs_process_parts_once_and_notes_what_inproc_cannot_do() {
    let mut cfg = Config::new(PathBuf::from("zmqperf"));
    let (steps, notes) = plan(&cfg);
    assert!(notes.is_empty());
    let count = |p: Part| steps.iter().filter(|s| s.part == p).count();
    assert_eq!(count(Part::SlowJoiner), 3);
    assert_eq!(count(Part::HwmDropOrBlock), 3);
    assert_eq!(count(Part::HwmMemory), 1);
    assert_eq!(count(Part::FastQuitPair), 1);
    assert_eq!(count(Part::DeepQueue), 1);
    assert!(steps
        .iter()
        .filter(|s| matches!(s.part, Part::HwmMemory | Part::FastQuitPushPull))
        .all(|s| s.transport == Transport::Tcp));

    cfg.transports = vec![Transport::Inproc];
    cfg.experiments = vec![Experiment::FastQuit, Experiment::SenderStops];
    let (steps, notes) = plan(&cfg);
    assert_eq!(steps.len(), 1);
    assert_eq!(notes.len(), 2);
    assert!(notes[0].contains("add tcp or ipc"), "{notes:?}");
}

#[test]
fn words_for_numbers() {
    assert_eq!(messages(1), "1 message");
    assert_eq!(messages(1797), "1,797 messages");
    assert_eq!(ms(0.214), "0.21 ms");
    assert_eq!(ms(2.74), "2.74 ms");
    assert_eq!(ms(56.1), "56.1 ms");
    assert_eq!(ms(561.4), "561 ms");
    assert_eq!(ms(1234.0), "1.2 s");
    assert_eq!(ns_to_ms(2_740_400), 2.74);
}
