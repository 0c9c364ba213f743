//! Property name types: [`PropName`] (borrowed, used by the constants in
//! [`crate::properties`]) and [`PropertyName`] (owned, built for "at level"
//! properties).
//!
//! Both hold a nul-terminated UTF-8 string, so they convert to `&str` and
//! `&CStr` for free and can be passed wherever a [`CStrLike`] is accepted,
//! for example to `DB::property_value`.

use std::borrow::Borrow;
use std::convert::Infallible;
use std::ffi::{CStr, CString};
use std::fmt;
use std::ops::Deref;

use crate::cstr_like::CStrLike;

/// A borrowed RocksDB property name, such as `"rocksdb.estimate-num-keys"`.
#[derive(PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct PropName(CStr);

impl PropName {
    /// Makes a property name from a nul-terminated literal; panics (at
    /// compile time for constants) if `value` is not nul-terminated or has an
    /// interior nul.
    pub(crate) const fn new_unwrap(value: &str) -> &Self {
        let c_str = match CStr::from_bytes_with_nul(value.as_bytes()) {
            Ok(c_str) => c_str,
            Err(_) => panic!("property name must end with its only nul byte"),
        };
        Self::from_c_str(c_str)
    }

    /// Views a C string, known to be UTF-8, as a property name.
    const fn from_c_str(c_str: &CStr) -> &Self {
        // SAFETY: `PropName` is `repr(transparent)` over `CStr`, so both
        // references have the same layout and metadata. Callers only pass
        // strings that came from `&str`/`String`, so they are valid UTF-8.
        unsafe { &*(c_str as *const CStr as *const Self) }
    }

    /// The name as a C string, including its terminating nul.
    pub fn as_c_str(&self) -> &CStr {
        &self.0
    }

    /// The name as a string slice, without the terminating nul.
    pub fn as_str(&self) -> &str {
        // Built only from UTF-8 (`&str` literals and `format!` output).
        self.0.to_str().unwrap_or_default()
    }
}

impl Deref for PropName {
    type Target = CStr;

    fn deref(&self) -> &CStr {
        self.as_c_str()
    }
}

impl AsRef<CStr> for PropName {
    fn as_ref(&self) -> &CStr {
        self.as_c_str()
    }
}

impl AsRef<str> for PropName {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl ToOwned for PropName {
    type Owned = PropertyName;

    fn to_owned(&self) -> PropertyName {
        PropertyName(self.0.to_owned())
    }
}

impl fmt::Display for PropName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_str().fmt(f)
    }
}

impl fmt::Debug for PropName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_str().fmt(f)
    }
}

impl PartialEq<CStr> for PropName {
    fn eq(&self, other: &CStr) -> bool {
        self.as_c_str() == other
    }
}

impl PartialEq<str> for PropName {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<PropName> for CStr {
    fn eq(&self, other: &PropName) -> bool {
        self == other.as_c_str()
    }
}

impl PartialEq<PropName> for str {
    fn eq(&self, other: &PropName) -> bool {
        self == other.as_str()
    }
}

impl<'a> CStrLike for &'a PropName {
    type Baked = &'a CStr;
    type Error = Infallible;

    fn bake(self) -> Result<&'a CStr, Infallible> {
        Ok(self.as_c_str())
    }

    fn into_c_string(self) -> Result<CString, Infallible> {
        Ok(self.as_c_str().to_owned())
    }
}

/// An owned RocksDB property name, such as `"rocksdb.num-files-at-level2"`.
#[derive(PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct PropertyName(CString);

impl PropertyName {
    /// Builds `"rocksdb.<infix><level>"`.
    pub(crate) fn at_level(infix: &str, level: usize) -> Self {
        let name = CString::new(format!("rocksdb.{infix}{level}"))
            .unwrap_or_else(|_| panic!("property infix {infix:?} contains a nul byte"));
        Self(name)
    }

    /// Converts the name into a C string.
    pub fn into_c_string(self) -> CString {
        self.0
    }

    /// Converts the name into a string, without the terminating nul.
    pub fn into_string(self) -> String {
        self.0.into_string().unwrap_or_default()
    }
}

impl Deref for PropertyName {
    type Target = PropName;

    fn deref(&self) -> &PropName {
        PropName::from_c_str(self.0.as_c_str())
    }
}

impl AsRef<CStr> for PropertyName {
    fn as_ref(&self) -> &CStr {
        self.as_c_str()
    }
}

impl AsRef<str> for PropertyName {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<PropName> for PropertyName {
    fn borrow(&self) -> &PropName {
        self
    }
}

impl fmt::Display for PropertyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_str().fmt(f)
    }
}

impl fmt::Debug for PropertyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_str().fmt(f)
    }
}

impl PartialEq<CString> for PropertyName {
    fn eq(&self, other: &CString) -> bool {
        &self.0 == other
    }
}

impl PartialEq<String> for PropertyName {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<PropertyName> for CString {
    fn eq(&self, other: &PropertyName) -> bool {
        self == &other.0
    }
}

impl PartialEq<PropertyName> for String {
    fn eq(&self, other: &PropertyName) -> bool {
        self.as_str() == other.as_str()
    }
}

impl CStrLike for PropertyName {
    type Baked = CString;
    type Error = Infallible;

    fn bake(self) -> Result<CString, Infallible> {
        Ok(self.0)
    }

    fn into_c_string(self) -> Result<CString, Infallible> {
        Ok(self.0)
    }
}

impl<'a> CStrLike for &'a PropertyName {
    type Baked = &'a CStr;
    type Error = Infallible;

    fn bake(self) -> Result<&'a CStr, Infallible> {
        Ok(self.0.as_c_str())
    }

    fn into_c_string(self) -> Result<CString, Infallible> {
        Ok(self.0.clone())
    }
}
