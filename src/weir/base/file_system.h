// Local file access: whole-file reads, atomic whole-file writes, streamed
// writes and positioned reads for large files, renames, directories.
//
// Errors carry the canonical code of the failure (NotFound, PermissionDenied,
// AlreadyExists, FailedPrecondition, ResourceExhausted, Internal...) and a
// message naming the path and the system's reason.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weir/base/status.h"

namespace weir {

// The whole contents of the file at `path`.
StatusOr<std::string> ReadFileToString(const std::string& path);

// Replaces the file at `path` with `contents` so that readers, and the file
// system after a crash, see either the old file or the complete new one,
// never a mix. Writes a temporary file in the same directory, syncs it,
// renames it over `path` and syncs the directory. On failure the temporary
// file is removed and `path` is left as it was.
Status WriteStringToFileAtomic(const std::string& path, std::string_view contents);

// A new file written front to back through a buffer, for outputs too large
// to build in memory. Nothing is known to be on disk until Close() succeeds.
class WritableFile {
 public:
  // Creates an empty file beside `target` under a name no other writer uses
  // ("<target>.tmp.<pid>.<n>"), to be written and then renamed over
  // `target`, so that readers never see a partial `target`.
  static StatusOr<std::unique_ptr<WritableFile>> CreateTemp(const std::string& target);
  // Creates (or truncates) the file at `path` itself, for files that readers
  // follow as they grow (event files): what Flush() wrote is readable. With
  // `exclusive`, an existing file is AlreadyExists instead (O_EXCL).
  static StatusOr<std::unique_ptr<WritableFile>> Create(const std::string& path,
                                                        bool exclusive = false);
  // Closes the file if Close() was not called; it stays on disk, unsynced.
  ~WritableFile();
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;

  // REQUIRES: Close() not called.
  Status Append(std::string_view data);
  // Hands what is buffered to the file system (no sync): other readers of
  // the file see it. REQUIRES: Close() not called.
  Status Flush();
  // Writes what is buffered, syncs the file to disk and closes it. Call once.
  Status Close();

  const std::string& path() const { return path_; }

 private:
  WritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  std::string path_;
  int fd_;
  std::string buffer_;
};

// A file read at arbitrary offsets. Read may be called concurrently.
class RandomAccessFile {
 public:
  static StatusOr<std::unique_ptr<RandomAccessFile>> Open(const std::string& path);
  ~RandomAccessFile();
  RandomAccessFile(const RandomAccessFile&) = delete;
  RandomAccessFile& operator=(const RandomAccessFile&) = delete;

  // The size of the file when it was opened.
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Reads exactly `n` bytes at `offset` into `out`. OutOfRange naming the
  // path, the offset and the size when the file ends first.
  Status Read(uint64_t offset, size_t n, char* out) const;

 private:
  RandomAccessFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}

  std::string path_;
  int fd_;
  uint64_t size_;
};

// A file read front to back. Not thread-safe.
class SequentialFile {
 public:
  static StatusOr<std::unique_ptr<SequentialFile>> Open(const std::string& path);
  ~SequentialFile();
  SequentialFile(const SequentialFile&) = delete;
  SequentialFile& operator=(const SequentialFile&) = delete;

  // The size of the file when it was opened.
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Reads up to `n` bytes into `out`: fewer only at the end of the file (0
  // there). One read(2) per call unless the system returns less.
  StatusOr<size_t> Read(char* out, size_t n);

 private:
  SequentialFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}

  std::string path_;
  int fd_;
  uint64_t size_;
};

// The paths matching a glob `pattern` ('*', '?', '[...]' and '\' escapes
// within one path component, as fnmatch(3) without FNM_PERIOD), sorted. No
// match, or a directory that does not exist, is an empty list, not an error.
StatusOr<std::vector<std::string>> GetMatchingPaths(const std::string& pattern);

// Atomically replaces `to` with `from` (rename(2); both on one file system).
Status RenameFile(const std::string& from, const std::string& to);

// Removes the file at `path`; NotFound if there is none.
Status DeleteFile(const std::string& path);

// Makes the directory entries of the directory holding `path` (renames,
// creations) durable; a rename has only happened after a crash once they are.
Status SyncParentDirectory(const std::string& path);

// True if something (file, directory...) exists at `path`.
bool FileExists(const std::string& path);

// Creates `path` and any missing parents. An existing directory is not an
// error; an existing non-directory in the way is FailedPrecondition.
Status RecursivelyCreateDir(const std::string& path);

// The Status for a failed system call: `error_number` (an errno value) mapped
// to its canonical code, the message "<what> '<path>': <strerror>".
Status IOError(std::string_view what, const std::string& path, int error_number);

}  // namespace weir
