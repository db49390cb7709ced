//! The scenarios: what zmqperf measures beyond a topology file, each a front-end over the
//! engine that builds its topologies or role nodes, runs them, and analyses the result. They
//! own no sockets (roles/ and net/ do) and write no text (report/ does).
//!
//! - [`compat`]: libzmq's perf tools (local_lat ... inproc_thr), byte for byte;
//! - [`ptmp`]: PTMP's check_send, check_recv and check_sendrecv;
//! - [`fanout`]: one publisher to thousands of subscribers, the seed's harness;
//! - [`diagnose`]: the experiments that reproduce each way ZeroMQ loses or delays messages;
//! - [`matrix`]: every pair of bindings, measured against the C core;
//! - [`limit`]: the highest rate a case holds under a service level (`run --find`).

pub mod compat;
pub mod diagnose;
pub mod fanout;
pub mod limit;
pub mod matrix;
pub mod ptmp;
pub mod tune;
