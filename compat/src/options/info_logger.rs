//! [`InfoLogger`]: where a database's informational messages go, set with
//! `Options::set_info_logger`.
//!
//! RocksDB writes its `LOG` through it. AlexDB keeps no `LOG` file; it sends
//! its own messages (a database opened, a manual compaction run, a database
//! closed) to the logger, filtered by the logger's level.

use std::fmt;
use std::sync::Arc;

use super::enums::LogLevel;

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

    /// Sends `message` at `level`, if the logger's level lets it through.
    pub(crate) fn log(&self, level: LogLevel, message: &str) {
        if (level as i32) < (self.level as i32) {
            return;
        }
        match &self.sink {
            Sink::Discard => {}
            Sink::Stderr(prefix) => eprintln!("{}{message}", prefix.as_deref().unwrap_or("")),
            Sink::Callback(cb) => cb(level, message),
        }
    }
}

impl fmt::Debug for InfoLogger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sink = match &self.sink {
            Sink::Discard => "discard",
            Sink::Stderr(_) => "stderr",
            Sink::Callback(_) => "callback",
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
