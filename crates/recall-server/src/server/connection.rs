//! The server's connections: accepting them until idle, stopped or displaced, within the
//! bounds of [`super::limits`], checking the peer, and answering each one's single request.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use super::limits::{AcceptBackoff, FREE_REQUEST_BYTES, MAX_ACCEPT_BACKOFF, READ_CHUNK};
use super::{SOCKET_CHECK_EVERY, Server, lock, log, millis};
use crate::frame::FrameDecoder;
use crate::local::{self, Connection, Listener};
use crate::protocol::{self, MAX_LINE_BYTES, Request, Response, ResponseLine, VERSION, WireError};

impl Server {
    pub(super) async fn accept_loop(self: &Arc<Self>, listener: &mut Listener) {
        let mut check = tokio::time::interval(SOCKET_CHECK_EVERY);
        let mut backoff = AcceptBackoff::default();
        // While accepting fails, when to try again.
        let mut resume: Option<Instant> = None;
        loop {
            let idle_until = *lock(&self.last_request) + self.idle_exit();
            tokio::select! {
                accepted = listener.accept(), if resume.is_none() => match accepted {
                    Ok(stream) => {
                        if let Some(failures) = backoff.succeeded() {
                            log(&format!("accepting again after {failures} failed attempts"));
                        }
                        *lock(&self.last_request) = Instant::now();
                        self.admit(stream);
                    }
                    Err(e) => {
                        let (wait, first) = backoff.failed();
                        if first {
                            log(&format!(
                                "accept failed: {e}; retrying at most every {} until it succeeds",
                                humantime::format_duration(MAX_ACCEPT_BACKOFF)
                            ));
                        }
                        resume = Some(Instant::now() + wait);
                    }
                },
                () = tokio::time::sleep_until(resume.unwrap_or(idle_until)), if resume.is_some() => {
                    resume = None;
                }
                () = tokio::time::sleep_until(idle_until) => {
                    if *lock(&self.last_request) + self.idle_exit() <= Instant::now() {
                        log("idle: exiting");
                        return;
                    }
                }
                _ = check.tick() => {
                    if !listener.still_ours() {
                        log("the socket was removed or replaced: exiting");
                        return;
                    }
                    self.unwatch_idle_roots();
                }
                () = self.stop.notified() => return,
            }
        }
    }

    /// Serves `stream` when fewer than the bound are open, else closes it at once.
    fn admit(self: &Arc<Self>, stream: Connection) {
        match Arc::clone(&self.limits.connections).try_acquire_owned() {
            Ok(slot) => {
                if let Some(closed) = lock(&self.refused).end() {
                    log(&format!(
                        "closed {closed} connections over the bound of {}",
                        self.limits.max_connections
                    ));
                }
                let server = Arc::clone(self);
                tokio::spawn(async move { server.serve_connection(stream, slot).await });
            }
            Err(_) => {
                if lock(&self.refused).hit() {
                    log(&format!(
                        "{} connections open: closing new ones until one ends",
                        self.limits.max_connections
                    ));
                }
            }
        }
    }

    /// Logs that a client was dropped, once per burst of such clients.
    fn dropped(&self, reason: &str) {
        if lock(&self.drops).hit() {
            log(&format!(
                "dropped a client: {reason} (clients dropped after it are counted until a request is answered)"
            ));
        }
    }

    async fn serve_connection(self: Arc<Self>, stream: Connection, _slot: OwnedSemaphorePermit) {
        if let Err(refusal) = local::check_peer(&stream) {
            log(&refusal);
            return;
        }
        let (mut read, mut write) = tokio::io::split(stream);
        // The bytes the request holds past its free part, given back when the connection ends.
        let mut held = None;
        let deadline = self.limits.deadline;
        let read = tokio::time::timeout(deadline, self.read_request(&mut read, &mut held)).await;
        let response = match read {
            Err(_) => {
                self.dropped(&format!(
                    "no complete request within {}",
                    humantime::format_duration(deadline)
                ));
                return;
            }
            Ok(Err(WireError::Closed)) => return,
            Ok(Err(WireError::Io(e))) => {
                log(&format!("cannot read a request: {e}"));
                return;
            }
            Ok(Err(e)) => {
                if matches!(e, WireError::TooLong) {
                    self.dropped(&e.to_string());
                }
                Response::Error {
                    message: e.to_string(),
                }
            }
            Ok(Ok(line)) => {
                if let Some(count) = lock(&self.drops).end().filter(|&n| n > 1) {
                    log(&format!("dropped {count} clients before this request"));
                }
                match protocol::parse_request(&line) {
                    Ok(request) => self.handle(request).await,
                    Err(e) => Response::Error {
                        message: e.to_string(),
                    },
                }
            }
        };
        drop(held);
        let stopping = matches!(response, Response::Stopping { .. });
        let mut out = match serde_json::to_vec(&ResponseLine {
            v: VERSION,
            response,
        }) {
            Ok(out) => out,
            Err(e) => {
                log(&format!("cannot encode an answer: {e}"));
                return;
            }
        };
        out.push(b'\n');
        // A client that gave up has closed its end; nothing to do about it.
        let _ = write.write_all(&out).await;
        let _ = write.shutdown().await;
        if stopping {
            self.stop.notify_one();
        }
    }

    /// Reads one request line. Past its free part, a request draws on the shared budget of
    /// request bytes (into `held`) before each read, and waits while the budget is spent.
    async fn read_request(
        &self,
        read: &mut (impl AsyncRead + Unpin),
        held: &mut Option<OwnedSemaphorePermit>,
    ) -> Result<String, WireError> {
        let mut decoder = FrameDecoder::new(MAX_LINE_BYTES);
        let mut chunk = vec![0; READ_CHUNK];
        while !decoder.is_complete() {
            if decoder.held() + READ_CHUNK > FREE_REQUEST_BYTES {
                let more = Arc::clone(&self.limits.request_bytes)
                    .acquire_many_owned(u32::try_from(READ_CHUNK).unwrap_or(u32::MAX))
                    .await
                    .map_err(|_| WireError::Closed)?;
                match held {
                    Some(held) => held.merge(more),
                    None => *held = Some(more),
                }
            }
            let read = read.read(&mut chunk).await?;
            if read == 0 {
                break;
            }
            decoder.push(&chunk[..read])?;
        }
        Ok(decoder.finish()?)
    }

    async fn handle(&self, request: Request) -> Response {
        match request {
            Request::Event(event) => {
                let started = Instant::now();
                self.reload_if_changed(false);
                let mut answer = self.event(event).await;
                answer.handled_ms = millis(started.elapsed());
                Response::Delivery(answer)
            }
            Request::Status => Response::Status(Box::new(self.status())),
            Request::Stop => Response::Stopping {
                pid: std::process::id(),
            },
        }
    }
}
