//! [`SliceTransform`]: the prefix extractor set by
//! `Options::set_prefix_extractor`.

use std::fmt;

use crate::cstr_like::{CStrLike, name_to_string};

/// Maps a key to its prefix; it must work for keys of any lifetime.
pub type TransformFn = for<'a> fn(&'a [u8]) -> &'a [u8];

/// Whether a key has a prefix at all (is "in domain").
pub type InDomainFn = fn(&[u8]) -> bool;

/// A named key-to-prefix function, used for prefix iteration and prefix seek.
#[derive(Clone)]
pub struct SliceTransform {
    name: String,
    kind: Kind,
}

#[derive(Clone, Copy)]
enum Kind {
    FixedPrefix(usize),
    Noop,
    Custom {
        transform: TransformFn,
        in_domain: Option<InDomainFn>,
    },
}

impl SliceTransform {
    /// A transform named `name` computing prefixes with `transform_fn`; keys
    /// for which `in_domain_fn` returns false have no prefix (with `None`,
    /// every key does).
    ///
    /// rocksdb's `TransformFn<'a>` names one key lifetime; AlexDB asks for a
    /// function that works for every key lifetime, which every `fn` item and
    /// non-capturing closure of that shape is.
    pub fn create(
        name: impl CStrLike,
        transform_fn: TransformFn,
        in_domain_fn: Option<InDomainFn>,
    ) -> SliceTransform {
        Self {
            name: name_to_string(name),
            kind: Kind::Custom {
                transform: transform_fn,
                in_domain: in_domain_fn,
            },
        }
    }

    /// The first `len` bytes of each key; keys shorter than `len` have no prefix.
    pub fn create_fixed_prefix(len: usize) -> SliceTransform {
        Self {
            name: format!("rocksdb.FixedPrefix.{len}"),
            kind: Kind::FixedPrefix(len),
        }
    }

    /// The whole key is its own prefix.
    pub fn create_noop() -> SliceTransform {
        Self {
            name: "rocksdb.Noop".to_owned(),
            kind: Kind::Noop,
        }
    }

    /// The transform's name.
    #[allow(
        dead_code,
        reason = "not yet reported anywhere (RocksDB prints it in its OPTIONS file)"
    )]
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Whether `key` has a prefix under this transform.
    pub(crate) fn in_domain(&self, key: &[u8]) -> bool {
        match self.kind {
            Kind::FixedPrefix(len) => key.len() >= len,
            Kind::Noop => true,
            Kind::Custom { in_domain, .. } => in_domain.is_none_or(|f| f(key)),
        }
    }

    /// The prefix of `key`, or `None` when the key is not in the domain.
    pub(crate) fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        if !self.in_domain(key) {
            return None;
        }
        Some(match self.kind {
            Kind::FixedPrefix(len) => &key[..len],
            Kind::Noop => key,
            Kind::Custom { transform, .. } => transform(key),
        })
    }
}

impl fmt::Debug for SliceTransform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SliceTransform")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
