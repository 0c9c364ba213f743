//! [`InfoLogger`]: where a database's informational messages go, set with
//! `Options::set_info_logger`, and [`InfoLogSettings`], the `LOG` file's.
//!
//! Without a logger, a database opened for writing keeps a `LOG` file as
//! RocksDB does (`crate::info_log`): the options dump at open, then
//! AlexDB's own messages (a database opened, a manual compaction run, a
//! database closed). With one, those messages go to the logger instead,
//! filtered by its level, and no `LOG` file is written.

use std::fmt;
use std::sync::Arc;

use super::enums::LogLevel;
use crate::info_log::LogFile;

/// The `LOG` file's settings (`Options::set_log_level`,
/// `set_max_log_file_size`, `set_log_file_time_to_roll`,
/// `set_keep_log_file_num`).
#[derive(Clone, Debug)]
pub(crate) struct InfoLogSettings {
    /// Lowest level of message written.
    pub level: LogLevel,
    /// Bytes after which a new file is started (0: never).
    pub max_file_size: usize,
    /// Seconds after which a new file is started (0: never).
    pub time_to_roll_secs: usize,
    /// Old files kept.
    pub keep_file_num: usize,
}

impl Default for InfoLogSettings {
    fn default() -> Self {
        Self {
            level: LogLevel::Info,
            max_file_size: 0,
            time_to_roll_secs: 0,
            keep_file_num: 1000,
        }
    }
}

/// A callback receiving each message and its level.
type Callback = Arc<dyn Fn(LogLevel, &str) + Send + Sync>;

/// Where messages go.
#[derive(Clone)]
enum Sink {
    /// Nowhere (what `get_info_logger` returns when none was set).
    Discard,
    /// Standard error, each line after an optional prefix.
    Stderr(Option<String>),
    /// A user callback.
    Callback(Callback),
    /// The database's `LOG` file, which filters by its own level.
    File(Arc<LogFile>),
}

/// A destination for a database's informational messages.
#[derive(Clone)]
pub struct InfoLogger {
    level: LogLevel,
    sink: Sink,
}

impl InfoLogger {
    /// A logger writing messages at `log_level` or above to standard error,
    /// each after `prefix` if given.
    pub fn new_stderr_logger<S: AsRef<str>>(log_level: LogLevel, prefix: Option<S>) -> Self {
        Self {
            level: log_level,
            sink: Sink::Stderr(prefix.map(|p| p.as_ref().to_string())),
        }
    }

    /// A logger calling `cb` with each message at `level` or above.
    pub fn new_callback_logger<F: Fn(LogLevel, &str) + Sync + Send + 'static>(
        level: LogLevel,
        cb: F,
    ) -> Self {
        Self {
            level,
            sink: Sink::Callback(Arc::new(cb)),
        }
    }

    /// A logger that drops every message.
    pub(crate) fn discard() -> Self {
        Self {
            level: LogLevel::Header,
            sink: Sink::Discard,
        }
    }

    /// A logger writing to a database's `LOG` file.
    pub(crate) fn to_file(file: Arc<LogFile>) -> Self {
        Self {
            level: LogLevel::Debug,
            sink: Sink::File(file),
        }
    }

    /// Sends `message` at `level`, if the logger's level lets it through.
    pub(crate) fn log(&self, level: LogLevel, message: &str) {
        if (level as i32) < (self.level as i32) {
            return;
        }
        match &self.sink {
            Sink::Discard => {}
            Sink::Stderr(prefix) => eprintln!("{}{message}", prefix.as_deref().unwrap_or("")),
            Sink::Callback(cb) => cb(level, message),
            Sink::File(file) if file.enabled(level) => file.write(&[message.to_owned()]),
            Sink::File(_) => {}
        }
    }

    /// Writes `messages` at the header level, to a `LOG` file only (the
    /// options dump; a callback or standard-error logger gets AlexDB's own
    /// messages only).
    pub(crate) fn header(&self, messages: &[String]) {
        if let Sink::File(file) = &self.sink {
            file.write(messages);
        }
    }
}

impl fmt::Debug for InfoLogger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sink = match &self.sink {
            Sink::Discard => "discard",
            Sink::Stderr(_) => "stderr",
            Sink::Callback(_) => "callback",
            Sink::File(_) => "LOG file",
        };
        f.debug_struct("InfoLogger")
            .field("level", &self.level)
            .field("sink", &sink)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::InfoLogger;
    use crate::LogLevel;

    #[test]
    fn the_level_filters_messages() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let logger = InfoLogger::new_callback_logger(LogLevel::Warn, move |level, msg| {
            sink.lock().unwrap().push((level, msg.to_string()));
        });
        logger.log(LogLevel::Info, "dropped");
        logger.log(LogLevel::Error, "kept");
        assert_eq!(
            *seen.lock().unwrap(),
            [(LogLevel::Error, "kept".to_string())]
        );
    }
}
