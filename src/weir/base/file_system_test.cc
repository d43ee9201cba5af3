#include "weir/base/file_system.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace weir {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class FileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "weir_fs_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    // Restore permissions changed by a test so the tree can be removed.
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }

  std::string dir_;
};

TEST_F(FileSystemTest, WriteThenRead) {
  std::string contents("binary\0data\xff", 12);
  ASSERT_TRUE(WriteStringToFileAtomic(Path("f"), contents).ok());
  StatusOr<std::string> read = ReadFileToString(Path("f"));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, contents);
  EXPECT_EQ(Entries(), std::vector<std::string>{"f"});
}

TEST_F(FileSystemTest, WriteReplacesAndLeavesNoTempFiles) {
  ASSERT_TRUE(WriteStringToFileAtomic(Path("f"), std::string(100000, 'a')).ok());
  ASSERT_TRUE(WriteStringToFileAtomic(Path("f"), "short").ok());
  EXPECT_EQ(*ReadFileToString(Path("f")), "short");
  EXPECT_EQ(Entries(), std::vector<std::string>{"f"});
}

TEST_F(FileSystemTest, EmptyFile) {
  ASSERT_TRUE(WriteStringToFileAtomic(Path("empty"), "").ok());
  StatusOr<std::string> read = ReadFileToString(Path("empty"));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "");
}

TEST_F(FileSystemTest, NewFileHonoursUmask) {
  mode_t old = ::umask(022);
  Status s = WriteStringToFileAtomic(Path("f"), "x");
  ::umask(old);
  ASSERT_TRUE(s.ok());
  struct stat info;
  ASSERT_EQ(::stat(Path("f").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);
}

TEST_F(FileSystemTest, ReadMissingIsNotFoundNamingPath) {
  StatusOr<std::string> read = ReadFileToString(Path("missing"));
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(errors::IsNotFound(read.status())) << read.status();
  EXPECT_NE(read.status().message().find(Path("missing")), std::string::npos);
}

TEST_F(FileSystemTest, ReadDirectoryFails) {
  StatusOr<std::string> read = ReadFileToString(dir_);
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(errors::IsFailedPrecondition(read.status())) << read.status();
}

TEST_F(FileSystemTest, WriteIntoMissingDirectoryIsNotFound) {
  Status s = WriteStringToFileAtomic(Path("no/such/dir/f"), "x");
  EXPECT_TRUE(errors::IsNotFound(s)) << s;
  EXPECT_NE(s.message().find(Path("no/such/dir/f")), std::string::npos) << s;
}

TEST_F(FileSystemTest, WriteOverDirectoryFailsAndRemovesTemp) {
  ASSERT_TRUE(RecursivelyCreateDir(Path("d/inner")).ok());
  Status s = WriteStringToFileAtomic(Path("d"), "x");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(Path("d")), std::string::npos) << s;
  EXPECT_EQ(Entries(), std::vector<std::string>{"d"});
}

TEST_F(FileSystemTest, WriteBelowARegularFileFailsCleanly) {
  // Works the same as root (which ignores directory permissions): a path
  // through a regular file can never be created.
  ASSERT_TRUE(WriteStringToFileAtomic(Path("plain"), "x").ok());
  Status s = WriteStringToFileAtomic(Path("plain/f"), "y");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(Path("plain/f")), std::string::npos) << s;
  EXPECT_EQ(Entries(), std::vector<std::string>{"plain"});
  EXPECT_EQ(*ReadFileToString(Path("plain")), "x");
}

TEST_F(FileSystemTest, FileExists) {
  EXPECT_TRUE(FileExists(dir_));
  EXPECT_FALSE(FileExists(Path("f")));
  ASSERT_TRUE(WriteStringToFileAtomic(Path("f"), "x").ok());
  EXPECT_TRUE(FileExists(Path("f")));
}

TEST_F(FileSystemTest, RecursivelyCreateDir) {
  ASSERT_TRUE(RecursivelyCreateDir(Path("a/b/c")).ok());
  EXPECT_TRUE(fs::is_directory(Path("a/b/c")));
  // Existing directories, a trailing slash and doubled slashes are fine.
  EXPECT_TRUE(RecursivelyCreateDir(Path("a/b/c")).ok());
  EXPECT_TRUE(RecursivelyCreateDir(Path("a//b/d/")).ok());
  EXPECT_TRUE(fs::is_directory(Path("a/b/d")));
}

