//! Tests of the validation: each mistake named, and the flows through copies, shares and
//! proxies.

use super::*;
use crate::topology::load::load;

fn one(text: &str) -> Result<Graph> {
    let v = load("t.json", text)?;
    check("t.json", &v[0].topology)
}

fn node(name: &str, role: &str, sock: &str) -> String {
    format!(r#"{{"name": "{name}", "role": "{role}", "socket": {sock}}}"#)
}

fn topo(nodes: &[String]) -> String {
    format!(r#"{{"nodes": [{}]}}"#, nodes.join(","))
}

#[test]
fn the_ptmp_example_checks_and_flows_to_both_subscribers() {
    let g = one(&topo(&[
        node(
            "pub",
            "source",
            r#"{"type": "PUB", "bind": ["tcp://127.0.0.1:*"]}"#,
        ),
        node("sub1", "sink", r#"{"type": "SUB", "connect": ["pub"]}"#),
        node("sub2", "sink", r#"{"type": "SUB", "connect": ["pub"]}"#),
    ]))
    .unwrap();
    assert_eq!(g.links.len(), 2);
    assert_eq!(g.order[0], 0);
    let f = g.flows();
    assert_eq!(f.len(), 2);
    assert!(f.iter().all(|f| !f.shared));
    assert_eq!(g.warnings.len(), 2, "{:?}", g.warnings);
    assert!(g.warnings[0].contains("sub1") && g.warnings[0].contains("subscribe"));
}

#[test]
fn push_to_two_pulls_is_shared_and_proxies_are_followed() {
    let g = one(&topo(&[
        node("src", "source", r#"{"type": "PUSH", "bind": ["auto"]}"#),
        node("a", "sink", r#"{"type": "PULL", "connect": ["src"]}"#),
        node("b", "sink", r#"{"type": "PULL", "connect": ["src"]}"#),
    ]))
    .unwrap();
    assert!(g.flows().iter().all(|f| f.shared));
    let text = r#"{"nodes": [
      {"name": "w", "role": "source", "replicas": 3, "socket": {"type": "PUSH", "connect": ["col"]}},
      {"name": "col", "role": "proxy", "sockets": [{"type": "PULL", "bind": ["auto"]}, {"type": "PUB", "bind": ["auto"]}]},
      {"name": "r", "role": "sink", "replicas": 2, "socket": {"type": "SUB", "connect": ["col"], "subscribe": [""]}}
    ]}"#;
    let g = one(text).unwrap();
    let f = g.flows();
    assert_eq!(
        f,
        vec![Flow {
            source: 0,
            sink: 2,
            shared: false
        }]
    );
    assert_eq!(g.order, vec![1, 0, 2]);
    assert!(
        crate::report::checked::checked_topology(&g).contains("w (PUSH) -> col (PULL)"),
        "{}",
        crate::report::checked::checked_topology(&g)
    );
}

#[test]
fn each_mistake_names_the_node_and_the_field() {
    let cases: Vec<(String, &str)> = vec![
        (
            topo(&[
                node("a", "sink", r#"{"type": "SUBB", "bind": ["auto"]}"#),
                node("b", "source", r#"{"type": "PUB", "connect": ["a"]}"#),
            ]),
            "node 'a': socket.type",
        ),
        (
            topo(&[
                node("r", "echo", r#"{"type": "PUSH", "bind": ["auto"]}"#),
                node("q", "ping", r#"{"type": "REQ", "connect": ["r"]}"#),
            ]),
            "node 'r': socket.type",
        ),
        (
            topo(&[
                node("p", "sink", r#"{"type": "PULL", "bind": ["auto"]}"#),
                node("q", "ping", r#"{"type": "REQ", "connect": ["p"]}"#),
            ]),
            "ZMTP refuses",
        ),
        (
            topo(&[
                node("a", "sink", r#"{"type": "PAIR", "bind": ["auto"]}"#),
                node("b", "source", r#"{"type": "PAIR", "connect": ["a"]}"#),
                node("c", "source", r#"{"type": "PAIR", "connect": ["a"]}"#),
            ]),
            "exactly one peer",
        ),
        (
            topo(&[
                node("a", "sink", r#"{"type": "CHANNEL", "bind": ["auto"]}"#),
                node("b", "source", r#"{"type": "CHANNEL", "connect": ["a"]}"#),
                node("c", "source", r#"{"type": "CHANNEL", "connect": ["a"]}"#),
            ]),
            "a CHANNEL socket has exactly one peer",
        ),
        (
            topo(&[
                node("a", "source", r#"{"type": "peer", "bind": ["auto"]}"#),
                node("b", "sink", r#"{"type": "PEER", "connect": ["a"]}"#),
            ]),
            "node 'a': socket.bind '[\"auto\"]': a PEER source sends to the routing id its connect gave",
        ),
        (
            topo(&[
                node("a", "echo", r#"{"type": "PEER", "bind": ["auto"]}"#),
                node("b", "echo", r#"{"type": "PEER", "bind": ["auto"]}"#),
                node("c", "ping", r#"{"type": "PEER", "connect": ["a", "b"]}"#),
            ]),
            "node 'c': socket.connect '[\"a\", \"b\"]': a PEER ping sends to the routing id its connect gave (zmq_connect_peer): give it exactly one `connect`",
        ),
        (
            topo(&[
                node("a", "sink", r#"{"type": "PEER", "bind": ["auto"]}"#),
                node("b", "source", r#"{"type": "CLIENT", "connect": ["a"]}"#),
            ]),
            "a CLIENT socket cannot talk to PEER",
        ),
        (
            topo(&[
                node("a", "sink", r#"{"type": "PEER", "connect": ["r"]}"#),
                r#"{"name": "r", "role": "proxy", "sockets": [{"type": "PULL", "bind": ["auto"]}, {"type": "PEER", "bind": ["auto"]}]}"#.into(),
            ]),
            "node 'r': sockets[1].bind '[\"auto\"]': a PEER proxy sends to the routing id its connect gave",
        ),
        (
            topo(&[
                node("a", "sink", r#"{"type": "CHANNEL", "bind": ["auto"]}"#),
                node("b", "source", r#"{"type": "PAIR", "connect": ["a"]}"#),
            ]),
            "ZMTP refuses",
        ),
        (
            topo(&[
                node(
                    "a",
                    "sink",
                    r#"{"type": "PULL", "bind": ["tcp://127.0.0.1:5999"]}"#,
                ),
                node(
                    "b",
                    "sink",
                    r#"{"type": "PULL", "bind": ["tcp://127.0.0.1:5999"]}"#,
                ),
                node("c", "source", r#"{"type": "PUSH", "connect": ["a", "b"]}"#),
            ]),
            "already bound by node 'a'",
        ),
        (
            topo(&[
                node("a", "sink", r#"{"type": "PULL", "bind": ["auto"]}"#),
                node("b", "source", r#"{"type": "PUSH", "connect": ["a"]}"#),
                node("lonely", "sink", r#"{"type": "PULL", "bind": ["auto"]}"#),
            ]),
            "node 'lonely': socket",
        ),
        (
            topo(&[
                node("a", "sink", r#"{"type": "PULL", "bind": ["auto"]}"#),
                node("b", "source", r#"{"type": "PUSH", "connect": ["nobody"]}"#),
            ]),
            "node 'b': socket.connect[0]",
        ),
        (
            topo(&[
                node(
                    "a",
                    "sink",
                    r#"{"type": "PULL", "bind": ["tcp://127.0.0.1"]}"#,
                ),
                node("b", "source", r#"{"type": "PUSH", "connect": ["a"]}"#),
            ]),
            "node 'a': socket.bind[0]",
        ),
    ];
    for (text, want) in cases {
        let e = one(&text).unwrap_err().to_string();
        assert!(e.contains("t.json"), "{e}");
        assert!(e.contains(want), "want '{want}' in: {e}");
    }
}

#[test]
fn wait_subscriptions_is_for_publishers_only() {
    let sink = node(
        "s",
        "sink",
        r#"{"type": "SUB", "bind": ["auto"], "subscribe": [""]}"#,
    );
    let publisher = r#"{"name": "p", "role": "source", "wait_subscriptions": false, "socket": {"type": "PUB", "connect": ["s"]}}"#;
    one(&topo(&[sink.clone(), publisher.to_string()])).unwrap();
    let pull = node("s", "sink", r#"{"type": "PULL", "bind": ["auto"]}"#);
    let push = r#"{"name": "p", "role": "source", "wait_subscriptions": false, "socket": {"type": "PUSH", "connect": ["s"]}}"#;
    let e = one(&topo(&[pull, push.to_string()]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("node 'p'") && e.contains("wait_subscriptions") && e.contains("PUB or XPUB"),
        "{e}"
    );
}

#[test]
fn only_sources_and_sinks_belong_to_a_stream() {
    let sink = r#"{"name": "s", "role": "sink", "stream": "s1", "socket": {"type": "PULL", "bind": ["auto"]}}"#;
    let src = r#"{"name": "p", "role": "source", "stream": "s1", "socket": {"type": "PUSH", "connect": ["s"]}}"#;
    one(&topo(&[sink.to_string(), src.to_string()])).unwrap();
    let echo = r#"{"name": "e", "role": "echo", "stream": "s1", "socket": {"type": "REP", "bind": ["auto"]}}"#;
    let ping = node("q", "ping", r#"{"type": "REQ", "connect": ["e"]}"#);
    let e = one(&topo(&[echo.to_string(), ping]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("node 'e'") && e.contains("stream") && e.contains("only sources and sinks"),
        "{e}"
    );
}

/// A PUSH source and a PULL sink; `extra` goes into the source's node and `opts` into its
/// socket (JSON fields, each with a leading comma).
fn pair_with(extra: &str, opts: &str) -> String {
    format!(
        r#"{{"nodes": [{{"name": "src", "role": "source", "socket": {{"type": "PUSH", "connect": ["snk"]{opts}}}{extra}}}, {{"name": "snk", "role": "sink", "socket": {{"type": "PULL", "bind": ["auto"]}}}}]}}"#
    )
}

#[test]
fn values_that_run_would_fail_on_are_refused_by_check_naming_node_and_field() {
    assert!(one(&pair_with("", "")).is_ok(), "the plain pair checks");
    for (extra, opts, field) in [
        ("", r#", "rcvhwm": -1"#, "socket.rcvhwm"),
        ("", r#", "sndhwm": -5"#, "socket.sndhwm"),
        ("", r#", "linger": -2"#, "socket.linger"),
        ("", r#", "sndbuf": -5"#, "socket.sndbuf"),
        ("", r#", "tcp_keepalive": 5"#, "socket.tcp_keepalive"),
        (
            "",
            &format!(r#", "routing_id": "{}""#, "x".repeat(300)),
            "socket.routing_id",
        ),
        (r#", "count": "1e9""#, "", "count"),
        (r#", "count": 0"#, "", "count"),
        (r#", "size": "2GiB""#, "", "size"),
        (r#", "size": 0"#, "", "size"),
        (r#", "rate": -1"#, "", "rate"),
        (r#", "message": {"frames": [10]}"#, "", "message.frames[0]"),
        (
            r#", "message": {"frames": [64, 0]}"#,
            "",
            "message.frames[1]",
        ),
    ] {
        let e = one(&pair_with(extra, opts)).expect_err(&format!("{extra}{opts}"));
        assert_eq!(e.exit_code(), 3, "{e}");
        let text = e.to_string();
        assert!(
            text.contains("node 'src'") && text.contains(field),
            "{extra}{opts}: {text}"
        );
    }
    // A name with a control or direction character is not a plain name.
    let e = one(&topo(&[
        node(
            "a\u{202e}b",
            "source",
            r#"{"type": "PUSH", "connect": ["snk"]}"#,
        ),
        node("snk", "sink", r#"{"type": "PULL", "bind": ["auto"]}"#),
    ]))
    .unwrap_err();
    assert!(e.to_string().contains("plain name"), "{e}");
}

#[test]
fn a_topology_that_measures_nothing_or_a_lone_node_nobody_reaches_is_refused() {
    let e = one(r#"{"nodes": [{"name": "relay", "role": "proxy", "sockets": [{"type": "PULL", "bind": ["auto"]}, {"type": "PUSH", "bind": ["auto"]}]}]}"#).unwrap_err();
    assert!(e.to_string().contains("measures nothing"), "{e}");
    let e = one(&topo(&[node(
        "src",
        "source",
        r#"{"type": "PUSH", "bind": ["auto"]}"#,
    )]))
    .unwrap_err();
    assert!(e.to_string().contains("nobody reaches this node"), "{e}");
    // A lone node on a literal address waits for a peer outside: allowed, with a warning.
    let g = one(&topo(&[node(
        "snk",
        "sink",
        r#"{"type": "PULL", "bind": ["tcp://127.0.0.1:*"]}"#,
    )]))
    .unwrap();
    assert!(g
        .warnings
        .iter()
        .any(|w| w.contains("linked to no other node")));
}

#[test]
fn a_filter_that_no_message_can_match_is_refused_naming_it() {
    let with = |filters: &str| {
        one(&topo(&[
            node("pub", "source", r#"{"type": "XPUB", "bind": ["auto"]}"#),
            node(
                "sub",
                "sink",
                &format!(r#"{{"type": "SUB", "connect": ["pub"], "subscribe": {filters}}}"#),
            ),
        ]))
    };
    let e = with(r#"["\u0000\u00ff"]"#).unwrap_err();
    assert_eq!(e.exit_code(), 3);
    let text = e.to_string();
    assert!(
        text.contains("node 'sub'") && text.contains("subscribe") && text.contains("\\0"),
        "{text}"
    );
    assert!(
        text.contains("no message of source 'pub' can match"),
        "{text}"
    );
    // Everything, a prefix of the header, or a filter that starts with it can match.
    for ok in [
        r#"[""]"#,
        r#"["Z"]"#,
        r#"["ZP"]"#,
        r#"["nope", "ZP\u0001"]"#,
    ] {
        assert!(with(ok).is_ok(), "{ok}");
    }
}

/// T06: 100,000 replicas passed the check and then failed to start ("Argument list too
/// long"); more than one process can start is refused by the check, naming the field.
#[test]
fn more_replicas_than_processes_that_can_start_are_refused() {
    let sinks = |n: u32| {
        topo(&[
            node("src", "source", r#"{"type": "PUSH", "bind": ["auto"]}"#),
            format!(
                r#"{{"name": "sink", "role": "sink", "replicas": {n}, "socket": {{"type": "PULL", "connect": ["src"]}}}}"#
            ),
        ])
    };
    assert!(one(&sinks(MAX_REPLICAS)).is_ok());
    let e = one(&sinks(100_000)).unwrap_err();
    assert_eq!(e.exit_code(), 3);
    let e = e.to_string();
    assert!(
        e.contains("sink") && e.contains("replicas") && e.contains("100000"),
        "{e}"
    );
    assert!(e.contains("at most 1024") && e.contains("swarm"), "{e}");
}

#[test]
fn replicas_of_a_dish_may_all_bind_one_udp_multicast_group_but_not_one_address() {
    let radio = node(
        "radio",
        "source",
        r#"{"type": "RADIO", "connect": ["udp://239.192.7.7:5607"]}"#,
    );
    let dishes = |bind: &str| {
        format!(
            r#"{{"name": "dish", "role": "sink", "replicas": 3, "socket": {{"type": "DISH", "bind": ["{bind}"]}}}}"#
        )
    };
    let g = one(&topo(&[radio.clone(), dishes("udp://239.192.7.7:5607")])).unwrap();
    let f = g.flows();
    assert_eq!(f.len(), 1);
    assert!(!f[0].shared, "each DISH takes every message of its group");
    let e = one(&topo(&[
        radio.replace("239.192.7.7", "127.0.0.1"),
        dishes("udp://127.0.0.1:5607"),
    ]))
    .unwrap_err()
    .to_string();
    assert!(e.contains("3 replicas cannot all bind one address"), "{e}");
}
