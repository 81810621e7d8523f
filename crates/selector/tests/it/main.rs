//! Behaviour of the selector crate: manifest, answer validation, the mock and the HTTP adapter.

mod http;
mod manifest;
mod mock;
mod support;
mod validator;
