use super::*;
use memory_scan::MemoryType;

fn topic(title: &str) -> Topic {
    Topic::new(MemoryType::Project, title, "what it is", "the body").unwrap()
}

#[test]
fn a_title_gives_a_lowercase_name_of_its_letters_and_digits() {
    assert_eq!(
        derived_name("Deploy: the v2 Checklist!"),
        "deploy-the-v2-checklist.md"
    );
}

#[test]
fn a_chinese_title_keeps_its_characters_in_the_name() {
    assert_eq!(derived_name("数据库 迁移规范"), "数据库-迁移规范.md");
}

#[test]
fn a_title_without_letters_or_digits_gives_a_generic_name() {
    assert_eq!(derived_name("!!!"), "memory.md");
}

#[test]
fn parent_current_absolute_hidden_and_index_names_are_refused() {
    for file in [
        "../x.md",
        "a/../../x.md",
        "./x.md",
        "a/./x.md",
        "/etc/x.md",
        ".hidden.md",
        "a/.git/x.md",
        "MEMORY.md",
        "notes.txt",
        ".md",
        "",
        "a\\..\\x.md",
    ] {
        assert!(
            matches!(
                relative_path(Some(file), "t"),
                Err(SaveError::BadName { .. })
            ),
            "{file}"
        );
    }
}

#[test]
fn a_plain_nested_name_is_accepted() {
    assert_eq!(
        relative_path(Some("db/migrations.md"), "t").unwrap(),
        PathBuf::from("db/migrations.md")
    );
}

#[test]
fn an_existing_file_is_kept_unless_replacing() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.md"), "old").unwrap();
    let error = write(root.path(), Path::new("a.md"), &topic("New"), false).unwrap_err();
    assert!(matches!(error, SaveError::Exists(_)), "{error}");
    assert_eq!(
        std::fs::read_to_string(root.path().join("a.md")).unwrap(),
        "old"
    );
    write(root.path(), Path::new("a.md"), &topic("New"), true).unwrap();
    let text = std::fs::read_to_string(root.path().join("a.md")).unwrap();
    assert!(text.contains("name: New"), "{text}");
}

#[test]
fn the_written_file_parses_back_to_the_same_topic_and_leaves_no_temporary() {
    let root = tempfile::tempdir().unwrap();
    let saved = topic("Round trip");
    let path = write(root.path(), Path::new("n/x.md"), &saved, false).unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    assert_eq!(memory_scan::parse_topic(&text).unwrap(), saved);
    let names: Vec<_> = std::fs::read_dir(root.path().join("n")).unwrap().collect();
    assert_eq!(names.len(), 1);
}

#[cfg(unix)]
#[test]
fn a_symlinked_directory_on_the_way_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
    let error = write(root.path(), Path::new("out/x.md"), &topic("T"), false).unwrap_err();
    assert!(matches!(error, SaveError::Symlink(_)), "{error}");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[cfg(unix)]
#[test]
fn a_symlinked_file_is_not_replaced() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.md");
    std::fs::write(&secret, "keep").unwrap();
    std::os::unix::fs::symlink(&secret, root.path().join("x.md")).unwrap();
    let error = write(root.path(), Path::new("x.md"), &topic("T"), true).unwrap_err();
    assert!(matches!(error, SaveError::Symlink(_)), "{error}");
    assert_eq!(std::fs::read_to_string(secret).unwrap(), "keep");
}

#[cfg(unix)]
#[test]
fn a_saved_file_is_private_to_the_user() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let path = write(root.path(), Path::new("x.md"), &topic("T"), false).unwrap();
    let mode = std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn a_body_over_the_bound_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let big = Topic::new(
        MemoryType::Project,
        "T",
        "",
        &"x".repeat(MAX_BODY_BYTES + 1),
    )
    .unwrap();
    let error = write(root.path(), Path::new("x.md"), &big, false).unwrap_err();
    assert!(matches!(error, SaveError::BodyTooLarge { .. }), "{error}");
    assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
}

#[test]
fn windows_device_names_control_and_bidi_characters_and_home_shorthand_are_refused() {
    for file in [
        "CON.md",
        "nul.md",
        "notes/aux.md",
        "Com1.md",
        "lpt9.backup.md",
        "a\u{7}b.md",
        "a\u{1b}[31m.md",
        "evil\u{202e}dm.exe.md",
        "x\u{2066}.md",
        "x.md/",
        "~/x.md",
        "~root/x.md",
        "what?.md",
        "a:b.md",
        "trailing. /x.md",
    ] {
        let refused = relative_path(Some(file), "t");
        assert!(
            matches!(refused, Err(SaveError::BadName { .. })),
            "{file:?}: {refused:?}"
        );
    }
}

#[test]
fn names_that_only_resemble_windows_device_names_are_accepted() {
    for file in ["console.md", "com10.md", "com0.md", "nullable.md", "a~b.md"] {
        assert!(relative_path(Some(file), "t").is_ok(), "{file}");
    }
}

#[test]
fn a_title_over_the_bound_is_refused_and_nothing_is_written() {
    let root = tempfile::tempdir().unwrap();
    let long = topic(&"t".repeat(100_000));

    let error = write(root.path(), Path::new("x.md"), &long, false).unwrap_err();

    assert!(
        matches!(error, SaveError::TitleTooLong { chars: 100_000 }),
        "{error}"
    );
    assert!(error.to_string().contains("at most 200"), "{error}");
    assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
}
