//! A minimal scorable document for the unit tests (the integration tests' is
//! `tests/it/support.rs`, the same).

use std::time::SystemTime;

use crate::{MemoryType, PreparedText, Scorable};

/// A document with an explicit type and modification time.
#[derive(Debug, Clone)]
pub struct Doc {
    pub text: PreparedText,
    pub memory_type: MemoryType,
    pub mtime: SystemTime,
}

impl Doc {
    pub fn new(memory_type: MemoryType, title: &str, description: &str, body: &str) -> Self {
        Self {
            text: PreparedText::new(title, description, body),
            memory_type,
            mtime: SystemTime::UNIX_EPOCH,
        }
    }
}

impl Scorable for Doc {
    fn prepared(&self) -> &PreparedText {
        &self.text
    }
    fn memory_type(&self) -> MemoryType {
        self.memory_type
    }
    fn mtime(&self) -> SystemTime {
        self.mtime
    }
}
