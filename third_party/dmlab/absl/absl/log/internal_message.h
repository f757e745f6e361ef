// A stand-in for the part of absl/log that DeepMind Lab uses (abseil 20230125 and newer);
// Debian 12's abseil predates it. Not abseil's code: one message type that writes
// "<severity> <file>:<line>] <text>" to stderr when it ends, and stops the process after a
// FATAL (abort) or QFATAL (exit 1) message. INFO messages are dropped: abseil's default
// stderr threshold shows warnings and worse.
#ifndef SEED_DMLAB_ABSL_LOG_INTERNAL_MESSAGE_H_
#define SEED_DMLAB_ABSL_LOG_INTERNAL_MESSAGE_H_

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace absl_log_standin {

enum Severity { kINFO = 0, kWARNING = 1, kERROR = 2, kFATAL = 3, kQFATAL = 4 };

class Message {
 public:
  Message(const char* file, int line, Severity severity) : severity_(severity) {
    static const char* const kNames[] = {"INFO", "WARNING", "ERROR", "FATAL", "FATAL"};
    stream_ << kNames[severity] << ' ' << file << ':' << line << "] ";
  }
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;
  ~Message() {
    if (severity_ >= kWARNING) {
      stream_ << '\n';
      std::cerr << stream_.str() << std::flush;
    }
    if (severity_ == kFATAL) std::abort();
    if (severity_ == kQFATAL) std::_Exit(1);
  }
  std::ostream& stream() { return stream_; }

 private:
  Severity severity_;
  std::ostringstream stream_;
};

// Turns "stream << ..." into a void expression, so that LOG_IF and CHECK can be the false arm
// of a conditional expression.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace absl_log_standin

#define ABSL_STANDIN_LOG(severity) \
  ::absl_log_standin::Message(__FILE__, __LINE__, ::absl_log_standin::k##severity).stream()
#define ABSL_STANDIN_LOG_IF(severity, condition) \
  !(condition) ? (void)0 : ::absl_log_standin::Voidify() & ABSL_STANDIN_LOG(severity)

#endif  // SEED_DMLAB_ABSL_LOG_INTERNAL_MESSAGE_H_
