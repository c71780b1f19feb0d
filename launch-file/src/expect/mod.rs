//! Expectations: what a launch's final buffers must satisfy, written in a launch file's
//! `expect: [...]` section or with `--expect EXPR` flags.
//!
//! The language is small and has no Rust in it:
//! - a buffer equal to values or to another buffer: `out == [1, 2, 3]`, `out == a`;
//! - expressions over elements: `sum(out) == 8256`, `out[i] == 2*a[i]`, `out[0] <= max(a)`;
//!   an identifier that is not a buffer is an index variable: it ranges over the indices of the
//!   buffers it indexes, and every value of it must satisfy the expectation;
//! - comparisons `== != < <= > >=`, arithmetic `+ - * / %`, `&& || !`, parentheses;
//! - functions `sum(b)`, `len(b)`, `min(b)`, `max(b)` over a buffer, `min(x, y)`, `max(x, y)`,
//!   `abs(x)` over numbers;
//! - integer (`42`, `0x2a`) and float (`2.5`, `1e-3`) literals.
//!
//! Values are typed by the buffer's element type: an element of a `u32` buffer is unsigned, of
//! an `f32` buffer a single-precision float. Integer arithmetic is exact (128 bits, division
//! truncates toward zero as in C); arithmetic with a float is done in the float's precision, and
//! a float literal takes the precision of the float it meets (`out[0] == 0.1` on an `f32` buffer
//! compares with 0.1 rounded to single precision). Float sums are accumulated in double
//! precision.
//!
//! Three steps: [`Expectation::parse`] (syntax, with the offset of an error),
//! [`Expectation::bind`] (names against the launch's buffers, kinds of every subexpression), and
//! [`Bound::check`] (evaluation over final buffers, the first violating element and its values).

mod bind;
mod eval;
mod lexer;
mod parser;
mod syntax;

use crate::Elem;
use std::fmt;
use syntax::Expr;

/// An expectation as written, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    /// The text as written.
    pub text: String,
    expr: Expr,
}

/// A syntax or binding error: what is wrong, at which character of the expectation's text, and
/// what to do.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectError {
    pub message: String,
    /// 0-based character offset into the expectation's text.
    pub at: usize,
    pub help: String,
}

/// An expectation bound to the launch's buffers, ready to check.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// The text as written.
    pub text: String,
    expr: Expr,
    /// The launch's buffers the expectation reads (indices into the launch's buffer list), with
    /// their names and element types.
    pub buffers: Vec<(usize, String, Elem)>,
    /// Index variables with the length of the buffers they range over.
    vars: Vec<(String, u64)>,
}

/// A violated expectation: the expectation and where it fails, with the values involved.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub expectation: String,
    /// The index variables' values at the first failing point (`i = 3`), empty without any.
    pub at: Vec<(String, u64)>,
    /// The values read at that point, in order: `out[3] = 5`, `sum(out) = 8200`.
    pub values: Vec<(String, String)>,
    /// Why it fails, when it is not simply false: an index out of range, a division by zero.
    pub error: Option<String>,
}

impl fmt::Display for Violation {
    /// `out[i] == 2*a[i] fails at i = 3: out[3] = 5, a[3] = 3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` fails", self.expectation)?;
        if !self.at.is_empty() {
            let at: Vec<String> = self.at.iter().map(|(n, v)| format!("{n} = {v}")).collect();
            write!(f, " at {}", at.join(", "))?;
        }
        if let Some(e) = &self.error {
            write!(f, ": {e}")?;
        }
        if !self.values.is_empty() {
            let values: Vec<String> = self
                .values
                .iter()
                .map(|(n, v)| format!("{n} = {v}"))
                .collect();
            write!(
                f,
                "{}{}",
                if self.error.is_some() { "; " } else { ": " },
                values.join(", ")
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
