//! PTMP's message on the wire, so check_send can speak it and check_recv can read a real
//! PTMP sender: two frames, the first a C `int` of 4 bytes giving the message type (0, the
//! only one PTMP's `TPSender` writes and its `TPReceiver` takes: "message schema version
//! 0"; PTMP's README numbers the TPSet type 1, so a 1 is read too), the second a
//! protobuf-serialized `ptmp.data.TPSet` (proto2) whose `count` is the sender's sequence
//! number. Only the few fields zmqperf uses are encoded; a decoder skips any other field by
//! its wire type, as protobuf does. No protoc: varints written and read here.
//!
//! The TPSet fields (src/ptmp.proto of PTMP): 1 count (uint32), 2 detid (uint32), 3 created
//! (int64, wall clock in microseconds since the Unix epoch), 4 tstart (uint64, data-clock
//! ticks), 5 tspan, 6 chanbeg, 7 chanend, 8 totaladc (uint32), 9 tps (repeated TrigPrim).

use serde::Serialize;

/// The type PTMP's sender writes in the first frame (a C int, little-endian on the hosts
/// PTMP runs on).
pub const TPSET_TYPE: i32 = 0;
/// The TPSet type as PTMP's README numbers it ("1) a set of TPs"); read, never written.
pub const TPSET_TYPE_README: i32 = 1;
/// Ticks of PTMP's data clock (protoDUNE's 50 MHz) per microsecond: check_send's `tstart`
/// is its `created` in these ticks, as PTMP's own test sender fakes it.
pub const TICKS_PER_US: u64 = 50;
/// The longest TPSet check_send writes: four varints of at most 10 bytes and their keys.
pub const MAX_ENCODED: usize = 44;

/// Which message format a stream speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Wire {
    /// zmqperf's measurement header (docs/wire-format.md) in one frame.
    #[default]
    Zmqperf,
    /// PTMP's two frames: the type, then a TPSet whose `count` is the sequence number.
    Ptmp,
}

impl Wire {
    /// The name on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Wire::Zmqperf => "zmqperf",
            Wire::Ptmp => "ptmp",
        }
    }

    /// Parses `--wire`.
    pub fn parse(value: &str) -> Option<Wire> {
        match value.trim().to_ascii_lowercase().as_str() {
            "zmqperf" => Some(Wire::Zmqperf),
            "ptmp" => Some(Wire::Ptmp),
            _ => None,
        }
    }
}

/// The TPSet fields zmqperf writes and reads (the trigger primitives are only counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TpSet {
    /// Field 1: how many TPSets the sender sent before this one (the sequence number).
    pub count: u32,
    /// Field 2: the detector portion (check_send writes its stream id).
    pub detid: Option<u32>,
    /// Field 3: when it was created, wall clock in microseconds since the Unix epoch.
    pub created_us: Option<i64>,
    /// Field 4: the earliest TP's start, in data-clock ticks.
    pub tstart: Option<u64>,
    /// Field 9: how many trigger primitives it holds.
    pub tps: u32,
}

fn put_varint(out: &mut [u8], at: &mut usize, mut v: u64) {
    while v >= 0x80 {
        out[*at] = (v as u8) | 0x80;
        *at += 1;
        v >>= 7;
    }
    out[*at] = v as u8;
    *at += 1;
}

/// A field's key: its number and wire type (0 varint, 1 fixed 64, 2 length-delimited, 5
/// fixed 32).
fn put_key(out: &mut [u8], at: &mut usize, field: u32, wire_type: u8) {
    put_varint(out, at, (u64::from(field) << 3) | u64::from(wire_type));
}

