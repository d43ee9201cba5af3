#include "weir/base/file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "weir/base/logging.h"

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
  int fd() const { return fd_; }
  // Hands the descriptor to the caller, who closes it.
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
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
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, WritableFile::CreateTemp(path));
  Status status = file->Append(contents);
  status.Update(file->Close());
  if (status.ok()) status = RenameFile(file->path(), path);
  if (!status.ok()) {
    ::unlink(file->path().c_str());
    return status;
  }
  return SyncParentDirectory(path);
}

StatusOr<std::unique_ptr<WritableFile>> WritableFile::CreateTemp(const std::string& target) {
  // A name unique among concurrent writers in this process (the counter) and
  // in others (the pid). O_EXCL guards against leftovers of a crashed run.
  static std::atomic<uint64_t> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string temp = StrCat(target, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
    // Mode 0666 lets the umask decide, as for any newly created file.
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return std::unique_ptr<WritableFile>(new WritableFile(std::move(temp), fd));
    if (errno != EEXIST) return IOError("could not create", temp, errno);
  }
  return errors::AlreadyExists("could not find an unused temporary name for '", target, "'");
}

StatusOr<std::unique_ptr<WritableFile>> WritableFile::Create(const std::string& path,
                                                             bool exclusive) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC);
  int fd = ::open(path.c_str(), flags, 0666);
  if (fd < 0) return IOError("could not create", path, errno);
  return std::unique_ptr<WritableFile>(new WritableFile(path, fd));
}

WritableFile::~WritableFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status WritableFile::Append(std::string_view data) {
  DCHECK(fd_ >= 0) << "Append after Close of " << path_;
  // Small pieces gather in the buffer; large ones go straight to the file.
  constexpr size_t kBufferSize = 256 * 1024;
  if (buffer_.size() + data.size() > kBufferSize) WEIR_RETURN_IF_ERROR(Flush());
  if (data.size() >= kBufferSize) return WriteAll(fd_, data, path_);
  buffer_.append(data);
  return Status::OK();
}

Status WritableFile::Flush() {
  DCHECK(fd_ >= 0) << "Flush after Close of " << path_;
  Status status = WriteAll(fd_, buffer_, path_);
  buffer_.clear();
  return status;
}

Status WritableFile::Close() {
  DCHECK(fd_ >= 0) << "second Close of " << path_;
  Status flushed = Flush();
  FileCloser closer(fd_);
  fd_ = -1;
  WEIR_RETURN_IF_ERROR(flushed);
  if (::fsync(closer.fd()) != 0) return IOError("could not sync", path_, errno);
  if (closer.Close() != 0) return IOError("could not close", path_, errno);
  return Status::OK();
}

namespace {

// Opens a regular file (not a directory) for reading; returns its
// descriptor, owned by the caller, and sets `size`.
StatusOr<int> OpenForReading(const std::string& path, uint64_t* size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IOError("could not open", path, errno);
  FileCloser closer(fd);
  struct stat info;
  if (::fstat(fd, &info) != 0) return IOError("could not stat", path, errno);
  if (S_ISDIR(info.st_mode)) return IOError("could not read", path, EISDIR);
  *size = static_cast<uint64_t>(info.st_size);
  return closer.Release();
}

}  // namespace

StatusOr<std::unique_ptr<RandomAccessFile>> RandomAccessFile::Open(const std::string& path) {
  uint64_t size = 0;
  WEIR_ASSIGN_OR_RETURN(int fd, OpenForReading(path, &size));
  return std::unique_ptr<RandomAccessFile>(new RandomAccessFile(path, fd, size));
}

RandomAccessFile::~RandomAccessFile() { ::close(fd_); }

Status RandomAccessFile::Read(uint64_t offset, size_t n, char* out) const {
  size_t done = 0;
  while (done < n) {
    ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return IOError(StrCat("could not read ", n, " bytes at offset ", offset, " of"), path_,
                     errno);
    }
    if (got == 0) {
      return errors::OutOfRange("could not read ", n, " bytes at offset ", offset, " of '",
                                path_, "': the file ends at byte ", offset + done);
    }
    done += static_cast<size_t>(got);
  }
  return Status::OK();
}

StatusOr<std::unique_ptr<SequentialFile>> SequentialFile::Open(const std::string& path) {
  uint64_t size = 0;
  WEIR_ASSIGN_OR_RETURN(int fd, OpenForReading(path, &size));
  // The file is read once, front to back: let the kernel read ahead further.
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<SequentialFile>(new SequentialFile(path, fd, size));
}

SequentialFile::~SequentialFile() { ::close(fd_); }

StatusOr<size_t> SequentialFile::Read(char* out, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t got = ::read(fd_, out + done, n - done);
    if (got < 0) {
      if (errno == EINTR) continue;
      return IOError("could not read", path_, errno);
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

StatusOr<std::vector<std::string>> GetMatchingPaths(const std::string& pattern) {
  auto is_glob = [](std::string_view component) {
    return component.find_first_of("*?[\\") != std::string_view::npos;
  };
  // Walk the pattern one component at a time, keeping every path that
  // matches so far; only components with wildcards list a directory.
  std::vector<std::string> matches = {pattern.starts_with("/") ? "/" : ""};
  size_t start = 0;
  while (start <= pattern.size() && !matches.empty()) {
    size_t end = pattern.find('/', start);
    if (end == std::string::npos) end = pattern.size();
    std::string component = pattern.substr(start, end - start);
    start = end + 1;
    if (component.empty()) continue;
    auto join = [](const std::string& dir, const std::string& name) {
      if (dir.empty()) return name;
      return dir.ends_with("/") ? dir + name : dir + "/" + name;
    };
    std::vector<std::string> next;
    for (const std::string& dir : matches) {
      if (!is_glob(component)) {
        next.push_back(join(dir, component));
        continue;
      }
      DIR* listing = ::opendir(dir.empty() ? "." : dir.c_str());
      if (listing == nullptr) continue;  // not a directory, or gone: no match below it
      while (const dirent* entry = ::readdir(listing)) {
        std::string name = entry->d_name;
        if (name == "." || name == "..") continue;
        if (::fnmatch(component.c_str(), name.c_str(), 0) == 0) next.push_back(join(dir, name));
      }
      ::closedir(listing);
    }
    matches = std::move(next);
  }
  std::erase_if(matches, [](const std::string& path) { return path.empty() || !FileExists(path); });
  std::sort(matches.begin(), matches.end());
  return matches;
}

Status RenameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return IOError(StrCat("could not rename '", from, "' to"), to, errno);
  }
  return Status::OK();
}

Status DeleteFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return IOError("could not delete", path, errno);
  return Status::OK();
}

Status SyncParentDirectory(const std::string& path) {
  const std::string dir = DirectoryOf(path);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IOError("could not open directory", dir, errno);
  FileCloser closer(fd);
  if (::fsync(fd) != 0) return IOError("could not sync directory", dir, errno);
  return Status::OK();
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
