//! The measured trees: N topics dated a day back, the last one a recall reads holding the
//! codeword.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use super::{CODEWORD, TOPIC_DIR};

/// Writes `reference/topic-NNNN.md` files dated a day back, as are the directories, and the
/// catalog directory a tree in use has; the last topic a recall reads carries the codeword (see
/// [`codeword_topic`]). Topics past the most a walk reads of one directory
/// ([`memory_scan::MAX_ENTRIES_PER_DIRECTORY`]) go to `reference-more/`, which the walk reaches
/// after `reference/`.
pub(crate) fn build_tree(root: &Path, topics: usize) -> Result<()> {
    let day_ago = std::time::SystemTime::now() - Duration::from_hours(24);
    let dir = root.join(TOPIC_DIR);
    let more = root.join(format!("{TOPIC_DIR}-more"));
    std::fs::create_dir_all(&dir)?;
    if topics > memory_scan::MAX_ENTRIES_PER_DIRECTORY {
        std::fs::create_dir_all(&more)?;
    }
    let filler = "Notes on the service topology, ownership of the alerting rules, the runbook \
        links and the dashboards the on-call engineer opens first when latency rises. ";
    for i in 0..topics {
        let mut body = String::with_capacity(1_000);
        while body.len() < 900 {
            body.push_str(filler);
        }
        body.truncate(900);
        if i == codeword_topic(topics) {
            let _ = write!(body, " The codeword is {CODEWORD}.");
        } else {
            let _ = write!(body, " Topic number {i:05}.");
        }
        let text = format!(
            "---\nname: Topic {i:05}\ndescription: Reference notes for subsystem {i}\ntype: reference\n---\n\n{body}\n"
        );
        let parent = if i < memory_scan::MAX_ENTRIES_PER_DIRECTORY {
            &dir
        } else {
            &more
        };
        let path = parent.join(format!("topic-{i:05}.md"));
        std::fs::write(&path, text)?;
        std::fs::File::options()
            .write(true)
            .open(&path)?
            .set_modified(day_ago)?;
    }
    // A tree in use already has its catalog directory, made long before any recall of today.
    std::fs::create_dir(root.join(memory_scan::CATALOG_DIR_NAME))?;
    // A tree that has been there a day: its directories are as settled as its files.
    for directory in [&dir, &more, root] {
        if directory.exists() {
            directory_for_times(directory)?.set_modified(day_ago)?;
        }
    }
    Ok(())
}

/// `directory` opened so that its times can be set. Windows opens a directory only with
/// `FILE_FLAG_BACKUP_SEMANTICS`, and sets its times only through a handle allowed to write its
/// attributes.
fn directory_for_times(directory: &Path) -> std::io::Result<std::fs::File> {
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt as _;
        const FILE_WRITE_ATTRIBUTES: u32 = 0x0100;
        const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
        std::fs::OpenOptions::new()
            .access_mode(FILE_WRITE_ATTRIBUTES)
            .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
            .open(directory)
    }
    #[cfg(not(windows))]
    std::fs::File::open(directory)
}

/// How many of a tree's `topics` a recall reads: a walk takes at most
/// [`memory_scan::MAX_FILES_PER_ROOT`] files from a root, the first in path order.
pub(crate) fn topics_read(topics: usize) -> usize {
    topics.min(memory_scan::MAX_FILES_PER_ROOT)
}

/// The number of the topic that carries the codeword: the last one a recall reads.
pub(crate) fn codeword_topic(topics: usize) -> usize {
    topics_read(topics).saturating_sub(1)
}
