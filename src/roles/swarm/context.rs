//! The swarm's sockets: a libzmq context that allows more than 1,023 sockets, and the
//! subscriber sockets (SUB or DISH) opened in it.

use crate::error::{zmq_err, Result};
use crate::zmq;

/// A libzmq context that allows more sockets than the 1023 of a default one.
pub(super) struct BigContext {
    ctx: zmq::Context,
}

impl BigContext {
    pub(super) fn new(max_sockets: i32) -> Result<BigContext> {
        let ctx = zmq::Context::new();
        // MAX_SOCKETS is set before the context's first socket, as libzmq requires.
        ctx.set(zmq::ZMQ_MAX_SOCKETS, max_sockets)
            .map_err(zmq_err("setting ZMQ_MAX_SOCKETS"))?;
        Ok(BigContext { ctx })
    }

    pub(super) fn socket(
        &self,
        kind: zmq::SocketType,
    ) -> std::result::Result<zmq::Socket, zmq::Error> {
        self.ctx.socket(kind)
    }
}
