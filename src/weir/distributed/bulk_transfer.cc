#include "weir/distributed/bulk_transfer.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <list>
#include <thread>
#include <unordered_map>

#include "weir/base/logging.h"
#include "weir/base/str_util.h"

namespace weir {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kMagic[4] = {'W', 'B', 'L', 'K'};
constexpr size_t kRequestBytes = sizeof(kMagic) + kBulkTicketBytes;
// The answer's header (the byte count, then zeros) and the zeros after the
// bytes keep every value at a 64-byte offset of the stream. The kernel
// copies the bytes into its buffers at their stream offset: a value 8 bytes
// off a cache line made the sender's copy 1.4-3x slower (16 MiB on
// loopback), since every store straddles two lines.
constexpr size_t kAlignBytes = kBulkHeaderBytes;
constexpr size_t kHeaderBytes = kBulkHeaderBytes;
constexpr char kZeros[kAlignBytes] = {};

// Zeros after `size` bytes up to the next multiple of kAlignBytes.
size_t TailBytes(uint64_t size) {
  return static_cast<size_t>((kAlignBytes - size % kAlignBytes) % kAlignBytes);
}
// A sender whose receiver stops acknowledging gives up after this long.
constexpr unsigned kUserTimeoutMs = 30000;
// Idle connections a receiver keeps per sender.
constexpr size_t kMaxIdleConnections = 4;

std::atomic<int64_t> bytes_sent{0};
std::atomic<int64_t> bytes_received{0};

std::string ErrnoText(int error) { return std::strerror(error); }

// The host of a gRPC address's host part or a listen host, without brackets.
std::string BareHost(const std::string& host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    return host.substr(1, host.size() - 2);
  }
  return host;
}

std::string JoinHostPort(const std::string& host, int port) {
  return host.find(':') != std::string::npos ? StrCat("[", host, "]:", port)
                                             : StrCat(host, ":", port);
}

// Sets a socket's receive or send timeout to what is left until `deadline`
// (at least 1 ms: 0 would mean forever). False once the deadline passed.
bool SetTimeout(int fd, int option, Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
  if (left.count() <= 0) return false;
  left = std::max(left, std::chrono::microseconds(1000));
  timeval tv;
  tv.tv_sec = static_cast<time_t>(left.count() / 1000000);
  tv.tv_usec = static_cast<suseconds_t>(left.count() % 1000000);
  setsockopt(fd, SOL_SOCKET, option, &tv, sizeof(tv));
  return true;
}

void PutLittleEndian64(uint64_t value, char* out) {
  for (size_t i = 0; i < 8; ++i) out[i] = static_cast<char>(value >> (8 * i));
}

uint64_t GetLittleEndian64(const char* in) {
  uint64_t value = 0;
  for (size_t i = 0; i < 8; ++i)
    value |= static_cast<uint64_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  return value;
}

// Writes `iov` (header and value) to `fd` until all is sent, an error or
// `deadline`. Consumes `iov`.
bool SendAll(int fd, iovec* iov, int count, Clock::time_point deadline) {
  while (count > 0) {
    if (!SetTimeout(fd, SO_SNDTIMEO, deadline)) return false;
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = static_cast<size_t>(count);
    ssize_t sent = sendmsg(fd, &message, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;  // EAGAIN: the deadline is checked above
      return false;
    }
    size_t done = static_cast<size_t>(sent);
    while (count > 0 && done >= iov->iov_len) {
      done -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + done;
      iov->iov_len -= done;
    }
  }
  return true;
}

}  // namespace

BulkCounts GetBulkCounts() {
  return {bytes_sent.load(std::memory_order_relaxed),
          bytes_received.load(std::memory_order_relaxed)};
}

// ---------------------------------------------------------------- sender

struct BulkSender::Impl {
  struct Ticket {
    Tensor value;
    int64_t step_id = 0;
    Clock::time_point expiry;          // claimed by then, or dropped
    Clock::time_point write_deadline;  // the RecvTensor's deadline
  };
  struct Connection {
    int fd = -1;
    std::thread thread;
    bool done = false;     // the thread ended and closed fd
    int64_t step_id = -1;  // of the write in flight, or -1
  };

