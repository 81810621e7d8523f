//! Reads the project and user memory trees into typed topic documents.
//!
//! It walks a memory root, parses each `*.md` topic file's frontmatter, and reports every file it
//! skipped and why; a bad file never aborts a scan. It knows nothing of queries, selectors,
//! delivery or telemetry.
