#!/usr/bin/env node
// The `memrecall` command of the npm package: runs the native binary that this platform's
// package (`memrecall-<platform>-<arch>`, an optional dependency) holds, with this process's
// arguments, standard streams and exit status. Plain Node, no dependencies.
"use strict";

const { spawn } = require("child_process");
const { constants } = require("os");

const PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"];

function fail(message) {
  process.stderr.write(`memrecall: ${message}\n`);
  process.exit(1);
}

const platform = `${process.platform}-${process.arch}`;
if (!PLATFORMS.includes(platform)) {
  fail(
    `no prebuilt binary for ${platform}; build one from source with ` +
      "`cargo install --locked --path crates/memrecall`",
  );
}
const pkg = `memrecall-${platform}`;
const executable = process.platform === "win32" ? "memrecall.exe" : "memrecall";

let binary;
try {
  binary = require.resolve(`${pkg}/bin/${executable}`);
} catch {
  fail(
    `the package ${pkg}, which holds the binary for this platform, is not installed; ` +
      "install memrecall again without --omit=optional or --no-optional",
  );
}

// The binary shares this process's standard streams: a hook's JSON on stdin reaches it as is.
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });

// A signal sent to this process (a supervisor stopping `memrecall serve`) is passed on.
const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP"];
for (const signal of FORWARDED) {
  process.on(signal, () => child.kill(signal));
}

child.on("error", (error) => fail(`could not run ${binary}: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal !== null) {
    // End the way the binary ended, so the caller sees the same signal.
    for (const forwarded of FORWARDED) {
      process.removeAllListeners(forwarded);
    }
    process.kill(process.pid, signal);
    process.exit(128 + (constants.signals[signal] || 0));
  }
  process.exit(code === null ? 1 : code);
});