  std::string task;
  BulkSenderOptions options;
  int listen_fd = -1;
  int wake_fd = -1;  // an eventfd, readable once Stop was called
  std::thread acceptor;

  mutable std::mutex mu;
  bool stopping = false;
  std::unordered_map<std::string, Ticket> tickets;
  std::list<Connection> connections;  // stable addresses for their threads

  ~Impl() {
    if (listen_fd >= 0) close(listen_fd);
    if (wake_fd >= 0) close(wake_fd);
  }

  // REQUIRES: mu held. Drops expired tickets into `dropped` (released
  // outside the lock).
  void SweepLocked(Clock::time_point now, std::vector<Tensor>* dropped) {
    for (auto it = tickets.begin(); it != tickets.end();) {
      if (it->second.expiry <= now) {
        dropped->push_back(std::move(it->second.value));
        it = tickets.erase(it);
      } else {
        ++it;
      }
    }
  }

  void AcceptLoop() {
    for (;;) {
      pollfd fds[2] = {{listen_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
      int ready = poll(fds, 2, 1000);
      if (ready < 0 && errno != EINTR) {
        LOG(Warning) << "bulk transfer listener of " << task << ": poll: " << ErrnoText(errno);
        return;
      }
      if (fds[1].revents != 0) return;
      std::vector<Tensor> dropped;
      std::vector<std::thread> finished;
      int fd = -1;
      if (ready > 0 && (fds[0].revents & POLLIN) != 0) {
        fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      }
      std::lock_guard<std::mutex> lock(mu);
      SweepLocked(Clock::now(), &dropped);
      int live = 0;
      for (auto it = connections.begin(); it != connections.end();) {
        if (it->done) {
          finished.push_back(std::move(it->thread));
          it = connections.erase(it);
        } else {
          ++live;
          ++it;
        }
      }
      for (std::thread& thread : finished) thread.join();  // they ended: no wait
      if (fd < 0) continue;
      if (stopping || live >= options.max_connections) {
        close(fd);
        continue;
      }
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      unsigned user_timeout = kUserTimeoutMs;
      setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
      Connection& connection = connections.emplace_back();
      connection.fd = fd;
      connection.thread = std::thread([this, &connection] { Serve(&connection); });
    }
  }

  // One connection: requests one after another until the peer closes, an
  // invalid request, idleness, a failed write or Stop.
  void Serve(Connection* connection) {
    const int fd = connection->fd;
    // One blocking read per request: the idle timeout bounds it, and Stop
    // or DropStep shut the socket down, which ends it at once.
    SetTimeout(fd, SO_RCVTIMEO, Clock::now() + options.idle_timeout);
    for (;;) {
      char request[kRequestBytes];
      ssize_t got = recv(fd, request, sizeof(request), MSG_WAITALL);
      if (got < 0 && errno == EINTR) continue;
      if (got != static_cast<ssize_t>(sizeof(request)) ||
          std::memcmp(request, kMagic, sizeof(kMagic)) != 0) {
        break;  // closed, or not a request: no answer
      }
      Ticket ticket;
      {
        std::lock_guard<std::mutex> lock(mu);
        auto it = tickets.find(std::string(request + sizeof(kMagic), kBulkTicketBytes));
        if (stopping || it == tickets.end() || it->second.expiry <= Clock::now()) {
          // Unknown, used or expired: the connection is closed unanswered.
          break;
        }
        ticket = std::move(it->second);
        tickets.erase(it);
        connection->step_id = ticket.step_id;
      }
      const auto size = static_cast<uint64_t>(ticket.value.TotalBytes());
      char header[kHeaderBytes] = {};
      PutLittleEndian64(size, header);
      iovec iov[3] = {{header, kHeaderBytes}, {ticket.value.raw_data(), size}, {}};
      int count = size > 0 ? 2 : 1;
      if (TailBytes(size) > 0) iov[count++] = {const_cast<char*>(kZeros), TailBytes(size)};
      bool sent = SendAll(fd, iov, count, ticket.write_deadline);
      {
        std::lock_guard<std::mutex> lock(mu);
        connection->step_id = -1;
      }
      if (!sent) break;
      bytes_sent.fetch_add(static_cast<int64_t>(size), std::memory_order_relaxed);
    }
    std::lock_guard<std::mutex> lock(mu);
    close(fd);
    connection->done = true;
  }
};

BulkSender::BulkSender(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

StatusOr<std::unique_ptr<BulkSender>> BulkSender::Create(const std::string& host, std::string task,
                                                         BulkSenderOptions options) {
  if (options.ticket_lifetime.count() <= 0 || options.idle_timeout.count() <= 0 ||
      options.max_connections < 1) {
    return errors::InvalidArgument("bulk transfer of ", task,
                                   ": ticket lifetime, idle timeout and connection limit must be "
                                   "positive");
  }
  auto impl = std::make_unique<Impl>();
  impl->task = std::move(task);
  impl->options = options;
  const std::string bare = BareHost(host);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  int resolved = getaddrinfo(bare.c_str(), "0", &hints, &found);
  if (resolved != 0) {
    return errors::Unavailable("bulk transfer of ", impl->task, " cannot listen on ", host, ": ",
                               gai_strerror(resolved));
  }
  std::string why = "no address";
  for (addrinfo* ai = found; ai != nullptr && impl->listen_fd < 0; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      why = ErrnoText(errno);
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 128) != 0) {
      why = ErrnoText(errno);
      close(fd);
      continue;
    }
    impl->listen_fd = fd;
  }
  freeaddrinfo(found);
  if (impl->listen_fd < 0) {
    return errors::Unavailable("bulk transfer of ", impl->task, " cannot listen on ", host, ": ",
                               why);
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(impl->listen_fd, reinterpret_cast<sockaddr*>(&bound), &length);
  const int port = bound.ss_family == AF_INET6
                       ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                       : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  impl->wake_fd = eventfd(0, EFD_CLOEXEC);
  if (impl->wake_fd < 0) {
    return errors::Unavailable("bulk transfer of ", impl->task, ": eventfd: ", ErrnoText(errno));
  }
  Impl* raw = impl.get();
  std::unique_ptr<BulkSender> sender(new BulkSender(std::move(impl)));
  sender->port_ = port;
  raw->acceptor = std::thread([raw] { raw->AcceptLoop(); });
  return sender;
}

BulkSender::~BulkSender() { Stop(); }

void BulkSender::Stop() {
  std::unordered_map<std::string, Impl::Ticket> dropped;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->stopping) return;
    impl_->stopping = true;
    dropped.swap(impl_->tickets);
    for (Impl::Connection& connection : impl_->connections) {
      if (!connection.done) shutdown(connection.fd, SHUT_RDWR);
    }
  }
  uint64_t one = 1;
  ssize_t written = write(impl_->wake_fd, &one, sizeof(one));
  (void)written;
  if (impl_->acceptor.joinable()) impl_->acceptor.join();
  // The acceptor is gone: nothing adds to the list any more.
  for (Impl::Connection& connection : impl_->connections) connection.thread.join();
  impl_->connections.clear();
}

