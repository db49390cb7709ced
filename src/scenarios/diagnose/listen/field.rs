//! Where a number lives in a message the listener did not write: `--seq` and `--stream-id`
//! name a frame, a byte offset and how the number is written (a big- or little-endian
//! unsigned integer of 1, 2, 4 or 8 bytes, or decimal ASCII digits).

use crate::error::{Error, Result};

/// How the number is written in its field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// An unsigned integer of `width` bytes (1, 2, 4 or 8).
    Binary {
        /// Bytes of the integer.
        width: usize,
        /// Big-endian (network order) when true, little-endian otherwise.
        big: bool,
    },
    /// Decimal ASCII digits from the offset up to the first byte that is not a digit.
    Text,
}

/// A field of a multi-frame message holding a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    /// Frame index, from 0.
    pub frame: usize,
    /// Byte offset inside the frame.
    pub offset: usize,
    /// How the number is written.
    pub encoding: Encoding,
}

/// What reading a field out of one message gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// The number.
    Value(u64),
    /// The message has fewer frames than the field's frame index needs.
    NoFrame,
    /// The frame ends before the field does.
    TooShort,
    /// A text field with no digit at its offset.
    NotANumber,
    /// A text field with more digits than a 64-bit number holds.
    TooLarge,
}

/// What every spec error says to write.
const SHAPE: &str = "write frame=F,offset=O,width=1|2|4|8,endian=big|little \
                     (e.g. frame=1,offset=4,width=4,endian=big) or frame=F,offset=O,text \
                     for decimal digits";

