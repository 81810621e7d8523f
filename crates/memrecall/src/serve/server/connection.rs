//! The server's connections: accepting them until idle, stopped or displaced, checking the peer,
//! and answering each one's single request.

use std::path::Path;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::time::Instant;

use super::{SOCKET_CHECK_EVERY, Server, lock, log, millis};
use crate::serve::current_uid;
use crate::serve::protocol::{self, Request, Response, ResponseLine, VERSION};

impl Server {
    pub(super) async fn accept_loop(self: &Arc<Self>, listener: &UnixListener, socket: &Path) {
        let ours = socket_identity(socket);
        let mut check = tokio::time::interval(SOCKET_CHECK_EVERY);
        loop {
            let idle_until = *lock(&self.last_request) + self.idle_exit();
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        *lock(&self.last_request) = Instant::now();
                        let server = Arc::clone(self);
                        tokio::spawn(async move { server.serve_connection(stream).await });
                    }
                    Err(e) => log(&format!("accept failed: {e}")),
                },
                () = tokio::time::sleep_until(idle_until) => {
                    if *lock(&self.last_request) + self.idle_exit() <= Instant::now() {
                        log("idle: exiting");
                        return;
                    }
                }
                _ = check.tick() => {
                    if socket_identity(socket) != ours {
                        log("the socket was removed or replaced: exiting");
                        return;
                    }
                    self.unwatch_idle_roots();
                }
                () = self.stop.notified() => return,
            }
        }
    }

    async fn serve_connection(self: Arc<Self>, mut stream: UnixStream) {
        let uid = current_uid();
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == uid => {}
            Ok(cred) => {
                log(&format!(
                    "refused a peer of uid {} (serving uid {uid})",
                    cred.uid()
                ));
                return;
            }
            Err(e) => {
                log(&format!(
                    "refused a peer whose credentials cannot be read: {e}"
                ));
                return;
            }
        }
        let (read, mut write) = stream.split();
        let mut line = String::new();
        let read = BufReader::new(read)
            .take(protocol::MAX_LINE_BYTES + 1)
            .read_line(&mut line)
            .await;
        let response = match read {
            Ok(0) => return,
            Ok(n) if u64::try_from(n).unwrap_or(u64::MAX) > protocol::MAX_LINE_BYTES => {
                Response::Error {
                    message: protocol::WireError::TooLong.to_string(),
                }
            }
            Ok(_) => match protocol::parse_request(&line) {
                Ok(request) => self.handle(request).await,
                Err(e) => Response::Error {
                    message: e.to_string(),
                },
            },
            Err(e) => {
                log(&format!("cannot read a request: {e}"));
                return;
            }
        };
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

    async fn handle(&self, request: Request) -> Response {
        match request {
            Request::Event(event) => {
                let started = Instant::now();
                self.reload_if_changed(false);
                let mut answer = self.event(event).await;
                answer.handled_ms = millis(started.elapsed());
                Response::Delivery(answer)
            }
            Request::Status => Response::Status(self.status()),
            Request::Stop => Response::Stopping {
                pid: std::process::id(),
            },
        }
    }
}

/// The socket's device and inode, to notice it being removed or replaced.
fn socket_identity(socket: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::symlink_metadata(socket)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}
