//! The measurement header against the language-neutral vectors in spec/header-vectors.json,
//! which peers in other languages check against too.

use serde_json::Value;
use zmqperf::header::{Header, HeaderError, HEADER_LEN};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn vectors() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/spec/header-vectors.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(doc["length"], HEADER_LEN as u64);
    doc["vectors"].as_array().unwrap().clone()
}

#[test]
fn every_vector_decodes_as_documented() {
    let vs = vectors();
    assert!(vs.len() >= 10);
    for v in vs {
        let name = v["name"].as_str().unwrap();
        let bytes = unhex(v["hex"].as_str().unwrap());
        let got = Header::decode(&bytes);
        match v["expect"].as_str().unwrap() {
            "header" => {
                let f = &v["fields"];
                let want = Header {
                    flags: f["flags"].as_u64().unwrap() as u8,
                    stream_id: f["stream_id"].as_u64().unwrap() as u32,
                    sequence: f["sequence"].as_u64().unwrap(),
                    send_ns: f["send_ns"].as_u64().unwrap(),
                };
                assert_eq!(got, Ok(Some(want)), "{name}");
                assert_eq!(want.to_bytes()[..], bytes[..HEADER_LEN], "{name}: encoding");
            }
            "plain" => assert_eq!(got, Ok(None), "{name}"),
            "error:unsupported-version" => {
                assert!(
                    matches!(got, Err(HeaderError::UnsupportedVersion(_))),
                    "{name}"
                )
            }
            "error:reserved-flags" => {
                assert!(matches!(got, Err(HeaderError::ReservedFlags(_))), "{name}")
            }
            other => panic!("{name}: unknown expectation {other}"),
        }
    }
}
