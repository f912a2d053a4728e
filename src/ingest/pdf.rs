//! The text of a PDF, page by page, with `lopdf`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use lopdf::Document;

/// Why no text came out of a PDF.
#[derive(Debug)]
pub(super) enum PdfFault {
    /// The text is longer than the limit.
    TooLong,
    /// The PDF could not be parsed, or none of its pages could be read.
    Unreadable(String),
}

/// Most bytes one page's content streams may decompress to.
const MAX_PAGE_CONTENT_BYTES: usize = 64 << 20;

/// The text of every page of the PDF in `bytes`, pages separated by a blank line, at most
/// `limit` bytes. A page whose text cannot be read is left out; a PDF none of whose pages
/// can be read, that cannot be parsed, or that makes the reader fail, is an error.
pub(super) fn text(bytes: &[u8], limit: usize) -> Result<String, PdfFault> {
    // A malformed file must be an error, not a crash of the caller.
    match catch_unwind(AssertUnwindSafe(|| read(bytes, limit))) {
        Ok(r) => r,
        Err(_) => Err(PdfFault::Unreadable(
            "the PDF reader failed on this file".into(),
        )),
    }
}

fn read(bytes: &[u8], limit: usize) -> Result<String, PdfFault> {
    let doc = Document::load_mem(bytes).map_err(|e| PdfFault::Unreadable(e.to_string()))?;
    if doc.is_encrypted() {
        return Err(PdfFault::Unreadable("it is encrypted".into()));
    }
    let pages: Vec<u32> = doc.get_pages().keys().copied().collect();
    if pages.is_empty() {
        return Err(PdfFault::Unreadable("it has no pages".into()));
    }
    let mut out = String::new();
    let mut read_any = false;
    let mut first_error = None;
    for n in pages {
        let mut page = String::new();
        for piece in doc.extract_text_chunks_with_limit(&[n], MAX_PAGE_CONTENT_BYTES) {
            match piece {
                Ok(t) => {
                    read_any = true;
                    page.push_str(&t);
                }
                Err(e) => {
                    first_error.get_or_insert_with(|| format!("page {n}: {e}"));
                }
            }
        }
        let page = page.trim();
        if page.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(page);
        if out.len() > limit {
            return Err(PdfFault::TooLong);
        }
    }
    if !read_any {
        return Err(PdfFault::Unreadable(first_error.unwrap_or_else(|| {
            "no page holds text memoir can read (scanned images need OCR first)".into()
        })));
    }
    Ok(out)
}
