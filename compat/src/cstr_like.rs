//! [`CStrLike`]: the "anything that can become a C string" argument type of
//! rocksdb's name-taking methods (merge operator and comparator names,
//! property names, ...).

use std::convert::Infallible;
use std::ffi::{CStr, CString, NulError};
use std::fmt;
use std::ops::Deref;

/// A value that can be turned into a nul-terminated string.
///
/// Implemented for `&str`, `String`, `&String`, `&CStr`, `CString`,
/// `&CString` and the property name types, as in rocksdb. Conversion fails
/// only when a Rust string contains an interior nul byte.
pub trait CStrLike {
    /// The borrowed or owned C string produced by [`CStrLike::bake`].
    type Baked: Deref<Target = CStr>;
    /// The conversion error.
    type Error: fmt::Debug + fmt::Display;

    /// Converts into a C string, borrowing when the value already is one.
    fn bake(self) -> Result<Self::Baked, Self::Error>;

    /// Converts into an owned C string.
    fn into_c_string(self) -> Result<CString, Self::Error>;
}

impl CStrLike for &str {
    type Baked = CString;
    type Error = NulError;

    fn bake(self) -> Result<CString, NulError> {
        CString::new(self)
    }

    fn into_c_string(self) -> Result<CString, NulError> {
        CString::new(self)
    }
}

impl CStrLike for String {
    type Baked = CString;
    type Error = NulError;

    fn bake(self) -> Result<CString, NulError> {
        CString::new(self)
    }

    fn into_c_string(self) -> Result<CString, NulError> {
        CString::new(self)
    }
}

impl CStrLike for &String {
    type Baked = CString;
    type Error = NulError;

    fn bake(self) -> Result<CString, NulError> {
        CString::new(self.as_str())
    }

    fn into_c_string(self) -> Result<CString, NulError> {
        CString::new(self.as_str())
    }
}

impl<'a> CStrLike for &'a CStr {
    type Baked = &'a CStr;
    type Error = Infallible;

    fn bake(self) -> Result<&'a CStr, Infallible> {
        Ok(self)
    }

    fn into_c_string(self) -> Result<CString, Infallible> {
        Ok(self.to_owned())
    }
}

impl CStrLike for CString {
    type Baked = CString;
    type Error = Infallible;

    fn bake(self) -> Result<CString, Infallible> {
        Ok(self)
    }

    fn into_c_string(self) -> Result<CString, Infallible> {
        Ok(self)
    }
}

impl<'a> CStrLike for &'a CString {
    type Baked = &'a CStr;
    type Error = Infallible;

    fn bake(self) -> Result<&'a CStr, Infallible> {
        Ok(self.as_c_str())
    }

    fn into_c_string(self) -> Result<CString, Infallible> {
        Ok(self.clone())
    }
}

/// Turns a name argument into a Rust string.
///
/// rocksdb panics (`unwrap`) when a name contains a nul byte; so does this.
pub(crate) fn name_to_string(name: impl CStrLike) -> String {
    let name = name
        .into_c_string()
        .unwrap_or_else(|e| panic!("name must not contain a nul byte: {e}"));
    name.to_string_lossy().into_owned()
}