StatusOr<std::string> BulkSender::Offer(const Tensor& value, int64_t step_id,
                                        Clock::time_point deadline) {
  DCHECK(!IsNonPodDType(value.dtype()));
  std::string ticket(kBulkTicketBytes, '\0');
  size_t filled = 0;
  while (filled < ticket.size()) {
    ssize_t got = getrandom(ticket.data() + filled, ticket.size() - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return errors::Internal("bulk transfer of ", impl_->task, ": getrandom: ", ErrnoText(errno));
    }
    filled += static_cast<size_t>(got);
  }
  const Clock::time_point now = Clock::now();
  std::vector<Tensor> dropped;
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->stopping) {
    return errors::Unavailable("bulk transfer of ", impl_->task, " is shutting down");
  }
  impl_->SweepLocked(now, &dropped);
  Impl::Ticket& entry = impl_->tickets[ticket];
  entry.value = value;
  entry.step_id = step_id;
  entry.expiry = now + impl_->options.ticket_lifetime;
  entry.write_deadline = deadline;
  return ticket;
}

void BulkSender::DropStep(int64_t step_id) {
  std::vector<Tensor> dropped;
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (auto it = impl_->tickets.begin(); it != impl_->tickets.end();) {
    if (it->second.step_id == step_id) {
      dropped.push_back(std::move(it->second.value));
      it = impl_->tickets.erase(it);
    } else {
      ++it;
    }
  }
  for (Impl::Connection& connection : impl_->connections) {
    if (!connection.done && connection.step_id == step_id) shutdown(connection.fd, SHUT_RDWR);
  }
}

