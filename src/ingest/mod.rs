//! Documents as memories: recognising a document's format, extracting its text, and cutting
//! the text into chunks whose boundaries depend only on nearby content.
//!
//! Formats: Markdown, plain text, HTML (tags stripped by [`html::to_text`], headings kept as
//! Markdown headings) and PDF (text extracted page by page with `lopdf`). [`Format::detect`]
//! decides from the file name and the first bytes; [`extract`] turns the bytes into text;
//! [`chunk::chunks`] cuts the text into [`chunk::Chunk`]s named by their content, so that an
//! edit in the middle of a document renames only the chunks it touches.
//!
//! Like every library layer this module never prints, never reads the environment and never
//! touches the file system: the application layer reads the file (bounded) and passes its
//! bytes in.

pub mod chunk;
pub mod html;
mod pdf;

use serde::{Deserialize, Serialize};

pub use chunk::{chunks, slug, Chunk, MAX_CHUNK_BYTES, MIN_CHUNK_BYTES};

/// Most bytes of a document read from disk, and most bytes of text extracted from one.
pub const MAX_DOCUMENT_BYTES: usize = 64 << 20;

/// Why a document could not be read as text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IngestError {
    /// The bytes hold binary data and the name names no format that reads binary.
    #[error(
        "{name} is not a supported document: it holds binary data and is not a PDF (supported: {})",
        Format::names()
    )]
    Unsupported {
        /// The file name, as given.
        name: String,
    },
    /// A text format whose bytes are not UTF-8 text.
    #[error(
        "{name} is not UTF-8 text ({why}); supported formats: {}",
        Format::names()
    )]
    NotText {
        /// The file name.
        name: String,
        /// What was found.
        why: String,
    },
    /// A PDF that could not be read.
    #[error("cannot read the PDF {name}: {why}")]
    BadPdf {
        /// The file name.
        name: String,
        /// What the PDF reader said.
        why: String,
    },
    /// The extracted text is longer than [`MAX_DOCUMENT_BYTES`].
    #[error("the text extracted from {name} is longer than {} MiB, the most memoir keeps of one document", MAX_DOCUMENT_BYTES >> 20)]
    TooLong {
        /// The file name.
        name: String,
    },
    /// The document holds no text at all.
    #[error("{name} holds no text to remember")]
    Empty {
        /// The file name.
        name: String,
    },
}

/// A document format memoir reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Markdown: chunks break before headings and keep fenced code blocks whole.
    Markdown,
    /// Plain UTF-8 text: chunks break at blank lines.
    Text,
    /// HTML: tags, scripts and styles stripped, entities decoded, headings kept.
    Html,
    /// PDF: the text of each page, pages separated like paragraphs.
    Pdf,
}

/// One row of [`Format::all`]: a format, the file name endings that select it, and what is
/// done with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FormatInfo {
    /// The format.
    pub name: Format,
    /// File name endings (lower case, without the dot) that select it.
    pub extensions: &'static [&'static str],
    /// What memoir does with it, in one line.
    pub description: &'static str,
}

const FORMATS: [FormatInfo; 4] = [
    FormatInfo {
        name: Format::Markdown,
        extensions: &["md", "markdown", "mdown", "mkd"],
        description: "chunks break before headings (#, ##, ###) and at paragraph ends; fenced code blocks stay whole",
    },
    FormatInfo {
        name: Format::Text,
        extensions: &["txt", "text"],
        description: "UTF-8 text; chunks break at blank lines. Any other name whose bytes are UTF-8 text without NUL bytes is read as text too",
    },
    FormatInfo {
        name: Format::Html,
        extensions: &["html", "htm", "xhtml"],
        description: "tags, comments, scripts and styles removed, entities decoded; headings become chunk boundaries",
    },
    FormatInfo {
        name: Format::Pdf,
        extensions: &["pdf"],
        description: "the text of every page (fonts with a text encoding); a file starting with %PDF- is read as PDF whatever its name",
    },
];

impl Format {
    /// Every format, with its file name endings.
    pub fn all() -> &'static [FormatInfo] {
        &FORMATS
    }

    /// `markdown`, `text`, `html` or `pdf`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Markdown => "markdown",
            Format::Text => "text",
            Format::Html => "html",
            Format::Pdf => "pdf",
        }
    }

    /// Parses [`Format::as_str`].
    pub fn parse(s: &str) -> Option<Format> {
        FORMATS.iter().map(|f| f.name).find(|f| f.as_str() == s)
    }

    /// `markdown, text, html, pdf`.
    fn names() -> String {
        FORMATS
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The format of a document named `name` (a file name; only its ending is looked at)
    /// holding `bytes`: a PDF by its `%PDF-` header or its name, else the format its name
    /// ends with, else text when the bytes are text. Binary data under any other name is
    /// [`IngestError::Unsupported`].
    pub fn detect(name: &str, bytes: &[u8]) -> Result<Format, IngestError> {
        if bytes.starts_with(b"%PDF-") {
            return Ok(Format::Pdf);
        }
        let ext = name
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        if let Some(f) = FORMATS
            .iter()
            .find(|f| f.extensions.contains(&ext.as_str()))
        {
            return Ok(f.name);
        }
        if binary(bytes) {
            return Err(IngestError::Unsupported {
                name: name.to_string(),
            });
        }
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]).to_ascii_lowercase();
        let head = head.trim_start_matches('\u{feff}').trim_start();
        if head.starts_with("<!doctype html") || head.starts_with("<html") {
            return Ok(Format::Html);
        }
        Ok(Format::Text)
    }
}