impl FieldSpec {
    /// Parses `frame=1,offset=4,width=4,endian=big` or `frame=1,text`; `flag` names the
    /// option in errors. Frame and offset default to 0, the endianness to big.
    pub fn parse(flag: &str, s: &str) -> Result<FieldSpec> {
        let bad = |why: String| Error::invalid(flag, s, format!("{why}; {SHAPE}"));
        let mut frame = None;
        let mut offset = None;
        let mut width = None;
        let mut endian = None;
        let mut text = false;
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = match part.split_once('=') {
                Some((k, v)) => (k.trim().to_ascii_lowercase(), Some(v.trim())),
                None => (part.to_ascii_lowercase(), None),
            };
            let number = |what: &str| -> Result<usize> {
                let v = value.ok_or_else(|| bad(format!("{what} needs a value, e.g. {what}=1")))?;
                v.parse::<usize>().map_err(|_| {
                    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
                        bad(format!("{what}={v} is too large (at most {})", usize::MAX))
                    } else {
                        bad(format!("{what}={v} is not a whole number of 0 or more"))
                    }
                })
            };
            let once = |seen: bool, what: &str| {
                if seen {
                    Err(bad(format!("{what} is given twice")))
                } else {
                    Ok(())
                }
            };
            match key.as_str() {
                "frame" => {
                    once(frame.is_some(), "frame")?;
                    frame = Some(number("frame")?);
                }
                "offset" => {
                    once(offset.is_some(), "offset")?;
                    offset = Some(number("offset")?);
                }
                "width" => {
                    once(width.is_some(), "width")?;
                    let w = number("width")?;
                    if ![1, 2, 4, 8].contains(&w) {
                        return Err(bad(format!("width={w} is not 1, 2, 4 or 8 bytes")));
                    }
                    width = Some(w);
                }
                "endian" => {
                    once(endian.is_some(), "endian")?;
                    endian = Some(match value.map(str::to_ascii_lowercase).as_deref() {
                        Some("big" | "be" | "network") => true,
                        Some("little" | "le") => false,
                        Some(other) => {
                            return Err(bad(format!("endian={other} is not big or little")))
                        }
                        None => return Err(bad("endian needs a value, big or little".into())),
                    });
                }
                "text" | "ascii" | "decimal" => {
                    if value.is_some() {
                        return Err(bad(format!("{key} takes no value")));
                    }
                    text = true;
                }
                other => return Err(bad(format!("'{other}' is not a part of a field"))),
            }
        }
        if text && (width.is_some() || endian.is_some()) {
            return Err(bad(
                "text is read up to the first non-digit: give no width or endian with it".into(),
            ));
        }
        let encoding = match (text, width) {
            (true, _) => Encoding::Text,
            (false, Some(width)) => Encoding::Binary {
                width,
                big: endian.unwrap_or(true),
            },
            (false, None) => {
                return Err(bad(
                    "no width and no text: how is the number written?".into()
                ))
            }
        };
        Ok(FieldSpec {
            frame: frame.unwrap_or(0),
            offset: offset.unwrap_or(0),
            encoding,
        })
    }

    /// The number in `frames`, or why there is none.
    pub fn read(&self, frames: &[Vec<u8>]) -> Read {
        let Some(f) = frames.get(self.frame) else {
            return Read::NoFrame;
        };
        let Some(rest) = f.get(self.offset..) else {
            return Read::TooShort;
        };
        match self.encoding {
            Encoding::Binary { width, big } => {
                let Some(bytes) = rest.get(..width) else {
                    return Read::TooShort;
                };
                let mut buf = [0u8; 8];
                if big {
                    buf[8 - width..].copy_from_slice(bytes);
                    Read::Value(u64::from_be_bytes(buf))
                } else {
                    buf[..width].copy_from_slice(bytes);
                    Read::Value(u64::from_le_bytes(buf))
                }
            }
            Encoding::Text => {
                if rest.is_empty() {
                    return Read::TooShort;
                }
                let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
                if digits == 0 {
                    return Read::NotANumber;
                }
                std::str::from_utf8(&rest[..digits])
                    .ok()
                    .and_then(|d| d.parse().ok())
                    .map_or(Read::TooLarge, Read::Value)
            }
        }
    }

    /// The spec written back in the form `parse` reads, for reports.
    pub fn describe(&self) -> String {
        match self.encoding {
            Encoding::Binary { width, big } => format!(
                "frame={},offset={},width={width},endian={}",
                self.frame,
                self.offset,
                if big { "big" } else { "little" }
            ),
            Encoding::Text => format!("frame={},offset={},text", self.frame, self.offset),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> FieldSpec {
        FieldSpec::parse("--seq", s).unwrap()
    }

    fn err(s: &str) -> String {
        FieldSpec::parse("--seq", s).unwrap_err().to_string()
    }

    #[test]
    fn binary_fields_read_in_either_byte_order() {
        let s = spec("frame=1,offset=4,width=4,endian=big");
        assert_eq!(s.describe(), "frame=1,offset=4,width=4,endian=big");
        let frames = vec![b"topic".to_vec(), vec![9, 9, 9, 9, 0, 0, 1, 2, 7]];
        assert_eq!(s.read(&frames), Read::Value(258));
        let le = spec("frame=1, offset=4, width=2, endian=little");
        assert_eq!(le.read(&frames), Read::Value(0));
        let one = spec("width=1,frame=1,offset=8");
        assert_eq!(one.read(&frames), Read::Value(7));
        let eight = spec("frame=0,width=8,endian=le");
        assert_eq!(
            eight.read(&[300u64.to_le_bytes().to_vec()]),
            Read::Value(300)
        );
    }

    #[test]
    fn short_messages_and_missing_frames_are_told_apart() {
        let s = spec("frame=1,offset=4,width=4");
        assert_eq!(s.read(&[vec![0; 10]]), Read::NoFrame);
        assert_eq!(s.read(&[vec![], vec![0; 7]]), Read::TooShort);
        assert_eq!(s.read(&[vec![], vec![0; 3]]), Read::TooShort);
        assert_eq!(s.read(&[vec![], vec![0; 8]]), Read::Value(0));
    }

    #[test]
    fn text_fields_read_digits_up_to_the_first_other_byte() {
        let s = spec("frame=1,text");
        assert_eq!(s.describe(), "frame=1,offset=0,text");
        assert_eq!(s.read(&[vec![], b"1234 INFO".to_vec()]), Read::Value(1234));
        assert_eq!(s.read(&[vec![], b"x12".to_vec()]), Read::NotANumber);
        assert_eq!(s.read(&[vec![], vec![]]), Read::TooShort);
        let at = spec("offset=4,text");
        assert_eq!(at.read(&[b"seq=42".to_vec()]), Read::Value(42));
        assert_eq!(
            s.read(&[vec![], b"99999999999999999999999".to_vec()]),
            Read::TooLarge
        );
    }

    #[test]
    fn bad_specs_say_what_to_write() {
        for (s, why) in [
            ("frame=1,offset=4", "no width and no text"),
            ("frame=1,width=3", "width=3 is not 1, 2, 4 or 8"),
            ("frame=x,width=4", "frame=x is not a whole number"),
            (
                "offset=99999999999999999999999,width=4",
                "offset=99999999999999999999999 is too large",
            ),
            (
                "frame=1,width=4,endian=middle",
                "endian=middle is not big or little",
            ),
            ("frame=1,size=4", "'size' is not a part of a field"),
            ("frame=1,frame=2,width=4", "frame is given twice"),
            ("frame=1,text,width=4", "no width or endian with it"),
            ("", "no width and no text"),
        ] {
            let e = err(s);
            assert!(e.contains(why), "{s:?}: {e}");
            assert!(e.contains("frame=F,offset=O,width=1|2|4|8"), "{e}");
            assert!(e.contains("--seq"), "{e}");
        }
    }
}
