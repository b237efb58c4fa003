//! The rows the store reads, by column name, as `#[derive(sqlx::FromRow)]` would read them.
//!
//! The derive is not used: it lives in sqlx's macros crate, which builds both engines (and
//! SQLite's C code) a second time, for the compiler's host, to serve compile-time checked
//! queries the inbox has none of. A user's first build of the inbox, and every build here,
//! would pay for that copy.

/// A struct whose fields are a query's columns of the same names, and its
/// `FromRow<AnyRow>`: each field is read with `Row::try_get`, so a missing column or a
/// value of another type is sqlx's own error, as with the derive.
macro_rules! row {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident: $ty:ty),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $($(#[$field_meta])* $field_vis $field: $ty),*
        }

        impl<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> for $name {
            fn from_row(row: &'r sqlx::any::AnyRow) -> Result<Self, sqlx::Error> {
                use sqlx::Row as _;
                Ok(Self {
                    $($field: row.try_get(stringify!($field))?),*
                })
            }
        }
    };
}

pub(crate) use row;