/// Whether `bytes` look like binary data: a NUL byte, or not UTF-8.
fn binary(bytes: &[u8]) -> bool {
    bytes.contains(&0) || std::str::from_utf8(bytes).is_err()
}

/// The text of a document of format `format` named `name`: line ends normalised to `\n`,
/// a byte order mark dropped. Text formats must be UTF-8 without NUL bytes; the text
/// extracted is at most [`MAX_DOCUMENT_BYTES`] and not blank.
pub fn extract(format: Format, name: &str, bytes: &[u8]) -> Result<String, IngestError> {
    let text = match format {
        Format::Pdf => {
            if !bytes.starts_with(b"%PDF-") {
                return Err(IngestError::BadPdf {
                    name: name.to_string(),
                    why: "it does not start with %PDF-".into(),
                });
            }
            pdf::text(bytes, MAX_DOCUMENT_BYTES).map_err(|why| match why {
                pdf::PdfFault::TooLong => IngestError::TooLong {
                    name: name.to_string(),
                },
                pdf::PdfFault::Unreadable(why) => IngestError::BadPdf {
                    name: name.to_string(),
                    why,
                },
            })?
        }
        Format::Markdown | Format::Text | Format::Html => {
            let text = utf8(name, bytes)?;
            if format == Format::Html {
                html::to_text(text)
            } else {
                text.to_string()
            }
        }
    };
    let text = normalise(&text);
    if text.len() > MAX_DOCUMENT_BYTES {
        return Err(IngestError::TooLong {
            name: name.to_string(),
        });
    }
    if text.trim().is_empty() {
        return Err(IngestError::Empty {
            name: name.to_string(),
        });
    }
    Ok(text)
}

/// `bytes` as UTF-8 text without NUL bytes.
fn utf8<'a>(name: &str, bytes: &'a [u8]) -> Result<&'a str, IngestError> {
    let not_text = |why: String| IngestError::NotText {
        name: name.to_string(),
        why,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        not_text(format!(
            "invalid UTF-8 at byte {}; it may be binary",
            e.valid_up_to()
        ))
    })?;
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(not_text(format!("a NUL byte at byte {at}; it is binary")));
    }
    Ok(text)
}

/// Line ends as `\n`, no byte order mark, no trailing whitespace on lines.
fn normalise(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = String::with_capacity(text.len());
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_detected_by_name_and_content() {
        assert_eq!(Format::detect("a.MD", b"# x").unwrap(), Format::Markdown);
        assert_eq!(Format::detect("a.txt", b"x").unwrap(), Format::Text);
        assert_eq!(Format::detect("a.htm", b"x").unwrap(), Format::Html);
        assert_eq!(Format::detect("a.bin", b"%PDF-1.4").unwrap(), Format::Pdf);
        assert_eq!(Format::detect("notes", b"plain").unwrap(), Format::Text);
        assert_eq!(
            Format::detect("page", b"<!DOCTYPE html><p>x").unwrap(),
            Format::Html
        );
        assert!(matches!(
            Format::detect("a.png", b"\x89PNG\r\n\x1a\n\0\0"),
            Err(IngestError::Unsupported { .. })
        ));
        assert_eq!(Format::parse("pdf"), Some(Format::Pdf));
    }

    #[test]
    fn text_is_checked_and_normalised() {
        let t = extract(Format::Text, "a.txt", b"\xef\xbb\xbfone  \r\ntwo\r\n\r\n").unwrap();
        assert_eq!(t, "one\ntwo");
        let e = extract(Format::Text, "a.txt", b"a\0b").unwrap_err();
        assert!(e.to_string().contains("NUL"), "{e}");
        let e = extract(Format::Markdown, "a.md", b"\xff\xfe").unwrap_err();
        assert!(e.to_string().contains("UTF-8"), "{e}");
        let e = extract(Format::Text, "a.txt", b" \n\n ").unwrap_err();
        assert_eq!(
            e,
            IngestError::Empty {
                name: "a.txt".into()
            }
        );
        let e = extract(Format::Pdf, "a.pdf", b"hello").unwrap_err();
        assert!(e.to_string().contains("%PDF-"), "{e}");
    }
}