impl TpSet {
    /// Encodes the set into `out`; returns the length. Fields in number order, as
    /// protobuf's serializers write them; an int64 below 0 takes 10 bytes (two's
    /// complement), as protobuf's `int64` does.
    pub fn encode(&self, out: &mut [u8; MAX_ENCODED]) -> usize {
        let mut at = 0;
        put_key(out, &mut at, 1, 0);
        put_varint(out, &mut at, u64::from(self.count));
        if let Some(d) = self.detid {
            put_key(out, &mut at, 2, 0);
            put_varint(out, &mut at, u64::from(d));
        }
        if let Some(c) = self.created_us {
            put_key(out, &mut at, 3, 0);
            put_varint(out, &mut at, c as u64);
        }
        if let Some(t) = self.tstart {
            put_key(out, &mut at, 4, 0);
            put_varint(out, &mut at, t);
        }
        at
    }

    /// Decodes a serialized TPSet: its fields in any order, unknown ones skipped by wire
    /// type; `count` (required) must be there. Why not, in words, otherwise.
    pub fn decode(buf: &[u8]) -> Result<TpSet, String> {
        let mut r = Reader { buf, at: 0 };
        let mut set = TpSet::default();
        let mut has_count = false;
        while r.at < buf.len() {
            let key = r.varint("a field key")?;
            let (field, wire_type) = (key >> 3, (key & 7) as u8);
            if field == 0 {
                return Err(format!("field number 0 at byte {}", r.at));
            }
            let expect = |want: u8, name: &str| -> Result<(), String> {
                if wire_type == want {
                    Ok(())
                } else {
                    Err(format!(
                        "field {field} ({name}) has wire type {wire_type}, not {want}"
                    ))
                }
            };
            match field {
                1 => {
                    expect(0, "count")?;
                    set.count = r.uint32("count")?;
                    has_count = true;
                }
                2 => {
                    expect(0, "detid")?;
                    set.detid = Some(r.uint32("detid")?);
                }
                3 => {
                    expect(0, "created")?;
                    set.created_us = Some(r.varint("created")? as i64);
                }
                4 => {
                    expect(0, "tstart")?;
                    set.tstart = Some(r.varint("tstart")?);
                }
                9 => {
                    expect(2, "tps")?;
                    r.skip(2)?;
                    set.tps += 1;
                }
                _ => r.skip(wire_type)?,
            }
        }
        if !has_count {
            return Err("no count (field 1), which a TPSet requires".into());
        }
        Ok(set)
    }
}

/// A cursor over a serialized message.
struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn varint(&mut self, what: &str) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let Some(&b) = self.buf.get(self.at) else {
                return Err(format!("{what}: the bytes end inside a varint"));
            };
            self.at += 1;
            if shift == 63 && b > 1 {
                return Err(format!("{what}: a varint longer than 64 bits"));
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(format!("{what}: a varint longer than 10 bytes"))
    }

    /// A uint32 field: protobuf writes it as a varint and a reader keeps its low 32 bits.
    fn uint32(&mut self, what: &str) -> Result<u32, String> {
        Ok(self.varint(what)? as u32)
    }

    fn skip(&mut self, wire_type: u8) -> Result<(), String> {
        let n = match wire_type {
            0 => return self.varint("a field").map(|_| ()),
            1 => 8,
            2 => self.varint("a length")? as usize,
            5 => 4,
            t => {
                return Err(format!(
                    "wire type {t} (groups or no type) at byte {}",
                    self.at
                ))
            }
        };
        if self.buf.len() - self.at < n {
            return Err(format!(
                "a field of {n} bytes at byte {} runs past the end ({} B)",
                self.at,
                self.buf.len()
            ));
        }
        self.at += n;
        Ok(())
    }
}

/// The first frame of a PTMP message: the type, a C int in little-endian order.
pub fn type_frame() -> [u8; 4] {
    TPSET_TYPE.to_le_bytes()
}

