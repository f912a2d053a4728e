//! The [`Transport`] over a local directory: each object a file at its name. A file is
//! written whole to a temporary name beside it, synced, and renamed (or, to create it only
//! if absent, hard-linked) into place, so a reader sees all of it or nothing, and a crash
//! leaves at most a temporary file, which listings skip. Files are opened without waiting
//! (a FIFO or device is refused, never read), and read only up to the size asked.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::ops::Range;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::transport::{Entry, Got, Transport, TransportError};
use crate::store::files::{is_temp_name, sync_dir, temp_path, write_atomically};

/// A remote in a local directory.
pub struct Directory {
    dir: PathBuf,
    url: String,
}

impl Directory {
    /// The remote in `dir` (created when `create`).
    pub fn open(dir: PathBuf, create: bool) -> Result<Directory, TransportError> {
        let url = format!("file://{}", dir.display());
        let fail = |message: String| TransportError {
            op: "open",
            name: String::new(),
            remote: url.clone(),
            message,
        };
        if create {
            std::fs::create_dir_all(&dir)
                .map_err(|e| fail(format!("cannot create the directory: {e}")))?;
        } else if !dir.is_dir() {
            return Err(fail("no such directory".into()));
        }
        Ok(Directory { dir, url })
    }

    fn error(&self, op: &'static str, name: &str, message: impl ToString) -> TransportError {
        TransportError {
            op,
            name: name.to_string(),
            remote: self.url.clone(),
            message: message.to_string(),
        }
    }

    /// The file of object `name` (relative, `/`-separated, no empty, `.` or `..` part).
    fn path(&self, op: &'static str, name: &str) -> Result<PathBuf, TransportError> {
        let name = name.trim_end_matches('/');
        if name.is_empty()
            || name
                .split('/')
                .any(|p| p.is_empty() || p == "." || p == "..")
        {
            return Err(self.error(op, name, "not an object name"));
        }
        Ok(self.dir.join(name))
    }

    /// Opens `name` for reading: `None` when there is no such file; an error when it is not
    /// a regular file (opened without blocking, so a FIFO does not wait for a writer).
    fn open_file(&self, name: &str) -> Result<Option<(File, u64)>, TransportError> {
        let path = self.path("get", name)?;
        let file = match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) if e.kind() == ErrorKind::IsADirectory => return Ok(None),
            Err(e) => return Err(self.error("get", name, e)),
        };
        let meta = file.metadata().map_err(|e| self.error("get", name, e))?;
        if meta.is_dir() {
            return Ok(None);
        }
        if !meta.is_file() {
            return Err(self.error("get", name, "not a regular file"));
        }
        Ok(Some((file, meta.len())))
    }

    /// Adds the files under `dir` (whose names start with `rel`) to `out`; directories that
    /// are symbolic links are not followed.
    fn walk(&self, dir: &Path, rel: &str, out: &mut Vec<Entry>) -> Result<(), TransportError> {
        let read = match std::fs::read_dir(dir) {
            Ok(r) => r,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(self.error("list", rel, e)),
        };
        for item in read {
            let item = item.map_err(|e| self.error("list", rel, e))?;
            let Some(file_name) = item.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let name = format!("{rel}{file_name}");
            let kind = item.file_type().map_err(|e| self.error("list", &name, e))?;
            if kind.is_dir() {
                self.walk(&item.path(), &format!("{name}/"), out)?;
                continue;
            }
            if is_temp_name(&file_name) {
                continue;
            }
            let Ok(meta) = std::fs::metadata(item.path()) else {
                continue;
            };
            if meta.is_file() {
                let modified = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_secs() as i64);
                out.push(Entry {
                    name,
                    size: meta.len(),
                    modified,
                });
            }
        }
        Ok(())
    }
}

impl Transport for Directory {
    fn url(&self) -> String {
        self.url.clone()
    }

    fn get(&self, name: &str, limit: u64) -> Result<Got, TransportError> {
        let Some((file, len)) = self.open_file(name)? else {
            return Ok(Got::Missing);
        };
        if len > limit {
            return Ok(Got::TooLarge(len));
        }
        let mut out = Vec::with_capacity(len as usize);
        file.take(limit + 1)
            .read_to_end(&mut out)
            .map_err(|e| self.error("get", name, e))?;
        if out.len() as u64 > limit {
            return Ok(Got::TooLarge(out.len() as u64));
        }
        Ok(Got::Bytes(out))
    }

    fn get_ranges(
        &self,
        name: &str,
        ranges: &[Range<u64>],
    ) -> Result<Vec<Vec<u8>>, TransportError> {
        let Some((file, len)) = self.open_file(name)? else {
            return Err(self.error("get", name, "no such object"));
        };
        ranges
            .iter()
            .map(|r| {
                if r.end > len || r.start > r.end {
                    return Err(self.error(
                        "get",
                        name,
                        "the object is shorter than the range asked",
                    ));
                }
                let mut buf = vec![0; (r.end - r.start) as usize];
                file.read_exact_at(&mut buf, r.start)
                    .map_err(|e| self.error("get", name, e))?;
                Ok(buf)
            })
            .collect()
    }