int BulkSender::num_tickets() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return static_cast<int>(impl_->tickets.size());
}

int BulkSender::num_connections() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  int live = 0;
  for (const Impl::Connection& connection : impl_->connections) live += connection.done ? 0 : 1;
  return live;
}

// ---------------------------------------------------------------- receiver

void BulkCancel::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);
}

bool BulkCancel::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

bool BulkCancel::Attach(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) return false;
  fd_ = fd;
  return true;
}

void BulkCancel::Detach() {
  std::lock_guard<std::mutex> lock(mu_);
  fd_ = -1;
}

BulkConnectionPool::BulkConnectionPool(std::string host, std::string peer)
    : host_(BareHost(host)), peer_(std::move(peer)) {}

BulkConnectionPool::~BulkConnectionPool() {
  for (auto& [port, fd] : idle_) close(fd);
}

int BulkConnectionPool::num_idle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(idle_.size());
}

StatusOr<int> BulkConnectionPool::Connect(int port, const std::string& address,
                                          Clock::time_point deadline, BulkCancel* cancel) {
  const auto failed = [&](const std::string& why) {
    return errors::Unavailable("bulk transfer from ", peer_, ": cannot connect to ", address, ": ",
                               why);
  };
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  int resolved = getaddrinfo(host_.c_str(), service.c_str(), &hints, &found);
  if (resolved != 0) return failed(gai_strerror(resolved));
  std::string why = "no address";
  int connected = -1;
  for (addrinfo* ai = found; ai != nullptr && connected < 0; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      why = ErrnoText(errno);
      continue;
    }
    int result = connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (result != 0 && errno == EINPROGRESS) {
      // In short slices, so that a cancel or the deadline ends the wait.
      for (;;) {
        if (cancel != nullptr && cancel->cancelled()) break;
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) break;
        pollfd pfd = {fd, POLLOUT, 0};
        int ready = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 100)));
        if (ready > 0) {
          int error = 0;
          socklen_t length = sizeof(error);
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
          result = error == 0 ? 0 : -1;
          errno = error;
          break;
        }
      }
      if (result != 0 && errno == EINPROGRESS) errno = ETIMEDOUT;
    }
    if (result != 0) {
      why = ErrnoText(errno);
      close(fd);
      continue;
    }
    // Blocking from now on: reads and writes have socket timeouts.
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    connected = fd;
  }
  freeaddrinfo(found);
  if (cancel != nullptr && cancel->cancelled()) {
    if (connected >= 0) close(connected);
    return errors::Cancelled("bulk transfer from ", peer_, " (", address, ") was cancelled");
  }
  if (connected < 0) {
    if (Clock::now() >= deadline) {
      return errors::DeadlineExceeded("bulk transfer from ", peer_, ": connecting to ", address,
                                      " did not finish by the deadline");
    }
    return failed(why);
  }
  return connected;
}