/// Reads a PTMP message from its frames' bytes: the type frame and the TPSet frame.
/// Why it is not one, in words naming what was seen, otherwise.
pub fn decode_message(frames: usize, first: &[u8], second: &[u8]) -> Result<TpSet, String> {
    if frames != 2 {
        return Err(format!(
            "{frames} frame{}, where PTMP's has 2 (the type, then the TPSet)",
            if frames == 1 { "" } else { "s" }
        ));
    }
    if first.len() != 4 {
        return Err(format!(
            "a first frame of {} B, where PTMP's is its 4-byte type",
            first.len()
        ));
    }
    let t = i32::from_le_bytes(first.try_into().expect("4 bytes"));
    if t != TPSET_TYPE && t != TPSET_TYPE_README {
        return Err(format!(
            "message type {t}, where a TPSet is {TPSET_TYPE} (PTMP's code; its README says {TPSET_TYPE_README})"
        ));
    }
    TpSet::decode(second).map_err(|why| {
        format!(
            "a second frame ({} B) that is not a TPSet: {why}",
            second.len()
        )
    })
}

/// Up to the first 8 bytes of a frame in hex, for an error that says what was seen.
pub fn hex_start(b: &[u8]) -> String {
    let shown: Vec<String> = b.iter().take(8).map(|x| format!("{x:02x}")).collect();
    format!(
        "{}{}",
        shown.join(" "),
        if b.len() > 8 { " ..." } else { "" }
    )
}

/// The TPSet check_send writes as message `seq` of stream `detid`: created now, tstart
/// that in data-clock ticks (as PTMP's test sender fakes it). PTMP's count is a uint32:
/// check_send refuses a longer stream.
pub fn tpset_of(seq: u64, detid: u32) -> TpSet {
    let created = now_us();
    TpSet {
        count: seq as u32,
        detid: Some(detid),
        created_us: Some(created),
        tstart: Some((created.max(0) as u64).saturating_mul(TICKS_PER_US)),
        tps: 0,
    }
}

