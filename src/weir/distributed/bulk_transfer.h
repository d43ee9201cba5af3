// The bulk-data side channel of RecvTensor (issue 16): large numeric values
// cross tasks over a plain TCP connection of their own, read by the
// receiver with recv() straight into the new tensor's buffer and written by
// the sender with send() straight from the value's buffer, so each byte is
// copied once per side by the kernel and never by Weir or gRPC.
//
// RecvTensor (gRPC) still negotiates: a receiver that accepts the channel
// says so in its request (RecvTensorRequest.bulk_min_bytes); a sender with a
// BulkSender answers a large value with its dtype, shape, byte count, a
// ticket (kBulkTicketBytes random bytes from getrandom) and its listener's
// port (RecvTensorResponse.bulk_transfer). The receiver connects to that
// port on the host it called RecvTensor on (never a host the answer names)
// and reads the bytes:
//
//   receiver -> sender: "WBLK" + ticket (20 bytes)
//   sender -> receiver: a kBulkHeaderBytes header (the byte count, 8 bytes
//     little-endian, then zeros), the bytes, and zeros up to a multiple of
//     kBulkHeaderBytes (every value starts cache-line aligned in the stream)
//
// then the connection may carry the next ticket. A ticket is the capability
// to read one value: single use, valid for BulkSenderOptions::ticket_lifetime;
// an unknown, used or expired ticket, or a request that is not one, closes
// the connection without an answer. Only for plaintext servers: with TLS the
// values stay on the (encrypted) gRPC stream.
//
// Never a hang: the receiver's read has the RecvTensor's deadline and a
// BulkCancel (the step's cancellation shuts the socket down); the sender's
// write has the RecvTensor's deadline, TCP_USER_TIMEOUT for a peer that
// stops acknowledging, and DropStep / Stop, which shut its socket down.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor.h"

namespace weir {

inline constexpr size_t kBulkTicketBytes = 16;
inline constexpr size_t kBulkHeaderBytes = 64;

struct BulkSenderOptions {
  // How long a ticket may wait for its receiver.
  std::chrono::milliseconds ticket_lifetime{30000};
  // A connection that sends no request for this long is closed.
  std::chrono::milliseconds idle_timeout{60000};
  // More connections than this at once are refused (closed at accept).
  int max_connections = 64;
};

// The sender's side: one listener (an acceptor thread) and one thread per
// open connection. Thread-safe.
class BulkSender {
 public:
  // Listens on `host` (an address of this machine, as ServerOptions::host;
  // "[::]" and "0.0.0.0" for every interface) on a port the kernel picks.
  // `task` names this task in errors. Unavailable if it cannot listen.
  static StatusOr<std::unique_ptr<BulkSender>> Create(const std::string& host, std::string task,
                                                      BulkSenderOptions options = {});
  ~BulkSender();  // Stop()
  BulkSender(const BulkSender&) = delete;
  BulkSender& operator=(const BulkSender&) = delete;

  // Closes the listener and every connection (writes in flight fail), drops
  // the tickets and joins the threads.
  void Stop();

  int port() const { return port_; }

  // Holds `value` (its buffer, shared, not copied) for one transfer and
  // returns the ticket that reads it. The write must end by `deadline`.
  // REQUIRES: value is a numeric (not string, resource or variant) tensor.
  StatusOr<std::string> Offer(const Tensor& value, int64_t step_id,
                              std::chrono::steady_clock::time_point deadline);
  // Drops the tickets of `step_id` and breaks its writes in flight (the
  // step was aborted on this task).
  void DropStep(int64_t step_id);

  // For tests: tickets not yet claimed, and open connections.
  int num_tickets() const;
  int num_connections() const;

 private:
  struct Impl;
  explicit BulkSender(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

// Cancels a bulk read from another thread: shuts its socket down, and any
// socket the read uses later. Cancel may come before, during or after the
// read, any number of times.
class BulkCancel {
 public:
  void Cancel();
  bool cancelled() const;

 private:
  friend class BulkConnectionPool;
  bool Attach(int fd);  // false if already cancelled
  void Detach();

  mutable std::mutex mu_;
  int fd_ = -1;
  bool cancelled_ = false;
};

// The receiver's side: connections to one task's bulk listener, kept for
// the next value. Thread-safe; each Read blocks its thread.
class BulkConnectionPool {
 public:
  // `host`: the host the receiver calls the task's gRPC service on.
  // `peer` names the task in errors ("task /job:ps/... at h:p", or "h:p").
  BulkConnectionPool(std::string host, std::string peer);
  ~BulkConnectionPool();  // closes the idle connections

  // Reads the `size` bytes of `ticket` from the listener at `port` into
  // `dst`, which must hold `size` bytes. Reuses an idle connection (once
  // more on a new one if the sender had closed it). Errors name the peer
  // and address: Unavailable (refused connection, closed before all bytes
  // came: the sender died, or it refused the ticket), DataLoss (the sender
  // announced another byte count), DeadlineExceeded (at `deadline`),
  // Cancelled (by `cancel`, which may be null).
  Status Read(int port, const std::string& ticket, int64_t size, char* dst,
              std::chrono::steady_clock::time_point deadline, BulkCancel* cancel);

  int num_idle() const;

 private:
  Status ReadOnce(int fd, const std::string& address, const std::string& ticket, int64_t size,
                  char* dst, std::chrono::steady_clock::time_point deadline, BulkCancel* cancel,
                  bool* nothing_came);
  StatusOr<int> Connect(int port, const std::string& address,
                        std::chrono::steady_clock::time_point deadline, BulkCancel* cancel);

  const std::string host_;
  const std::string peer_;
  mutable std::mutex mu_;
  std::vector<std::pair<int, int>> idle_;  // (port, fd)
};

// Value bytes moved by the side channel since the process started, with no
// copy in user space (for tests and benchmarks; wire_tensor.h's
// GetWireCopyCounts reports them too).
struct BulkCounts {
  int64_t sent = 0;
  int64_t received = 0;
};
BulkCounts GetBulkCounts();

}  // namespace weir
