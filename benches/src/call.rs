//! The call every subject wraps: [`op`], returning at once, with the outcomes of a
//! [`Mix`].

/// The wrapped call's error: a plain `Copy` value, so no subject pays for building it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Boom;

impl std::fmt::Display for Boom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("boom")
    }
}

impl std::error::Error for Boom {}

/// Which outcomes the wrapped call produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mix {
    /// Every call returns `Ok`.
    AllOk,
    /// Every tenth call (call index ≡ 0 mod 10) returns `Err(Boom)`: 10% failures,
    /// far below the 50% that would open any of the breakers.
    TenPercentErr,
}

impl Mix {
    /// Both mixes, in the order the report lists them.
    pub const ALL: [Mix; 2] = [Mix::AllOk, Mix::TenPercentErr];

    /// The name used in benchmark ids: `all_ok` or `err10`.
    pub fn name(self) -> &'static str {
        match self {
            Mix::AllOk => "all_ok",
            Mix::TenPercentErr => "err10",
        }
    }
}

/// The wrapped call: returns at once, `Ok(i)` or (for [`Mix::TenPercentErr`], one call
/// in ten) `Err(Boom)`. Not inlined, so every subject pays for the same real call.
///
/// # Errors
///
/// `Boom` for every tenth call (`i % 10 == 0`) under [`Mix::TenPercentErr`].
#[inline(never)]
pub fn op(mix: Mix, i: u64) -> Result<u64, Boom> {
    if mix == Mix::TenPercentErr && i % 10 == 0 {
        Err(Boom)
    } else {
        Ok(i)
    }
}

/// The wrapped call as an `async fn`: ready on its first poll.
///
/// # Errors
///
/// As [`op`].
pub async fn op_async(mix: Mix, i: u64) -> Result<u64, Boom> {
    op(mix, i)
}