/// Wall clock now, microseconds since the Unix epoch (TPSet's `created`).
pub fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(s: &TpSet) -> Vec<u8> {
        let mut b = [0u8; MAX_ENCODED];
        let n = s.encode(&mut b);
        b[..n].to_vec()
    }

    /// Vectors worked out by hand from protobuf's encoding: key = field << 3 | wire type,
    /// then the varint, 7 bits a byte, low group first, the high bit set on all but the
    /// last.
    #[test]
    fn encodes_the_vectors_worked_by_hand() {
        // count 0: key 0x08, value 0x00 (proto2 writes a required field even when 0).
        assert_eq!(enc(&TpSet::default()), [0x08, 0x00]);
        // count 150: 150 = 0b1_0010110 -> 0x96 0x01.
        let s = TpSet {
            count: 150,
            ..Default::default()
        };
        assert_eq!(enc(&s), [0x08, 0x96, 0x01]);
        // count 1, detid 4, created 1_000_000 us, tstart 50_000_000 ticks.
        // 1_000_000 = 0x0F4240: groups 0x40|0x80=0xC0, 0x84 (0x04|0x80), 0x3D.
        // 50_000_000 = 0x2FAF080: 0x80, 0xE1, 0xEB, 0x17.
        let s = TpSet {
            count: 1,
            detid: Some(4),
            created_us: Some(1_000_000),
            tstart: Some(50_000_000),
            tps: 0,
        };
        assert_eq!(
            enc(&s),
            [0x08, 0x01, 0x10, 0x04, 0x18, 0xC0, 0x84, 0x3D, 0x20, 0x80, 0xE1, 0xEB, 0x17]
        );
        // created -1: ten bytes, 0xFF x 9 then 0x01 (int64's two's complement).
        let s = TpSet {
            count: 0,
            created_us: Some(-1),
            ..Default::default()
        };
        let mut want = vec![0x08, 0x00, 0x18];
        want.extend([0xFF; 9]);
        want.push(0x01);
        assert_eq!(enc(&s), want);
        // The largest set fits the buffer.
        let big = TpSet {
            count: u32::MAX,
            detid: Some(u32::MAX),
            created_us: Some(i64::MIN),
            tstart: Some(u64::MAX),
            tps: 0,
        };
        assert!(enc(&big).len() <= MAX_ENCODED);
        assert_eq!(TpSet::decode(&enc(&big)), Ok(big));
    }

    #[test]
    fn decodes_in_any_order_and_skips_what_it_does_not_use() {
        // tstart first, then count 300 (0xAC 0x02), a tspan (field 5, varint 7), a TP
        // (field 9, length 4: channel 1, tstart 2), a fixed32 field 20 (key 0xA5 0x01), a
        // fixed64 field 21 (key 0xA9 0x01).
        let mut b = vec![0x20, 0x05, 0x08, 0xAC, 0x02, 0x28, 0x07];
        b.extend([0x4A, 0x04, 0x08, 0x01, 0x10, 0x02]);
        b.extend([0xA5, 0x01, 1, 2, 3, 4]);
        b.extend([0xA9, 0x01, 1, 2, 3, 4, 5, 6, 7, 8]);
        let s = TpSet::decode(&b).unwrap();
        assert_eq!(s.count, 300);
        assert_eq!(s.tstart, Some(5));
        assert_eq!(s.tps, 1);
        assert_eq!(s.detid, None);
        // Only count, as the seed's era of PTMP's check_send wrote it.
        assert_eq!(TpSet::decode(&[0x08, 0x07]).unwrap().count, 7);
    }

    #[test]
    fn refuses_what_is_not_a_tpset_with_the_reason() {
        let e = TpSet::decode(&[]).unwrap_err();
        assert!(e.contains("no count"), "{e}");
        let e = TpSet::decode(&[0x08]).unwrap_err();
        assert!(e.contains("end inside a varint"), "{e}");
        let e = TpSet::decode(&[0x0A, 0x00]).unwrap_err();
        assert!(e.contains("field 1 (count) has wire type 2"), "{e}");
        let e = TpSet::decode(&[0x08, 0x01, 0x4A, 0x05, 0x08]).unwrap_err();
        assert!(e.contains("runs past the end"), "{e}");
        let e = TpSet::decode(&[0x0B]).unwrap_err();
        assert!(e.contains("wire type 3"), "{e}");
        let e = TpSet::decode(&[
            0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02,
        ])
        .unwrap_err();
        assert!(e.contains("longer than 64 bits"), "{e}");
        // zmqperf's own header is not a TPSet ('Z' = 0x5A: field 11, wire type 2, ...).
        let zp = crate::header::Header {
            flags: 0,
            stream_id: 1,
            sequence: 2,
            send_ns: 3,
        }
        .to_bytes();
        assert!(TpSet::decode(&zp).is_err());
    }

    #[test]
    fn a_message_is_two_frames_type_then_tpset() {
        assert_eq!(type_frame(), [0, 0, 0, 0]);
        let m = decode_message(2, &[0, 0, 0, 0], &[0x08, 0x03]).unwrap();
        assert_eq!(m.count, 3);
        assert!(decode_message(2, &[1, 0, 0, 0], &[0x08, 0x03]).is_ok());
        let e = decode_message(1, &[0, 0, 0, 0], &[]).unwrap_err();
        assert!(e.starts_with("1 frame,"), "{e}");
        let e = decode_message(3, &[0, 0, 0, 0], &[0x08, 0x03]).unwrap_err();
        assert!(e.starts_with("3 frames"), "{e}");
        let e = decode_message(2, &[0, 0, 0], &[0x08, 0x03]).unwrap_err();
        assert!(e.contains("first frame of 3 B"), "{e}");
        let e = decode_message(2, &[2, 0, 0, 0], &[0x08, 0x03]).unwrap_err();
        assert!(e.contains("message type 2"), "{e}");
        let e = decode_message(2, &[0, 0, 0, 0], &[0x10, 0x03]).unwrap_err();
        assert!(e.contains("not a TPSet: no count"), "{e}");
        assert_eq!(hex_start(&[0x5a, 0x50, 1]), "5a 50 01");
        assert_eq!(hex_start(&[0; 9]), "00 00 00 00 00 00 00 00 ...");
        assert_eq!(Wire::parse("PTMP"), Some(Wire::Ptmp));
        assert_eq!(Wire::parse("json"), None);
    }
}
