//! Errors and exit codes.

use std::fmt;

/// Exit code: every history valid.
pub const EXIT_VALID: i32 = 0;
/// Exit code: some history invalid.
pub const EXIT_INVALID: i32 = 1;
/// Exit code: some history unknown, none invalid.
pub const EXIT_UNKNOWN: i32 = 2;
/// Exit code: bad input or usage.
pub const EXIT_BAD_INPUT: i32 = 3;
/// Exit code: an internal error (a bug in ellery) while checking some
/// history; the other histories were still checked. Takes precedence over
/// the other codes.
pub const EXIT_INTERNAL: i32 = 4;

/// A problem with an input file, pinned to a position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file (or `-` for standard input).
    pub file: String,
    /// 1-based line (0 for binary inputs, whose message names a byte
    /// offset).
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// What was expected there, and what was found.
    pub message: String,
    /// What kind of problem it is, for callers that react to one kind.
    pub kind: InputErrorKind,
}

/// The kinds of [`InputError`] a caller may want to tell apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InputErrorKind {
    /// Anything that makes the input unreadable or unfit for the checker.
    #[default]
    Invalid,
    /// A read value was written more than once to its key: Elle's
    /// rw-register inference cannot tell which write a read saw (the SAT
    /// checker can).
    RepeatedValues,
    /// The history belongs to another workload than the one asked for (the
    /// message says which): `ellery check` refuses it as bad input, elle-cli
    /// mode keeps Elle's `:unknown` verdict.
    WrongWorkload,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Messages quote the input; control characters (binary bytes, a
        // newline inside a quoted form) are escaped so that the error stays
        // one readable line.
        let message = printable(&self.message);
        if self.line == 0 {
            // Binary inputs have no lines; the message gives the byte offset.
            return write!(f, "{}: {}", self.file, message);
        }
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, message
        )
    }
}

impl std::error::Error for InputError {}

/// `s` with control characters escaped (`\n`, `\t`, `\r`, else `\xNN` or
/// `\u{NNNN}`), borrowed when there are none.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x100 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Why a check ([`crate::check()`]) gives no outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckError {
    /// The history is unfit for the checker: where, and what was expected.
    Input(InputError),
    /// The options do not apply to this history (e.g. `--algorithm lwt` on
    /// a transactional history), whatever it holds.
    Usage {
        /// The history's file (or `-`).
        file: String,
        /// What does not apply, and what would.
        message: String,
    },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Input(e) => e.fmt(f),
            CheckError::Usage { file, message } => write!(f, "{file}: {message}"),
        }
    }
}

impl std::error::Error for CheckError {}

impl CheckError {
    /// The input error, if that is what this is.
    pub fn into_input(self) -> Option<InputError> {
        match self {
            CheckError::Input(e) => Some(e),
            CheckError::Usage { .. } => None,
        }
    }
}

impl From<InputError> for CheckError {
    fn from(e: InputError) -> Self {
        CheckError::Input(e)
    }
}

/// Any error ellery reports instead of a verdict.
#[derive(Debug)]
pub enum Error {
    /// Malformed or unusable input.
    Input(InputError),
    /// A file could not be read or written.
    Io {
        /// The path involved.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Bad options (unknown model name, ...).
    Usage(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input(e) => e.fmt(f),
            Error::Io { path, source } => write!(f, "{path}: {source}"),
            Error::Usage(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

impl From<InputError> for Error {
    fn from(e: InputError) -> Self {
        Error::Input(e)
    }
}

/// Shorthand result type.
pub type Result<T> = std::result::Result<T, Error>;
