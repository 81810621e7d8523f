use super::*;

fn dependency(name: &str, kind: Option<&str>) -> Dependency {
    Dependency {
        name: name.to_owned(),
        rename: None,
        kind: kind.map(str::to_owned),
    }
}

/// A package in a temporary directory whose library source is `lib` and whose one
/// integration test is `test`.
fn package_with(
    lib: &str,
    test: &str,
    dependencies: Vec<Dependency>,
) -> (tempfile::TempDir, Package) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::create_dir_all(dir.path().join("tests")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), lib).unwrap();
    std::fs::write(dir.path().join("tests/it.rs"), test).unwrap();
    let package = Package {
        name: "planted".to_owned(),
        id: "planted 0.1.0".to_owned(),
        manifest_path: dir.path().join("Cargo.toml"),
        dependencies,
        targets: Vec::new(),
    };
    (dir, package)
}

#[test]
fn a_dev_dependency_named_only_in_a_test_target_outside_the_package_is_used() {
    let (dir, mut package) = package_with("", "", vec![dependency("wiremock", Some("dev"))]);
    let outside = tempfile::tempdir().unwrap();
    let e2e = outside.path().join("e2e.rs");
    std::fs::write(&e2e, "use wiremock::MockServer;\n").unwrap();
    assert_eq!(unused_in_packages(&[&package]).unwrap().len(), 1);

    package.targets.push(Target { src_path: e2e });
    package.targets.push(Target {
        src_path: dir.path().join("src/lib.rs"),
    });

    assert_eq!(unused_in_packages(&[&package]).unwrap(), []);
}

#[test]
fn a_planted_dependency_the_code_never_names_is_reported() {
    let (_dir, package) = package_with(
        "use serde::Serialize;\n",
        "",
        vec![dependency("serde", None), dependency("regex", None)],
    );
    let findings = unused_in_packages(&[&package]).unwrap();
    assert_eq!(
        findings,
        [Finding::Unnamed {
            package: "planted".to_owned(),
            dependency: "regex".to_owned(),
            dev: false,
        }]
    );
}

#[test]
fn a_normal_dependency_named_only_in_tests_is_reported() {
    let (_dir, package) = package_with(
        "",
        "use tempfile::tempdir;\n",
        vec![dependency("tempfile", None)],
    );
    assert_eq!(unused_in_packages(&[&package]).unwrap().len(), 1);
}

#[test]
fn a_dev_dependency_named_in_tests_is_used() {
    let (_dir, package) = package_with(
        "",
        "#[tokio::test]\nasync fn t() {}\n",
        vec![dependency("tokio", Some("dev"))],
    );
    assert_eq!(unused_in_packages(&[&package]).unwrap(), []);
}

#[test]
fn a_dependency_named_only_in_included_baked_data_is_used() {
    let (dir, package) = package_with("", "", vec![dependency("zerovec", None)]);
    std::fs::create_dir_all(dir.path().join("src/data")).unwrap();
    std::fs::write(
        dir.path().join("src/data/marker_v1.rs.data"),
        "const V: zerovec::ZeroVec<'static, u8> = zerovec::ZeroVec::new();\n",
    )
    .unwrap();
    assert_eq!(unused_in_packages(&[&package]).unwrap(), []);
}

#[test]
fn a_hyphenated_dependency_is_found_under_its_underscored_name() {
    let (_dir, package) = package_with(
        "fn h() -> u64 { twox_hash::XxHash3_64::oneshot(b\"\") }\n",
        "",
        vec![dependency("twox-hash", None)],
    );
    assert_eq!(unused_in_packages(&[&package]).unwrap(), []);
}

#[test]
fn a_name_inside_a_longer_identifier_does_not_count() {
    let (_dir, package) = package_with("use my_bytes::Buf;\n", "", vec![dependency("bytes", None)]);
    assert_eq!(unused_in_packages(&[&package]).unwrap().len(), 1);
}

#[test]
fn a_dependency_named_in_a_serde_with_attribute_is_used() {
    let (_dir, package) = package_with(
        "struct B(#[serde(with = \"serde_bytes\")] Vec<u8>);\n",
        "",
        vec![dependency("serde_bytes", None)],
    );
    assert_eq!(unused_in_packages(&[&package]).unwrap(), []);
}

#[test]
fn an_allowance_for_a_dependency_no_longer_declared_is_reported() {
    let (_dir, package) = package_with("", "", vec![dependency("zerovec", None)]);
    let allowed = [
        ("planted", "zerovec", "named by expanded macros"),
        ("planted", "bytes", "unused: to be removed"),
        ("elsewhere", "zerovec", "a package not in the workspace"),
    ];
    assert_eq!(
        stale_allowances(&allowed, &[&package]),
        [
            Finding::StaleAllowance {
                package: "planted".to_owned(),
                dependency: "bytes".to_owned(),
            },
            Finding::StaleAllowance {
                package: "elsewhere".to_owned(),
                dependency: "zerovec".to_owned(),
            },
        ]
    );
}

#[test]
fn a_workspace_entry_no_crate_declares_is_reported() {
    let (_dir, package) = package_with("", "", vec![dependency("serde", None)]);
    let manifest = "[workspace.dependencies]\nserde = \"1\"\nfutures = \"0.3\"\n";
    assert_eq!(
        unused_workspace_entries(manifest, &[&package]).unwrap(),
        [Finding::UndeclaredWorkspaceEntry {
            dependency: "futures".to_owned()
        }]
    );
}

#[test]
fn a_dependency_named_only_in_string_literals_and_comments_is_reported() {
    let (_dir, package) = package_with(
        concat!(
            "// recall_lifecycle::recall is where catalogs are written\n",
            "/* use recall_lifecycle; /* nested */ recall_lifecycle::x */\n",
            "fn t() { assert!(f(\"recall_lifecycle::recall\")); }\n",
            "const R: &str = r#\"use recall_lifecycle::Session;\"#;\n",
            "const Q: char = '\"'; const B: &[u8] = b\"recall_lifecycle::x\";\n",
        ),
        "fn it() { let _ = \"recall_lifecycle\"; }\n",
        vec![
            dependency("recall-lifecycle", None),
            dependency("recall-lifecycle", Some("dev")),
        ],
    );
    assert_eq!(
        unused_in_packages(&[&package]).unwrap(),
        [
            Finding::Unnamed {
                package: "planted".to_owned(),
                dependency: "recall-lifecycle".to_owned(),
                dev: false,
            },
            Finding::Unnamed {
                package: "planted".to_owned(),
                dependency: "recall-lifecycle".to_owned(),
                dev: true,
            },
        ]
    );
}

#[test]
fn code_after_a_character_literal_or_a_lifetime_still_counts() {
    let (_dir, package) = package_with(
        "fn f<'a>(s: &'a str) -> char { let _ = '\"'; serde_json::from_str::<()>(s).ok(); 'x' }\n",
        "",
        vec![dependency("serde_json", None)],
    );
    assert_eq!(unused_in_packages(&[&package]).unwrap(), []);
}