    fn put(&self, name: &str, bytes: Vec<u8>) -> Result<(), TransportError> {
        let path = self.path("put", name)?;
        write_atomically(&path, &bytes).map_err(|e| self.error("put", name, e))
    }

    fn put_new(&self, name: &str, bytes: Vec<u8>) -> Result<bool, TransportError> {
        let path = self.path("put", name)?;
        let fail = |e: std::io::Error| self.error("put", name, e);
        let parent = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(parent).map_err(fail)?;
        let temp = temp_path(&path);
        let written = (|| {
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
            std::fs::hard_link(&temp, &path)
        })();
        let _ = std::fs::remove_file(&temp);
        match written {
            Ok(()) => {
                sync_dir(parent).map_err(|e| self.error("put", name, e))?;
                Ok(true)
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(fail(e)),
        }
    }

    fn list(&self, prefix: &str) -> Result<Vec<Entry>, TransportError> {
        // Walk from the deepest directory the prefix names.
        let (rel, start) = match prefix.rfind('/') {
            Some(at) => (&prefix[..=at], self.path("list", &prefix[..at])?),
            None => ("", self.dir.clone()),
        };
        let mut out = Vec::new();
        self.walk(&start, rel, &mut out)?;
        out.retain(|e| e.name.starts_with(prefix));
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn delete(&self, name: &str) -> Result<(), TransportError> {
        let path = self.path("delete", name)?;
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(self.error("delete", name, e)),
        }
        // Directories left empty go too, as a bucket has no empty prefixes.
        let mut dir = path.parent();
        while let Some(d) = dir.filter(|d| *d != self.dir && d.starts_with(&self.dir)) {
            if std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch() -> (tempfile::TempDir, Directory) {
        let t = tempfile::tempdir().expect("tempdir");
        let d = Directory::open(t.path().join("remote"), true).expect("opens");
        (t, d)
    }

    #[test]
    fn writes_read_back_and_list_by_prefix() {
        let (_t, d) = scratch();
        d.put("refs/main/1", b"one".to_vec()).expect("put");
        assert!(d.put_new("packs/a.pack", b"abcdef".to_vec()).expect("new"));
        assert!(!d
            .put_new("packs/a.pack", b"other".to_vec())
            .expect("exists"));
        assert_eq!(
            d.get("packs/a.pack", 100).expect("get"),
            Got::Bytes(b"abcdef".to_vec())
        );
        assert_eq!(d.get("packs/a.pack", 3).expect("get"), Got::TooLarge(6));
        assert_eq!(d.get("packs/none", 3).expect("get"), Got::Missing);
        assert_eq!(d.get("packs", 3).expect("get"), Got::Missing);
        assert_eq!(
            d.get_ranges("packs/a.pack", &[1..3, 4..6, 2..2])
                .expect("ranges"),
            vec![b"bc".to_vec(), b"ef".to_vec(), vec![]]
        );
        let past_the_end = [4..7, 0..1];
        assert!(d.get_ranges("packs/a.pack", &past_the_end).is_err());
        let names = |p: &str| -> Vec<String> {
            d.list(p)
                .expect("list")
                .into_iter()
                .map(|e| e.name)
                .collect()
        };
        assert_eq!(names(""), ["packs/a.pack", "refs/main/1"]);
        assert_eq!(names("packs/"), ["packs/a.pack"]);
        assert_eq!(names("refs/ma"), ["refs/main/1"]);
        assert_eq!(names("nothing/"), Vec::<String>::new());
        assert_eq!(d.list("packs/").expect("list")[0].size, 6);
        d.delete("refs/main/1").expect("delete");
        d.delete("refs/main/1").expect("delete again");
        assert!(!d.dir.join("refs").exists(), "empty directories go");
        assert!(d.get("../x", 1).is_err());
        assert!(d.put("a//b", vec![]).is_err());
    }

    #[test]
    fn temporary_files_are_not_listed() {
        let (_t, d) = scratch();
        d.put("packs/b.pack", b"x".to_vec()).expect("put");
        std::fs::write(d.dir.join("packs/b.pack.tmp.12.3"), b"torn").expect("write");
        let listed: Vec<String> = d
            .list("")
            .expect("list")
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(listed, ["packs/b.pack"]);
        assert!(is_temp_name("x.tmp.1.2"));
        assert!(!is_temp_name("x.tmp.1."));
        assert!(!is_temp_name("tmp.1.2"));
        assert!(!is_temp_name("x.pack"));
    }
}