TEST_F(FileSystemTest, RecursivelyCreateDirThroughFileFails) {
  ASSERT_TRUE(WriteStringToFileAtomic(Path("file"), "x").ok());
  Status s = RecursivelyCreateDir(Path("file/sub"));
  EXPECT_TRUE(errors::IsFailedPrecondition(s)) << s;
  EXPECT_NE(s.message().find(Path("file")), std::string::npos) << s;
  EXPECT_TRUE(errors::IsInvalidArgument(RecursivelyCreateDir("")));
}

TEST_F(FileSystemTest, WritableFileStreamsIntoATempBesideTheTarget) {
  StatusOr<std::unique_ptr<WritableFile>> file = WritableFile::CreateTemp(Path("big"));
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->path().rfind(Path("big.tmp."), 0), 0u) << (*file)->path();
  std::string expected;
  // Small appends are buffered, large ones written through; order holds.
  for (int i = 0; i < 50; ++i) {
    std::string piece(i % 7 == 0 ? 300000 : 1000 + i, static_cast<char>('a' + i % 26));
    ASSERT_TRUE((*file)->Append(piece).ok());
    expected += piece;
  }
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_FALSE(FileExists(Path("big")));
  ASSERT_TRUE(RenameFile((*file)->path(), Path("big")).ok());
  ASSERT_TRUE(SyncParentDirectory(Path("big")).ok());
  EXPECT_EQ(*ReadFileToString(Path("big")), expected);
  EXPECT_EQ(Entries(), std::vector<std::string>{"big"});
}

TEST_F(FileSystemTest, TempNamesAreUnique) {
  auto a = WritableFile::CreateTemp(Path("f"));
  auto b = WritableFile::CreateTemp(Path("f"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE((*a)->path(), (*b)->path());
  auto missing = WritableFile::CreateTemp(Path("no/dir/f"));
  EXPECT_TRUE(errors::IsNotFound(missing.status())) << missing.status();
}

TEST_F(FileSystemTest, RandomAccessReadsAndReportsTheEnd) {
  ASSERT_TRUE(WriteStringToFileAtomic(Path("f"), "0123456789").ok());
  StatusOr<std::unique_ptr<RandomAccessFile>> file = RandomAccessFile::Open(Path("f"));
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->size(), 10u);
  char buffer[10];
  ASSERT_TRUE((*file)->Read(3, 4, buffer).ok());
  EXPECT_EQ(std::string(buffer, 4), "3456");
  ASSERT_TRUE((*file)->Read(10, 0, buffer).ok());
  Status past_end = (*file)->Read(8, 4, buffer);
  EXPECT_TRUE(errors::IsOutOfRange(past_end)) << past_end;
  EXPECT_NE(past_end.message().find(Path("f")), std::string::npos) << past_end;
  EXPECT_TRUE(errors::IsNotFound(RandomAccessFile::Open(Path("missing")).status()));
  EXPECT_TRUE(errors::IsFailedPrecondition(RandomAccessFile::Open(dir_).status()));
}

TEST_F(FileSystemTest, RenameAndDelete) {
  ASSERT_TRUE(WriteStringToFileAtomic(Path("a"), "new").ok());
  ASSERT_TRUE(WriteStringToFileAtomic(Path("b"), "old").ok());
  ASSERT_TRUE(RenameFile(Path("a"), Path("b")).ok());
  EXPECT_EQ(*ReadFileToString(Path("b")), "new");
  Status s = RenameFile(Path("a"), Path("c"));
  EXPECT_TRUE(errors::IsNotFound(s)) << s;
  EXPECT_NE(s.message().find(Path("a")), std::string::npos) << s;
  ASSERT_TRUE(DeleteFile(Path("b")).ok());
  EXPECT_TRUE(errors::IsNotFound(DeleteFile(Path("b"))));
  EXPECT_TRUE(Entries().empty());
}

TEST(IOErrorTest, MapsErrnoToCodes) {
  EXPECT_TRUE(errors::IsNotFound(IOError("open", "p", ENOENT)));
  EXPECT_TRUE(errors::IsPermissionDenied(IOError("open", "p", EACCES)));
  EXPECT_TRUE(errors::IsResourceExhausted(IOError("write", "p", ENOSPC)));
  EXPECT_TRUE(errors::IsInternal(IOError("read", "p", EIO)));
  EXPECT_EQ(IOError("could not open", "/x", ENOENT).message(),
            std::string("could not open '/x': ") + std::strerror(ENOENT));
}

}  // namespace
}  // namespace weir
