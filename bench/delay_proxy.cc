// delay_proxy: a TCP proxy that delays every byte by a fixed time, for
// benchmarks on a kernel without netem (issue 16: the null step over links
// with 0.1 ms and 1 ms round trips).
//
//   delay_proxy --delay-us 50 [--spin-us 40] --route 0=127.0.0.1:2222 [--route ...]
//
// Each --route LISTEN_PORT=HOST:PORT listens on 127.0.0.1:LISTEN_PORT (or
// --listen-host's; LISTEN_PORT 0: a free port) and connects every accepted connection to HOST:PORT
// (an IPv4 address). Bytes are forwarded in both directions; each chunk read is written --delay-us
// microseconds after it was read (a one-way delay per direction, so a round trip gains 2 * delay),
// in order, with no bandwidth limit. One thread serves everything with epoll and a timerfd
// (absolute CLOCK_MONOTONIC deadlines, timer slack 1 ns); since a wake-up from the timer comes some
// 20 us late on this machine, the timer fires --spin-us early and the thread spins to the release
// time (up to that much CPU per release). Once listening it prints one line "route <listen port>
// <target>" per route and then "ready".
//
// Two helper modes measure the proxy itself (bench/delay_proxy_check.sh):
//   delay_proxy --echo-port P      an echo server on 127.0.0.1:P
//   delay_proxy --ping HOST:PORT [--count 2000] [--size 64]
//       round trips of a --size-byte message, one at a time; prints one
//       JSON line with the median, p10, p90 and mean in microseconds.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace {

constexpr size_t kReadBytes = 64 * 1024;
// Past this many queued bytes in one direction, its source is not read
// until the queue drains (memory stays bounded; TCP pushes back).
constexpr size_t kMaxQueuedBytes = 16 * 1024 * 1024;

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

[[noreturn]] void Die(const std::string& what) {
  std::cerr << "delay_proxy: " << what << ": " << std::strerror(errno) << "\n";
  std::exit(1);
}

bool ParseAddress(const std::string& text, sockaddr_in* out) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  std::string host = text.substr(0, colon);
  if (host == "localhost") host = "127.0.0.1";
  char* end = nullptr;
  long port = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (end == text.c_str() + colon + 1 || *end != '\0' || port < 0 || port > 65535) return false;
  *out = sockaddr_in{};
  out->sin_family = AF_INET;
  out->sin_port = htons(static_cast<uint16_t>(port));
  return inet_pton(AF_INET, host.c_str(), &out->sin_addr) == 1;
}

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// The address --route and --echo-port listen on (--listen-host).
in_addr listen_host{htonl(INADDR_LOOPBACK)};

int Listen(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Die("socket");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr = listen_host;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) Die("bind");
  if (listen(fd, 128) != 0) Die("listen");
  return fd;
}

