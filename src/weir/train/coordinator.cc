#include "weir/train/coordinator.h"

#include <condition_variable>
#include <list>
#include <mutex>
#include <thread>
#include <utility>

#include "weir/base/logging.h"

namespace weir {

struct Coordinator::State {
  struct Thread {
    std::string name;
    std::thread thread;
    bool done = false;       // fn returned
    bool abandoned = false;  // a Join gave up on it
  };

  std::mutex mu;
  std::condition_variable cv;  // stop requested, or a thread ended
  bool stop = false;
  Status error;
  std::vector<std::function<void()>> stop_callbacks;
  std::list<Thread> threads;  // a list: each thread marks its own record
  std::chrono::milliseconds grace = std::chrono::seconds(120);

  // REQUIRES: mu held.
  bool AllDone(bool count_abandoned) const {
    for (const Thread& thread : threads) {
      if (!thread.done && (count_abandoned || !thread.abandoned)) return false;
    }
    return true;
  }
  // Removes the ended threads' records, returning their threads to join.
  // REQUIRES: mu held.
  std::vector<std::thread> TakeEnded() {
    std::vector<std::thread> ended;
    for (auto it = threads.begin(); it != threads.end();) {
      if (it->done) {
        ended.push_back(std::move(it->thread));
        it = threads.erase(it);
      } else {
        ++it;
      }
    }
    return ended;
  }
};

namespace {

void JoinAll(std::vector<std::thread>* threads) {
  for (std::thread& thread : *threads) thread.join();
}

std::string Names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "'" : ", '") + name + "'";
  return out;
}

}  // namespace

Coordinator::Coordinator() : state_(std::make_shared<State>()) {}

Coordinator::~Coordinator() {
  RequestStop();
  std::unique_lock<std::mutex> lock(state_->mu);
  // Threads a Join already gave up on are not waited for again.
  state_->cv.wait_for(lock, state_->grace, [this] { return state_->AllDone(false); });
  std::vector<std::thread> ended = state_->TakeEnded();
  std::vector<std::string> running;
  for (State::Thread& thread : state_->threads) {
    running.push_back(thread.name);
    // Its function holds the state alive, so the record outlives this object.
    thread.thread.detach();
  }
  lock.unlock();
  JoinAll(&ended);
  if (!running.empty()) {
    LOG(Warning) << "Coordinator destroyed with " << running.size()
                 << " thread(s) still running, left detached: " << Names(running);
  }
}

void Coordinator::RequestStop() {
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->stop) return;
    state_->stop = true;
    callbacks.swap(state_->stop_callbacks);
    state_->cv.notify_all();
  }
  for (std::function<void()>& callback : callbacks) callback();
}

bool Coordinator::ShouldStop() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->stop;
}

void Coordinator::ReportError(const Status& status) {
  if (status.ok()) return;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    const bool clean_stop =
        errors::IsOutOfRange(status) || (errors::IsCancelled(status) && state_->stop);
    if (!clean_stop) state_->error.Update(status);
  }
  RequestStop();
}

Status Coordinator::error() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->error;
}

bool Coordinator::WaitForStop(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(state_->mu);
  return state_->cv.wait_for(lock, timeout, [this] { return state_->stop; });
}

void Coordinator::CallOnStop(std::function<void()> callback) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->stop) {
      state_->stop_callbacks.push_back(std::move(callback));
      return;
    }
  }
  callback();
}

void Coordinator::StartThread(std::string name, std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->threads.push_back(State::Thread{std::move(name), {}, false, false});
  State::Thread* record = &state_->threads.back();
  // Started under the lock, so the record has its std::thread before the
  // thread can mark it done.
  record->thread = std::thread([state = state_, record, fn = std::move(fn)]() mutable {
    fn();
    fn = nullptr;  // what fn captured is released before the thread counts as ended
    std::lock_guard<std::mutex> lock(state->mu);
    record->done = true;
    state->cv.notify_all();
  });
}

Status Coordinator::Join(std::chrono::milliseconds grace) {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->grace = grace;
  state_->cv.wait(lock, [this] { return state_->stop || state_->AllDone(true); });
  state_->cv.wait_for(lock, grace, [this] { return state_->AllDone(true); });
  std::vector<std::thread> ended = state_->TakeEnded();
  std::vector<std::string> running;
  for (State::Thread& thread : state_->threads) {
    thread.abandoned = true;
    running.push_back(thread.name);
  }
  Status error = state_->error;
  lock.unlock();
  JoinAll(&ended);
  if (!running.empty()) {
    return errors::DeadlineExceeded("Coordinator::Join: ", running.size(),
                                    " thread(s) still running ", grace.count(),
                                    " ms after stop was requested: ", Names(running));
  }
  return error;
}

int Coordinator::num_unjoined_threads() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return static_cast<int>(state_->threads.size());
}

}  // namespace weir
