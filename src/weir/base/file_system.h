// Local file access: whole-file reads, atomic whole-file writes, directories.
//
// Errors carry the canonical code of the failure (NotFound, PermissionDenied,
// AlreadyExists, FailedPrecondition, ResourceExhausted, Internal...) and a
// message naming the path and the system's reason.
#pragma once

#include <string>
#include <string_view>

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

// True if something (file, directory...) exists at `path`.
bool FileExists(const std::string& path);

// Creates `path` and any missing parents. An existing directory is not an
// error; an existing non-directory in the way is FailedPrecondition.
Status RecursivelyCreateDir(const std::string& path);

// The Status for a failed system call: `error_number` (an errno value) mapped
// to its canonical code, the message "<what> '<path>': <strerror>".
Status IOError(std::string_view what, const std::string& path, int error_number);

}  // namespace weir