uint16_t BoundPort(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

// ---------------------------------------------------------------------------
// The proxy.

struct Chunk {
  int64_t release_ns;
  std::string bytes;
  size_t written = 0;
};

struct Connection;

// What an epoll event refers to.
struct Handle {
  enum Kind { kListener, kSocket, kTimer } kind;
  size_t route = 0;                  // kListener
  Connection* connection = nullptr;  // kSocket
  int fd = -1;
};

// One direction of a connection: bytes read from `from`, queued, written to `to`.
struct Direction {
  Connection* connection;
  int from = -1;
  int to = -1;
  std::deque<Chunk> queue;
  size_t queued_bytes = 0;
  bool eof = false;       // `from` said EOF: shut down `to` once the queue drains
  bool shut = false;      // `to` was shut down for writing
  bool want_write = false;  // `to` is full: EPOLLOUT asked for
};

// A closed connection is deleted only after the epoll batch that closed it,
// so the batch's other events may still point at its handles.
struct Connection {
  Direction up, down;  // client -> target, target -> client
  Handle client, target;
  bool closed = false;
};

class Proxy {
 public:
  Proxy(int64_t delay_ns, int64_t spin_ns) : delay_ns_(delay_ns), spin_ns_(spin_ns) {
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    timer_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (epoll_ < 0 || timer_ < 0) Die("epoll_create1/timerfd_create");
    Watch(timer_, new Handle{Handle::kTimer}, EPOLLIN);
  }

  uint16_t AddRoute(uint16_t listen_port, const sockaddr_in& target) {
    int fd = Listen(listen_port);
    SetNonBlocking(fd);
    targets_.push_back(target);
    Watch(fd, new Handle{Handle::kListener, targets_.size() - 1}, EPOLLIN);
    return BoundPort(fd);
  }

  void Run() {
    epoll_event events[64];
    for (;;) {
      int n = epoll_wait(epoll_, events, 64, -1);
      if (n < 0) {
        if (errno == EINTR) continue;
        Die("epoll_wait");
      }
      for (int i = 0; i < n; ++i) {
        auto* handle = static_cast<Handle*>(events[i].data.ptr);
        switch (handle->kind) {
          case Handle::kListener: Accept(handle); break;
          case Handle::kTimer: {
            uint64_t expirations;
            while (read(timer_, &expirations, sizeof(expirations)) > 0) {
            }
            break;
          }
          case Handle::kSocket: {
            Connection* c = handle->connection;
            if (c->closed) break;
            Direction& source = c->up.from == handle->fd ? c->up : c->down;
            if ((events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !source.eof) {
              ReadFrom(source);
            }
            if (!c->closed && (events[i].events & EPOLLOUT)) {
              Direction& d = c->up.to == handle->fd ? c->up : c->down;
              d.want_write = false;
              UpdateInterest(*c);
            }
            break;
          }
        }
      }
      // Write what is due, in every direction, and arm the timer for the next
      // (spin_ns_ early: a chunk due within spin_ns_ is waited for spinning,
      // since a timer wake-up can come tens of microseconds late).
      int64_t now = NowNs();
      if (spin_ns_ > 0 && next_due_ != INT64_MAX && next_due_ > now &&
          next_due_ - now <= spin_ns_) {
        while ((now = NowNs()) < next_due_) {
        }
      }
      int64_t next = INT64_MAX;
      for (auto it = live_.begin(); it != live_.end();) {
        Connection* c = *it;
        if (!c->closed) {
          Flush(c->up, now);
          if (!c->closed) Flush(c->down, now);
        }
        if (!c->closed) {
          for (Direction* d : {&c->up, &c->down}) {
            if (!d->queue.empty() && !d->want_write) {
              next = std::min(next, d->queue.front().release_ns);
            }
          }
          ++it;
        } else {
          delete c;
          it = live_.erase(it);
        }
      }
      next_due_ = next;
      if (next != INT64_MAX) next = std::max<int64_t>(1, next - spin_ns_);
      if (next != armed_) {
        itimerspec spec{};
        if (next != INT64_MAX) {
          spec.it_value.tv_sec = next / 1000000000;
          spec.it_value.tv_nsec = next % 1000000000;
        }
        timerfd_settime(timer_, TFD_TIMER_ABSTIME, &spec, nullptr);
        armed_ = next;
      }
    }
  }

 private:
  void Watch(int fd, Handle* handle, uint32_t events) {
    handle->fd = fd;
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = handle;
    if (epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) != 0) Die("epoll_ctl");
  }

  void Accept(Handle* listener) {
    for (;;) {
      int client = accept4(listener->fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) return;  // EAGAIN, or a connection gone before accept
      int target = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const sockaddr_in& addr = targets_[listener->route];
      // A blocking connect: the targets are local, and a refused one closes
      // the client's connection as the target would have.
      if (target < 0 ||
          connect(target, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
        std::cerr << "delay_proxy: connect to port " << ntohs(addr.sin_port) << ": "
                  << std::strerror(errno) << "\n";
        if (target >= 0) close(target);
        close(client);
        continue;
      }
      for (int fd : {client, target}) {
        SetNoDelay(fd);
        SetNonBlocking(fd);
      }
      auto* c = new Connection;
      c->up.connection = c->down.connection = c;
      c->up.from = c->down.to = client;
      c->up.to = c->down.from = target;
      for (Handle* h : {&c->client, &c->target}) {
        h->kind = Handle::kSocket;
        h->connection = c;
      }
      Watch(client, &c->client, EPOLLIN);
      Watch(target, &c->target, EPOLLIN);
      live_.push_back(c);
    }
  }

  void ReadFrom(Direction& d) {
    char buffer[kReadBytes];
    ssize_t n = read(d.from, buffer, sizeof(buffer));
    if (n > 0) {
      d.queue.push_back(Chunk{NowNs() + delay_ns_, std::string(buffer, n)});
      d.queued_bytes += n;
      if (d.queued_bytes > kMaxQueuedBytes) UpdateInterest(*d.connection);
    } else if (n == 0) {
      d.eof = true;
      UpdateInterest(*d.connection);
    } else if (errno != EAGAIN && errno != EINTR) {
      Close(*d.connection);
    }
  }

  void Flush(Direction& d, int64_t now) {
    while (!d.want_write && !d.queue.empty() && d.queue.front().release_ns <= now) {
      Chunk& chunk = d.queue.front();
      ssize_t n = send(d.to, chunk.bytes.data() + chunk.written, chunk.bytes.size() - chunk.written,
                       MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN) {
          d.want_write = true;
          UpdateInterest(*d.connection);
          return;
        }
        if (errno == EINTR) continue;
        Close(*d.connection);
        return;
      }
      chunk.written += n;
      if (chunk.written == chunk.bytes.size()) {
        bool was_full = d.queued_bytes > kMaxQueuedBytes;
        d.queued_bytes -= chunk.bytes.size();
        d.queue.pop_front();
        if (was_full && d.queued_bytes <= kMaxQueuedBytes) UpdateInterest(*d.connection);
      }
    }
    if (d.eof && d.queue.empty() && !d.shut) {
      shutdown(d.to, SHUT_WR);
      d.shut = true;
      Connection& c = *d.connection;
      if (c.up.shut && c.down.shut) Close(c);
    }
  }

  // Each socket's epoll interest: EPOLLIN while it is a source not at EOF
  // and not over the queue limit, EPOLLOUT while it is a full destination.
  void UpdateInterest(Connection& c) {
    for (Direction* d : {&c.up, &c.down}) {
      Direction& other = d == &c.up ? c.down : c.up;  // the direction writing to d->from
      uint32_t events = 0;
      if (!d->eof && d->queued_bytes <= kMaxQueuedBytes) events |= EPOLLIN;
      if (other.want_write) events |= EPOLLOUT;
      epoll_event ev{};
      ev.events = events;
      ev.data.ptr = d == &c.up ? &c.client : &c.target;
      epoll_ctl(epoll_, EPOLL_CTL_MOD, d->from, &ev);
    }
  }

  void Close(Connection& c) {
    if (c.closed) return;
    c.closed = true;
    for (int fd : {c.up.from, c.up.to}) {
      epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
      close(fd);
    }
  }

  const int64_t delay_ns_;
  const int64_t spin_ns_;
  int64_t next_due_ = INT64_MAX;  // the earliest queued chunk's release time
  int epoll_ = -1;
  int timer_ = -1;
  int64_t armed_ = INT64_MAX;
  std::vector<sockaddr_in> targets_;
  std::vector<Connection*> live_;
};

// ---------------------------------------------------------------------------
// The echo server and the ping client (blocking, one connection at a time).

int Echo(uint16_t port) {
  int listener = Listen(port);
  std::cout << "echo " << BoundPort(listener) << std::endl;
  for (;;) {
    int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    SetNoDelay(fd);
    char buffer[kReadBytes];
    for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) {
      for (ssize_t sent = 0; sent < n;) {
        ssize_t m = send(fd, buffer + sent, n - sent, MSG_NOSIGNAL);
        if (m <= 0) break;
        sent += m;
      }
    }
    close(fd);
  }
}

