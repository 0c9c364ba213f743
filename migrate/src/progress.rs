//! Progress reporting: the events a migration emits, and the terminal
//! progress bar that shows them.

use std::time::Instant;

use indicatif::{HumanBytes, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The bar: family, bytes and bytes/s in the message, then keys, keys/s, ETA.
const TEMPLATE: &str =
    "{spinner} {msg} [{bar:30}] {human_pos}/{human_len} keys, {per_sec}, ETA {eta}";

/// Receives a migration's progress. Every method has an empty default.
pub trait Observer {
    /// The migration starts; `estimated_keys` is a guess for the bar.
    fn started(&mut self, _estimated_keys: u64) {}
    /// Copying `family` starts.
    fn family_started(&mut self, _family: &str) {}
    /// A batch of `keys` entries and `bytes` key and value bytes is durable.
    fn batch_committed(&mut self, _keys: u64, _bytes: u64) {}
    /// Verification of `family` starts.
    fn verifying(&mut self, _family: &str) {}
    /// The migration is over.
    fn finished(&mut self) {}
}

/// An observer that reports nothing.
#[derive(Debug, Default)]
pub struct Silent;

impl Observer for Silent {}

/// A progress bar on standard error with keys/s, bytes/s and an ETA. It
/// draws only when standard error is a terminal.
pub struct Bar {
    bar: ProgressBar,
    started: Instant,
    bytes: u64,
    family: String,
}

impl Bar {
    /// A bar on standard error; hidden when `hidden` is set.
    pub fn new(hidden: bool) -> Self {
        let target = if hidden {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(Some(0), target);
        if let Ok(style) = ProgressStyle::with_template(TEMPLATE) {
            bar.set_style(style.progress_chars("=> "));
        }
        Bar {
            bar,
            started: Instant::now(),
            bytes: 0,
            family: String::new(),
        }
    }

    fn refresh_message(&self) {
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        let rate = (self.bytes as f64 / secs) as u64;
        self.bar.set_message(format!(
            "{} | {} at {}/s",
            self.family,
            HumanBytes(self.bytes),
            HumanBytes(rate)
        ));
    }
}

impl Observer for Bar {
    fn started(&mut self, estimated_keys: u64) {
        self.started = Instant::now();
        self.bar.set_length(estimated_keys);
    }

    fn family_started(&mut self, family: &str) {
        self.family = family.to_string();
        self.refresh_message();
    }

    fn batch_committed(&mut self, keys: u64, bytes: u64) {
        self.bytes += bytes;
        self.bar.inc(keys);
        if self.bar.position() > self.bar.length().unwrap_or(0) {
            self.bar.set_length(self.bar.position());
        }
        self.refresh_message();
    }

    fn verifying(&mut self, family: &str) {
        self.bar.set_message(format!("verifying {family}"));
    }

    fn finished(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_template_parses() {
        assert!(indicatif::ProgressStyle::with_template(super::TEMPLATE).is_ok());
    }
}
