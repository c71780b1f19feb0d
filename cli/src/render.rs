//! Rendering of parser and loader diagnostics as `file:line:col` with the source line and a caret
//! (codespan-reporting).
