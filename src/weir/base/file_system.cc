#include "weir/base/file_system.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace weir {
namespace {

Code CodeForErrno(int error_number) {
  switch (error_number) {
    case ENOENT:
      return Code::kNotFound;
    case EACCES:
    case EPERM:
    case EROFS:
      return Code::kPermissionDenied;
    case EEXIST:
      return Code::kAlreadyExists;
    case EISDIR:
    case ENOTDIR:
    case ENOTEMPTY:
    case ELOOP:
    case ENAMETOOLONG:
    case EXDEV:
      return Code::kFailedPrecondition;
    case ENOSPC:
    case EDQUOT:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
      return Code::kResourceExhausted;
    case EINVAL:
      return Code::kInvalidArgument;
    default:
      return Code::kInternal;
  }
}

// Closes the descriptor on every path out of a function.
class FileCloser {
 public:
  explicit FileCloser(int fd) : fd_(fd) {}
  ~FileCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileCloser(const FileCloser&) = delete;
  FileCloser& operator=(const FileCloser&) = delete;
  // Closes now, reporting the error that close() may be the first to see
  // (delayed write-back failures on some file systems).
  int Close() {
    int result = ::close(fd_);
    fd_ = -1;
    return result;
  }

 private:
  int fd_;
};

Status WriteAll(int fd, std::string_view contents, const std::string& path) {
  while (!contents.empty()) {
    ssize_t n = ::write(fd, contents.data(), contents.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return IOError("could not write", path, errno);
    }
    contents.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// The rename has only reached the disk once the directory entry has.
Status SyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IOError("could not open directory", dir, errno);
  FileCloser closer(fd);
  if (::fsync(fd) != 0) return IOError("could not sync directory", dir, errno);
  return Status::OK();
}

// Writes, syncs and closes the temporary file; the caller renames or removes
// it.
Status WriteTemp(const std::string& temp, std::string_view contents, int fd) {
  FileCloser closer(fd);
  WEIR_RETURN_IF_ERROR(WriteAll(fd, contents, temp));
  if (::fsync(fd) != 0) return IOError("could not sync", temp, errno);
  if (closer.Close() != 0) return IOError("could not close", temp, errno);
  return Status::OK();
}

}  // namespace

Status IOError(std::string_view what, const std::string& path, int error_number) {
  return Status(CodeForErrno(error_number),
                StrCat(what, " '", path, "': ", std::strerror(error_number)));
}

StatusOr<std::string> ReadFileToString(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IOError("could not open", path, errno);
  FileCloser closer(fd);
  struct stat info;
  if (::fstat(fd, &info) != 0) return IOError("could not stat", path, errno);
  if (S_ISDIR(info.st_mode)) return IOError("could not read", path, EISDIR);

  std::string contents;
  // The size is a hint only: the file may change, and pipes or /proc files
  // report 0, so read until end of file.
  contents.reserve(static_cast<size_t>(info.st_size > 0 ? info.st_size : 0));
  char chunk[64 * 1024];
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      return IOError("could not read", path, errno);
    }
    if (n == 0) break;
    contents.append(chunk, static_cast<size_t>(n));
  }
  return contents;
}

Status WriteStringToFileAtomic(const std::string& path, std::string_view contents) {
  // A name unique among concurrent writers in this process (the counter) and
  // in others (the pid). O_EXCL guards against leftovers of a crashed run.
  static std::atomic<uint64_t> counter{0};
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = StrCat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
    // Mode 0666 lets the umask decide, as for any newly created file.
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) return IOError("could not create", temp, errno);
  }
  if (fd < 0) {
    return errors::AlreadyExists("could not find an unused temporary name for '", path, "'");
  }

  Status status = WriteTemp(temp, contents, fd);
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    status = IOError(StrCat("could not rename '", temp, "' to"), path, errno);
  }
  if (!status.ok()) {
    ::unlink(temp.c_str());
    return status;
  }
  return SyncDirectory(DirectoryOf(path));
}

bool FileExists(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

Status RecursivelyCreateDir(const std::string& path) {
  if (path.empty()) {
    return errors::InvalidArgument("cannot create a directory with an empty path");
  }
  // Create each prefix ending before a '/', then the whole path.
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    std::string prefix = path.substr(0, end);
    if (::mkdir(prefix.c_str(), 0777) != 0) {
      int error_number = errno;
      struct stat info;
      if (::stat(prefix.c_str(), &info) != 0) {
        return IOError("could not create directory", prefix, error_number);
      }
      if (!S_ISDIR(info.st_mode)) {
        return errors::FailedPrecondition("could not create directory '", path, "': '", prefix,
                                          "' exists and is not a directory");
      }
    }
    if (end == std::string::npos) break;
  }
  return Status::OK();
}

}  // namespace weir
