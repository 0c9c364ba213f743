//! `named_enum!`: an enum whose variants each carry RocksDB's name for them,
//! with `name()`, `iter()`, `FromStr` and `Display` as rocksdb has them.

use std::fmt;

/// A string that names no ticker or histogram.
#[derive(Debug, Clone)]
pub struct NameParseError;

impl fmt::Display for NameParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unrecognized name")
    }
}

impl std::error::Error for NameParseError {}

/// Declares the enum `$name` with variants `$variant("rocksdb.name")`.
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $name:ident { $($variant:ident($text:literal),)+ }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Copy, Clone, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum $name {
            $(
                #[doc = concat!("`", $text, "`")]
                $variant,
            )+
        }

        impl $name {
            /// RocksDB's name for this variant.
            pub const fn name(&self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// Every variant, in RocksDB's order.
            pub fn iter() -> ::core::slice::Iter<'static, $name> {
                static VARIANTS: &[$name] = &[$($name::$variant,)+];
                VARIANTS.iter()
            }

            /// How many variants there are.
            pub(crate) const COUNT: usize = [$($text,)+].len();
        }

        impl ::core::str::FromStr for $name {
            type Err = $crate::statistics::NameParseError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err($crate::statistics::NameParseError),
                }
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                self.name().fmt(f)
            }
        }
    };
}