int Ping(const sockaddr_in& target, int count, int size) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&target), sizeof(target)) != 0) {
    Die("ping: connect");
  }
  SetNoDelay(fd);
  std::string message(size, 'x'), reply(size, '\0');
  std::vector<double> us;
  const int warmup = std::min(100, count);
  for (int i = 0; i < warmup + count; ++i) {
    const int64_t start = NowNs();
    if (send(fd, message.data(), size, MSG_NOSIGNAL) != size) Die("ping: send");
    for (int got = 0; got < size;) {
      ssize_t n = read(fd, reply.data() + got, size - got);
      if (n <= 0) Die("ping: read (the connection closed)");
      got += n;
    }
    if (i >= warmup) us.push_back((NowNs() - start) / 1e3);
  }
  close(fd);
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[static_cast<size_t>(q * (us.size() - 1))]; };
  std::printf(
      "{\"count\": %d, \"size\": %d, \"median_us\": %.1f, \"p10_us\": %.1f, \"p90_us\": %.1f, "
      "\"mean_us\": %.1f}\n",
      count, size, at(0.5), at(0.1), at(0.9),
      std::accumulate(us.begin(), us.end(), 0.0) / us.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  double delay_us = 0;
  double spin_us = 40;
  std::vector<std::string> routes;
  int echo_port = -1, count = 2000, size = 64;
  std::string ping, host = "127.0.0.1";
  CLI::App app{"delay_proxy: a TCP proxy adding a fixed one-way delay (bench/delay_proxy.cc)"};
  app.add_option("--delay-us", delay_us, "one-way delay of every chunk, microseconds")
      ->check(CLI::Range(0.0, 10e6));
  app.add_option("--spin-us", spin_us,
                 "wake this early and spin to each release (0: timer only, late by a wake-up)")
      ->check(CLI::Range(0.0, 1000.0));
  app.add_option("--route", routes, "LISTEN_PORT=HOST:PORT (0: a free port); repeatable");
  app.add_option("--echo-port", echo_port, "run an echo server on this port instead (0: free)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--listen-host", host, "the IPv4 address --route and --echo-port listen on");
  app.add_option("--ping", ping, "measure round trips to this HOST:PORT instead");
  app.add_option("--count", count, "--ping: timed round trips")->check(CLI::Range(1, 10000000));
  app.add_option("--size", size, "--ping: message bytes")->check(CLI::Range(1, 1 << 20));
  CLI11_PARSE(app, argc, argv);
  // Timers fire within the slack (50 us by default): ask for none.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  if (inet_pton(AF_INET, host.c_str(), &listen_host) != 1) {
    std::cerr << "delay_proxy: --listen-host " << host << " is not an IPv4 address\n";
    return 64;
  }
  if (echo_port >= 0) return Echo(static_cast<uint16_t>(echo_port));
  if (!ping.empty()) {
    sockaddr_in target;
    if (!ParseAddress(ping, &target)) {
      std::cerr << "delay_proxy: --ping " << ping << " is not IPV4:PORT\n";
      return 64;
    }
    return Ping(target, count, size);
  }
  if (routes.empty()) {
    std::cerr << "delay_proxy: give --route, --echo-port or --ping\n";
    return 64;
  }
  Proxy proxy(static_cast<int64_t>(delay_us * 1e3), static_cast<int64_t>(spin_us * 1e3));
  for (const std::string& route : routes) {
    size_t eq = route.find('=');
    sockaddr_in target;
    char* end = nullptr;
    long port = eq == std::string::npos ? -1 : std::strtol(route.c_str(), &end, 10);
    if (eq == std::string::npos || end != route.c_str() + eq || port < 0 || port > 65535 ||
        !ParseAddress(route.substr(eq + 1), &target)) {
      std::cerr << "delay_proxy: --route " << route << " is not LISTEN_PORT=IPV4:PORT\n";
      return 64;
    }
    uint16_t bound = proxy.AddRoute(static_cast<uint16_t>(port), target);
    std::cout << "route " << bound << " " << route.substr(eq + 1) << "\n";
  }
  std::cout << "ready" << std::endl;
  proxy.Run();
}
