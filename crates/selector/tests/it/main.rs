//! Behaviour of the selector crate: manifest, answer validation and the mock.

mod manifest;
mod mock;
mod support;
mod validator;
