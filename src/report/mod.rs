//! Output of the compatible commands: libzmq's exact lines, the optional detail that
//! follows them, and the JSON object.

pub mod compat;
