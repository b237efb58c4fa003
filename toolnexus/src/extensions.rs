//! [`Extensions`]: typed values a host attaches to a run (who the run acts for, a tenant, a
//! token, a database handle) and its tools read from their [`ToolContext`](crate::ToolContext);
//! [`Ext`], the injected `#[tool]` parameter holding one; [`MissingExtension`], what a tool
//! is told when a value it needs was not attached. They live in the process only: nothing
//! here is sent to the model or serialized.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// One value of each type, shared.
///
/// Values are kept behind `Arc`, so cloning the map (the loop gives every tool call its own
/// copy) costs one reference count, and the values need only be `Send + Sync`, not `Clone`.
/// `Debug` shows the type names only: values may be secrets. Two maps are equal when they
/// hold the very same values (the same `Arc`s), which is what a copy of a map does.
///
/// ```
/// use toolnexus::Extensions;
///
/// #[derive(Debug, PartialEq)]
/// struct UserId(u64);
///
/// let mut ext = Extensions::new();
/// ext.insert(UserId(42));
/// assert_eq!(ext.get::<UserId>(), Some(&UserId(42)));
/// assert_eq!(ext.get::<String>(), None);
/// assert!(format!("{ext:?}").contains("UserId"));
/// ```
#[derive(Clone, Default)]
pub struct Extensions {
    // Behind its own `Arc` so the common case, a map copied into each tool call and never
    // changed, is one reference count; `insert` copies on write. `None` when empty, so the
    // empty map every call without extensions gets allocates nothing.
    map: Option<Arc<HashMap<TypeId, Entry>>>,
}

/// The map of an empty [`Extensions`], for reading.
fn no_entries() -> &'static HashMap<TypeId, Entry> {
    static EMPTY: std::sync::OnceLock<HashMap<TypeId, Entry>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(HashMap::new)
}

#[derive(Clone)]
struct Entry {
    value: Arc<dyn Any + Send + Sync>,
    type_name: &'static str,
}

impl Extensions {
    /// An empty map.
    pub fn new() -> Self {
        Extensions::default()
    }

    /// Stores `value`, replacing a value of the same type.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.insert_arc(Arc::new(value));
    }

    /// Stores an already shared value, replacing a value of the same type.
    pub fn insert_arc<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        let entry = Entry {
            value,
            type_name: std::any::type_name::<T>(),
        };
        Arc::make_mut(self.map.get_or_insert_with(Default::default))
            .insert(TypeId::of::<T>(), entry);
    }

    /// `self` with `value` stored, for building a map in one expression.
    pub fn with<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.insert(value);
        self
    }

    /// The value of type `T`, if one was stored.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.entries().get(&TypeId::of::<T>())?.value.downcast_ref()
    }

    /// The value of type `T` as its shared `Arc`, if one was stored.
    pub fn get_arc<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let value = self.entries().get(&TypeId::of::<T>())?.value.clone();
        value.downcast().ok()
    }

    /// The value of type `T`, or the error a tool reports when it was not attached.
    pub fn require<T: Send + Sync + 'static>(&self) -> Result<&T, MissingExtension> {
        self.get().ok_or_else(MissingExtension::of::<T>)
    }

    /// Whether a value of type `T` is stored.
    pub fn contains<T: Send + Sync + 'static>(&self) -> bool {
        self.entries().contains_key(&TypeId::of::<T>())
    }

    /// How many values are stored.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether no value is stored.
    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }

    fn entries(&self) -> &HashMap<TypeId, Entry> {
        self.map.as_deref().unwrap_or_else(|| no_entries())
    }

    /// Adds every value of `other`, replacing values of the same types.
    pub fn extend(&mut self, other: &Extensions) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = other.clone();
            return;
        }
        let map = Arc::make_mut(self.map.get_or_insert_with(Default::default));
        for (id, entry) in other.entries() {
            map.insert(*id, entry.clone());
        }
    }
}

/// The type names, sorted; never the values.
impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&str> = self.entries().values().map(|e| e.type_name).collect();
        names.sort_unstable();
        f.debug_set().entries(names).finish()
    }
}

impl PartialEq for Extensions {
    fn eq(&self, other: &Self) -> bool {
        let (mine, theirs) = (self.entries(), other.entries());
        std::ptr::eq(mine, theirs)
            || (mine.len() == theirs.len()
                && mine.iter().all(|(id, mine)| {
                    theirs
                        .get(id)
                        .is_some_and(|theirs| Arc::ptr_eq(&mine.value, &theirs.value))
                }))
    }
}

/// A value of type `T` from the run's [`Extensions`], as a `#[tool]` parameter receives it.
///
/// A parameter of type `Ext<T>` is injected (never shown to the model) with the value the
/// host attached to the run ([`RunOptions::extension`](crate::RunOptions::extension)); a
/// call made without one does not reach the body: its result is the error
/// [`MissingExtension`] describes. `Ext<T>` dereferences to `T`; its own field is private,
/// so `caller.0` on an `Ext<Caller>` reads `Caller`'s field.
#[derive(Debug)]
pub struct Ext<T: ?Sized>(Arc<T>);

impl<T: ?Sized> Ext<T> {
    /// The shared value, e.g. to keep it beyond the call.
    pub fn into_arc(self) -> Arc<T> {
        self.0
    }
}

/// For calling a tool fn directly, with a value of your own.
impl<T: ?Sized> From<Arc<T>> for Ext<T> {
    fn from(value: Arc<T>) -> Self {
        Ext(value)
    }
}

impl<T: ?Sized> Clone for Ext<T> {
    fn clone(&self) -> Self {
        Ext(self.0.clone())
    }
}

impl<T: ?Sized> Deref for Ext<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A tool needed a value of a type the run did not attach.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("needs a `{type_name}` extension: attach it to the run with `RunOptions::extension`")]
pub struct MissingExtension {
    type_name: &'static str,
}

impl MissingExtension {
    /// The error for a missing `T`.
    pub fn of<T: ?Sized + 'static>() -> Self {
        MissingExtension {
            type_name: std::any::type_name::<T>(),
        }
    }

    /// The full name of the missing type.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Token(&'static str);

    #[test]
    fn values_are_found_by_type_and_never_printed() {
        let ext = Extensions::new().with(Token("s3cr3t")).with(7_u32);
        assert_eq!(ext.get::<Token>().map(|t| t.0), Some("s3cr3t"));
        assert_eq!(ext.get::<u32>(), Some(&7));
        assert_eq!(ext.len(), 2);
        let shown = format!("{ext:?}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(shown.contains("Token") && shown.contains("u32"), "{shown}");
    }

    #[test]
    fn a_copy_shares_the_values_and_a_later_insert_does_not_leak_back() {
        let first = Extensions::new().with(1_u8);
        let mut second = first.clone();
        assert_eq!(first, second);
        second.insert(2_u8);
        assert_eq!(first.get::<u8>(), Some(&1));
        assert_eq!(second.get::<u8>(), Some(&2));
        assert_ne!(first, second);
    }

    #[test]
    fn extend_replaces_by_type() {
        let mut base = Extensions::new().with(1_u8).with("base");
        base.extend(&Extensions::new().with(2_u8));
        assert_eq!(base.get::<u8>(), Some(&2));
        assert_eq!(base.get::<&str>(), Some(&"base"));
    }

    #[test]
    fn a_missing_value_names_its_type() {
        let err = Extensions::new().require::<Token>().err().unwrap();
        assert_eq!(
            err.to_string(),
            "needs a `toolnexus::extensions::tests::Token` extension: attach it to the run \
             with `RunOptions::extension`"
        );
    }
}
