//! The subcommands' arguments and runners, one module each.

pub(crate) mod doctor;
pub(crate) mod hook;
pub(crate) mod install;
pub(crate) mod rank;
pub(crate) mod recall;
pub(crate) mod roots;
pub(crate) mod scan;
pub(crate) mod server;

pub(crate) use crate::failure::{Failure, emit, runtime};
