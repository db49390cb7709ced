//! The 24-byte measurement header (docs/wire-format.md), little-endian.

pub const HEADER_LEN: usize = 24;
pub const TIMESTAMP: u8 = 0x01;
pub const END: u8 = 0x02;
pub const WARMUP: u8 = 0x04;
const RESERVED: u8 = 0xF8;

/// The fields of a version-1 header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub flags: u8,
    pub stream_id: u32,
    pub sequence: u64,
    pub send_ns: u64,
}

impl Header {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[..2].copy_from_slice(b"ZP");
        b[2] = 1;
        b[3] = self.flags;
        b[4..8].copy_from_slice(&self.stream_id.to_le_bytes());
        b[8..16].copy_from_slice(&self.sequence.to_le_bytes());
        b[16..24].copy_from_slice(&self.send_ns.to_le_bytes());
        b
    }

    /// `Ok(None)` for a message without the header; an error for a version other than 1 or
    /// reserved flags set.
    pub fn decode(bytes: &[u8]) -> Result<Option<Header>, String> {
        if bytes.len() < HEADER_LEN || &bytes[..2] != b"ZP" {
            return Ok(None);
        }
        if bytes[2] != 1 {
            return Err(format!(
                "header version {} (this peer reads version 1)",
                bytes[2]
            ));
        }
        if bytes[3] & RESERVED != 0 {
            return Err(format!("reserved header flags set (0x{:02x})", bytes[3]));
        }
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        Ok(Some(Header {
            flags: bytes[3],
            stream_id: u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes")),
            sequence: u64_at(8),
            send_ns: u64_at(16),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn unhex(hex: &str) -> Vec<u8> {
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
            .collect()
    }

    /// Every vector of spec/header-vectors.json: decode gives the fields, encode the bytes,
    /// `plain` is no header, the two errors are refused.
    #[test]
    fn every_header_vector() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../spec/header-vectors.json"
        );
        let text = std::fs::read_to_string(path).expect("spec/header-vectors.json");
        let spec: Value = serde_json::from_str(&text).expect("JSON");
        let vectors = spec["vectors"].as_array().expect("vectors");
        assert_eq!(vectors.len(), 11);
        for v in vectors {
            let name = v["name"].as_str().expect("name");
            let bytes = unhex(v["hex"].as_str().expect("hex"));
            let got = Header::decode(&bytes);
            match v["expect"].as_str().expect("expect") {
                "plain" => assert_eq!(got, Ok(None), "{name}"),
                "error:unsupported-version" => {
                    assert!(got.expect_err(name).contains("version"), "{name}")
                }
                "error:reserved-flags" => {
                    assert!(got.expect_err(name).contains("reserved"), "{name}")
                }
                _ => {
                    let f = &v["fields"];
                    let n = |k: &str| f[k].as_u64().expect(k);
                    assert_eq!(n("version"), 1, "{name}");
                    let want = Header {
                        flags: n("flags") as u8,
                        stream_id: n("stream_id") as u32,
                        sequence: n("sequence"),
                        send_ns: n("send_ns"),
                    };
                    assert_eq!(got, Ok(Some(want)), "{name}");
                    assert_eq!(want.encode().as_slice(), &bytes[..HEADER_LEN], "{name}");
                }
            }
        }
    }
}