Status BulkConnectionPool::ReadOnce(int fd, const std::string& address, const std::string& ticket,
                                    int64_t size, char* dst, Clock::time_point deadline,
                                    BulkCancel* cancel, bool* nothing_came) {
  *nothing_came = false;
  const std::string what = StrCat("bulk transfer from ", peer_, " (", address, ")");
  if (cancel != nullptr && !cancel->Attach(fd)) return errors::Cancelled(what, " was cancelled");
  int64_t got = 0;
  // Every failure: cancelled first, then the deadline, then the cause.
  const auto fail = [&](int error, std::string why) -> Status {
    if (cancel != nullptr) cancel->Detach();
    if (cancel != nullptr && cancel->cancelled()) return errors::Cancelled(what, " was cancelled");
    if (Clock::now() >= deadline || error == EAGAIN || error == EWOULDBLOCK) {
      return errors::DeadlineExceeded(what, ": ", got, " of ", size,
                                      " bytes came before the deadline");
    }
    return errors::Unavailable(what, ": ", why);
  };
  char request[kRequestBytes];
  std::memcpy(request, kMagic, sizeof(kMagic));
  std::memcpy(request + sizeof(kMagic), ticket.data(), kBulkTicketBytes);
  if (!SetTimeout(fd, SO_SNDTIMEO, deadline)) return fail(0, "deadline");
  if (send(fd, request, sizeof(request), MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(request))) {
    *nothing_came = true;
    return fail(errno, StrCat("sending the ticket: ", ErrnoText(errno)));
  }
  // The header, the bytes and the tail's zeros in one read where the kernel
  // allows (the header is checked once it is in; a sender that announced
  // another count is DataLoss, whatever it wrote into `dst`).
  char header[kHeaderBytes];
  char tail[kAlignBytes];
  const int64_t header_bytes = static_cast<int64_t>(kHeaderBytes);
  const int64_t tail_bytes = static_cast<int64_t>(TailBytes(static_cast<uint64_t>(size)));
  const int64_t total = header_bytes + size + tail_bytes;
  int64_t done = 0;  // of header, bytes and tail, in stream order
  bool header_checked = false;
  while (done < total) {
    if (!SetTimeout(fd, SO_RCVTIMEO, deadline)) return fail(EAGAIN, "deadline");
    iovec iov[3];
    int count = 0;
    // The part of the stream's region [begin, begin + length) not read yet.
    const auto add = [&](char* base, int64_t begin, int64_t length) {
      if (length > 0 && done < begin + length) {
        const int64_t skip = std::max<int64_t>(done - begin, 0);
        iov[count++] = {base + skip, static_cast<size_t>(length - skip)};
      }
    };
    add(header, 0, header_bytes);
    add(dst, header_bytes, size);
    add(tail, header_bytes + size, tail_bytes);
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = static_cast<size_t>(count);
    ssize_t n = recvmsg(fd, &message, MSG_WAITALL);
    if (n > 0) {
      done += n;
      got = std::clamp<int64_t>(done - header_bytes, 0, size);
    } else if (n == 0) {
      if (done < header_bytes) {
        *nothing_came = done == 0;
        return fail(0,
                    "the sender closed the connection without answering (it refused the "
                    "ticket, or it stopped)");
      }
      return fail(0, StrCat("the connection closed after ", got, " of ", size,
                            " bytes (the sender stopped or died)"));
    } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      *nothing_came = done == 0;
      return fail(errno, StrCat(ErrnoText(errno), " after ", got, " of ", size, " bytes"));
    }
    if (!header_checked && done >= header_bytes) {
      header_checked = true;
      const uint64_t announced = GetLittleEndian64(header);
      if (announced != static_cast<uint64_t>(size)) {
        if (cancel != nullptr) cancel->Detach();
        return errors::DataLoss(what, ": the sender announced ", announced,
                                " bytes; its RecvTensor answer said ", size);
      }
    }
  }
  if (cancel != nullptr) cancel->Detach();
  bytes_received.fetch_add(size, std::memory_order_relaxed);
  return Status::OK();
}

Status BulkConnectionPool::Read(int port, const std::string& ticket, int64_t size, char* dst,
                                Clock::time_point deadline, BulkCancel* cancel) {
  const std::string address = JoinHostPort(host_, port);
  if (ticket.size() != kBulkTicketBytes || size < 0) {
    return errors::InvalidArgument("bulk transfer from ", peer_, " (", address, "): a ticket of ",
                                   ticket.size(), " bytes for ", size, " bytes");
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = -1;
    if (attempt == 0) {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = idle_.begin(); it != idle_.end(); ++it) {
        if (it->first == port) {
          fd = it->second;
          idle_.erase(it);
          break;
        }
      }
    }
    const bool reused = fd >= 0;
    if (!reused) {
      StatusOr<int> connected = Connect(port, address, deadline, cancel);
      if (!connected.ok()) return connected.status();
      fd = *connected;
    }
    bool nothing_came = false;
    Status status = ReadOnce(fd, address, ticket, size, dst, deadline, cancel, &nothing_came);
    if (status.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (idle_.size() < kMaxIdleConnections) {
        idle_.emplace_back(port, fd);
        fd = -1;
      }
    }
    if (fd >= 0) close(fd);
    // A kept connection the sender had closed meanwhile: once more, anew.
    if (status.ok() || !reused || !nothing_came || !errors::IsUnavailable(status)) return status;
  }
  return errors::Internal("unreachable");
}

}  // namespace weir
