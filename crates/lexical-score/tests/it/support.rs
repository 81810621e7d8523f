//! A minimal scorable document for tests.

use std::time::{Duration, SystemTime};

use lexical_score::{MemoryType, PreparedText, Scorable};

/// A document with an explicit type and a modification time in seconds since the epoch.
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

    /// A `reference` document, the most neutral type for tests that are not about types.
    pub fn plain(title: &str, description: &str, body: &str) -> Self {
        Self::new(MemoryType::Reference, title, description, body)
    }

    pub fn modified_at(mut self, seconds: u64) -> Self {
        self.mtime = SystemTime::UNIX_EPOCH + Duration::from_secs(seconds);
        self
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
