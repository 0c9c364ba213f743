//! The `LOG` file: where it lives, how each message is stamped, and how a
//! full or old one is rolled to `LOG.old.<microseconds>` and old ones are
//! pruned.
//!
//! As in RocksDB: the file is `<db>/LOG`, or `<db_log_dir>/<db path with
//! every other character than letters, digits, `-`, `.` and `_` made `_`>_LOG`
//! with `Options::set_db_log_dir`; opening starts a new one, rolling the
//! previous one aside; `set_keep_log_file_num` old ones are kept. Writing
//! to it is best effort: a message that cannot be written is dropped, and a
//! database whose `LOG` cannot be created opens without one.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::options::{InfoLogSettings, LogLevel};

/// Name of the `LOG` file in the database directory.
const LOG_FILE: &str = "LOG";

/// What comes between a rolled `LOG`'s name and its timestamp.
const OLD_INFIX: &str = ".old.";

/// An open `LOG` file.
pub(crate) struct LogFile {
    dir: PathBuf,
    name: String,
    settings: InfoLogSettings,
    active: Mutex<Active>,
}

/// The file being written.
struct Active {
    file: File,
    bytes: usize,
    started: Instant,
}

impl LogFile {
    /// Starts a new `LOG` for the database at `db_path`, rolling the
    /// previous one aside and pruning old ones.
    pub(crate) fn create(
        db_path: &Path,
        log_dir: Option<&Path>,
        settings: &InfoLogSettings,
    ) -> io::Result<Self> {
        let (dir, name) = location(db_path, log_dir)?;
        fs::create_dir_all(&dir)?;
        let log = LogFile {
            active: Mutex::new(start(&dir, &name, settings.keep_file_num)?),
            dir,
            name,
            settings: settings.clone(),
        };
        Ok(log)
    }

    /// Whether messages at `level` are written.
    pub(crate) fn enabled(&self, level: LogLevel) -> bool {
        level as i32 >= self.settings.level as i32
    }

    /// Writes each message on its own stamped line (a message's further
    /// lines follow unstamped, as RocksDB writes its table options), then
    /// rolls the file if it is full or old.
    pub(crate) fn write(&self, messages: &[String]) {
        let mut text = String::new();
        let stamp = stamp(SystemTime::now());
        for message in messages {
            text.push_str(&stamp);
            text.push_str(message);
            text.push('\n');
        }
        let mut active = self.active.lock().unwrap_or_else(|e| e.into_inner());
        if active.file.write_all(text.as_bytes()).is_err() {
            return;
        }
        active.bytes += text.len();
        if self.due(&active)
            && let Ok(next) = start(&self.dir, &self.name, self.settings.keep_file_num)
        {
            *active = next;
        }
    }

    fn due(&self, active: &Active) -> bool {
        let max = self.settings.max_file_size;
        let age = self.settings.time_to_roll_secs as u64;
        (max > 0 && active.bytes >= max) || (age > 0 && active.started.elapsed().as_secs() >= age)
    }
}

/// Deletes the `LOG` file and the rolled ones of the database at
/// `db_path` (`DB::destroy`).
pub(crate) fn remove_logs(db_path: &Path, log_dir: Option<&Path>) -> io::Result<()> {
    let (dir, log_name) = location(db_path, log_dir)?;
    let entries = match fs::read_dir(&dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        entries => entries?,
    };
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_str()
            .is_some_and(|name| is_log_file(name, &log_name))
        {
            fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// Whether `name` is a `LOG` file or a rolled one, for the database whose
/// `LOG` is named `log_name`.
fn is_log_file(name: &str, log_name: &str) -> bool {
    name == log_name || rolled_at(name, log_name).is_some()
}

/// The microseconds of a rolled `LOG` named `name`
/// (`<log_name>.old.<microseconds>`).
fn rolled_at(name: &str, log_name: &str) -> Option<u64> {
    name.strip_prefix(log_name)?
        .strip_prefix(OLD_INFIX)?
        .parse()
        .ok()
}

/// The directory and file name of the `LOG` of the database at `db_path`.
fn location(db_path: &Path, log_dir: Option<&Path>) -> io::Result<(PathBuf, String)> {
    match log_dir {
        None => Ok((db_path.to_path_buf(), LOG_FILE.to_owned())),
        Some(dir) => {
            let absolute = std::path::absolute(db_path)?;
            let flat: String = absolute
                .to_string_lossy()
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            Ok((dir.to_path_buf(), format!("{flat}_{LOG_FILE}")))
        }
    }
}

/// Rolls `dir/name` aside if it exists, prunes old files beyond `keep`,
/// and creates a new, empty one.
fn start(dir: &Path, name: &str, keep: usize) -> io::Result<Active> {
    let path = dir.join(name);
    if path.exists() {
        fs::rename(&path, rolled_name(dir, name))?;
    }
    prune(dir, name, keep)?;
    let file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(&path)?;
    Ok(Active {
        file,
        bytes: 0,
        started: Instant::now(),
    })
}

/// A free `name.old.<microseconds>` path.
fn rolled_name(dir: &Path, name: &str) -> PathBuf {
    let mut micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    loop {
        let candidate = dir.join(format!("{name}{OLD_INFIX}{micros}"));
        if !candidate.exists() {
            return candidate;
        }
        micros += 1;
    }
}

/// Deletes the oldest rolled files of `name` in `dir` beyond `keep`.
fn prune(dir: &Path, name: &str, keep: usize) -> io::Result<()> {
    let mut old: Vec<(u64, PathBuf)> = fs::read_dir(dir)?
        .flatten()
        .filter_map(|entry| {
            let micros = rolled_at(entry.file_name().to_str()?, name)?;
            Some((micros, entry.path()))
        })
        .collect();
    old.sort();
    let excess = old.len().saturating_sub(keep);
    for (_, path) in old.into_iter().take(excess) {
        fs::remove_file(path)?;
    }
    Ok(())
}

/// `YYYY/MM/DD-HH:MM:SS.uuuuuu <pid> `, in UTC.
fn stamp(now: SystemTime) -> String {
    // RFC 3339 `YYYY-MM-DDTHH:MM:SS.uuuuuuZ`, in RocksDB's punctuation.
    let rfc = humantime::format_rfc3339_micros(now).to_string();
    let (date, time) = rfc.split_once('T').unwrap_or((&rfc, ""));
    format!(
        "{}-{} {} ",
        date.replace('-', "/"),
        time.trim_end_matches('Z'),
        std::process::id()
    )
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::{is_log_file, stamp};

    #[test]
    fn a_stamp_has_rocksdbs_shape() {
        let at = UNIX_EPOCH + Duration::from_micros(1_795_491_183_582_254);
        assert!(stamp(at).starts_with("2026/11/24-03:33:03.582254 "));
    }

    #[test]
    fn log_file_names() {
        assert!(is_log_file("LOG", "LOG"));
        assert!(is_log_file("LOG.old.1795491183582056", "LOG"));
        assert!(!is_log_file("LOG.old.x", "LOG"));
        assert!(!is_log_file("LOGGER", "LOG"));
    }
}
