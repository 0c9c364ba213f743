//! Running one of the current test binary's ignored tests as a child
//! process (the crash tests' victims), its standard output piped back.

use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Starts this test binary running only the ignored test `name`, with
/// `env` set to `dir`.
pub fn spawn(name: &str, env: &str, dir: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            name,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(env, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}
