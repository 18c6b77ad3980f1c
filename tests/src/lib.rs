//! Integration tests of the workspace live in `tests/`.
